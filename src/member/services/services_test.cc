// The service controllers against a member's API without a kubelet: the
// tests create pods and set their IPs and readiness themselves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "member/object_util.h"
#include "member/services/endpoints_controller.h"
#include "member/services/endpointslice_controller.h"
#include "member/services/load_balancer.h"
#include "member/test_util.h"
#include "runtime/test_util.h"

namespace flotilla::member {
namespace {

using runtime::testing::Eventually;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

using testing::Parse;

const json::array& Array(const json::object& o, std::string_view path) {
  static const json::array kEmpty;
  const json::value* v = Find(o, path);
  return v != nullptr && v->is_array() ? v->get_array() : kEmpty;
}

// The "ip" (or "addresses[0]") of each element.
std::vector<std::string> Ips(const json::array& items) {
  std::vector<std::string> out;
  for (const json::value& v : items) {
    const json::object& o = v.get_object();
    out.push_back(o.contains("ip") ? StringAt(o, "ip")
                                   : std::string(o.at("addresses").at(0).as_string()));
  }
  return out;
}

TEST(AddressPoolTest, HostAddressesOfACidr) {
  std::optional<AddressPool> pool = AddressPool::Parse("172.18.0.0/24");
  ASSERT_TRUE(pool.has_value());
  EXPECT_EQ(AddressPool::FormatIp(pool->first()), "172.18.0.1");
  EXPECT_EQ(AddressPool::FormatIp(pool->last()), "172.18.0.254");
  EXPECT_TRUE(pool->Contains("172.18.0.7"));
  EXPECT_FALSE(pool->Contains("172.18.1.7"));
  EXPECT_FALSE(pool->Contains("172.18.0.255"));
  std::optional<AddressPool> one = AddressPool::Parse("10.0.0.5/32");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->first(), one->last());
  for (std::string_view bad : {"", "172.18.0.0", "172.18.0.0/33", "172.18.0/24", "1.2.3.256/8",
                               "a.b.c.d/8", "1.2.3.4/x"}) {
    EXPECT_FALSE(AddressPool::Parse(bad).has_value()) << bad;
  }
}

TEST(AddressPoolTest, NthRangeOfTheSameSize) {
  EXPECT_EQ(AddressPool::Nth("172.18.0.0/24", 0), "172.18.0.0/24");
  EXPECT_EQ(AddressPool::Nth("172.18.0.0/24", 2), "172.18.2.0/24");
  EXPECT_EQ(AddressPool::Nth("10.0.0.0/30", 3), "10.0.0.12/30");
  EXPECT_EQ(AddressPool::Nth("255.255.255.0/24", 1), std::nullopt);
  EXPECT_EQ(AddressPool::Nth("bad", 1), std::nullopt);
}

class ServicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.options().lb_cidr = "172.18.0.0/30";  // two addresses: .1 and .2
    env_.Add<LoadBalancerController>();
    env_.Add<EndpointsController>();
    env_.Add<EndpointSliceController>();
    ASSERT_TRUE(env_.Start().ok());
  }

  client::Client& api() { return env_.client(); }

  void CreateService(std::string_view name, std::string_view spec) {
    json::object svc = Parse(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":")" +
                             std::string(name) + R"("},"spec":)" + std::string(spec) + "}");
    StatusOr<json::object> made = api().Create(kServices, "default", svc);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }

  // A pod labelled app=web with container port "http" 8080.
  void CreatePod(std::string_view name, std::string_view extra_spec = "") {
    json::object pod = Parse(R"({"apiVersion":"v1","kind":"Pod",
        "metadata":{"name":")" +
                             std::string(name) + R"(","labels":{"app":"web"}},"spec":{)" +
                             std::string(extra_spec) +
                             R"("containers":[{"name":"c","image":"nginx",
        "ports":[{"name":"http","containerPort":8080}]}]}})");
    StatusOr<json::object> made = api().Create(kPods, "default", pod);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }

  void SetPod(const std::string& name, const std::string& ip, bool ready) {
    StatusOr<json::object> pod = api().Get(kPods, "default", name);
    ASSERT_TRUE(pod.ok());
    (*pod)["status"] = json::object{
        {"phase", "Running"},
        {"podIP", ip},
        {"podIPs", json::array{json::object{{"ip", ip}}}},
        {"conditions",
         json::array{json::object{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}};
    StatusOr<json::object> written = api().UpdateStatus(kPods, "default", *pod);
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }

  std::optional<json::object> Get(const client::ResourceRef& res, const std::string& name) {
    StatusOr<json::object> o = api().Get(res, "default", name);
    if (!o.ok()) return std::nullopt;
    return *o;
  }

  std::string IngressIp(const std::string& service) {
    std::optional<json::object> svc = Get(kServices, service);
    if (!svc) return "";
    const json::array& ingress = Array(*svc, "status.loadBalancer.ingress");
    return ingress.empty() ? "" : StringAt(ingress.at(0).get_object(), "ip");
  }

  std::vector<json::object> Slices(const std::string& service) {
    std::vector<json::object> out;
    client::ListOptions opts;
    opts.label_selector = "kubernetes.io/service-name=" + service;
    StatusOr<client::ObjectList> list = api().List(kEndpointSlices, "default", opts);
    if (list.ok()) out = list->items;
    return out;
  }

  testing::MemberTestEnv env_;
};

// The member's ingress controller: every Ingress gets an address of the
// same pool, never one a Service holds, and gives it back when deleted.
TEST_F(ServicesTest, IngressesGetAddressesOfTheSamePool) {
  CreateService("a", R"({"type":"LoadBalancer","ports":[{"port":80}]})");
  ASSERT_TRUE(Eventually([&] { return !IngressIp("a").empty(); }));
  auto ingress_ip = [&](const std::string& name) -> std::string {
    std::optional<json::object> ing = Get(client::kIngresses, name);
    if (!ing) return "";
    const json::array& ingress = Array(*ing, "status.loadBalancer.ingress");
    return ingress.empty() ? "" : StringAt(ingress.at(0).get_object(), "ip");
  };
  auto create_ingress = [&](const std::string& name) {
    StatusOr<json::object> made = api().Create(
        client::kIngresses, "default",
        Parse(R"({"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":")" +
              name + R"("},"spec":{"rules":[{"host":")" + name + R"(.example.com","http":{"paths":[
              {"path":"/","pathType":"Prefix","backend":{"service":{"name":"web",
              "port":{"number":80}}}}]}}]}})"));
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  };
  create_ingress("shop");
  ASSERT_TRUE(Eventually([&] { return !ingress_ip("shop").empty(); }));
  EXPECT_THAT((std::vector{IngressIp("a"), ingress_ip("shop")}),
              UnorderedElementsAre("172.18.0.1", "172.18.0.2"));
  // The pool is empty: a second Ingress waits for the first to go.
  create_ingress("blog");
  std::string shop_ip = ingress_ip("shop");
  ASSERT_TRUE(api().Delete(client::kIngresses, "default", "shop").ok());
  ASSERT_TRUE(Eventually([&] { return ingress_ip("blog") == shop_ip; }));
}

TEST_F(ServicesTest, LoadBalancersGetUniqueAddressesFromThePoolAndGiveThemBack) {
  CreateService("a", R"({"type":"LoadBalancer","ports":[{"port":80}]})");
  ASSERT_TRUE(Eventually([&] { return !IngressIp("a").empty(); }));
  CreateService("b", R"({"type":"LoadBalancer","ports":[{"port":80}]})");
  ASSERT_TRUE(Eventually([&] { return !IngressIp("b").empty(); }));
  EXPECT_THAT((std::vector{IngressIp("a"), IngressIp("b")}),
              UnorderedElementsAre("172.18.0.1", "172.18.0.2"));
  std::string a_ip = IngressIp("a");

  // The pool is empty: c waits, then gets a's address as soon as a is
  // deleted (no clock moves: the release itself retries c).
  CreateService("c", R"({"type":"LoadBalancer","ports":[{"port":80}]})");
  CreateService("plain", R"({"ports":[{"port":80}]})");
  CreateService("other", R"({"type":"LoadBalancer","loadBalancerClass":"example.com/lb",
      "ports":[{"port":80}]})");
  ASSERT_TRUE(Eventually([&] {
    StatusOr<client::ObjectList> events =
        api().List(client::ResourceRef{"", "v1", "events", true}, "default", {});
    if (!events.ok()) return false;
    for (const json::object& e : events->items) {
      if (StringAt(e, "reason") == "SyncLoadBalancerFailed" &&
          StringAt(e, "involvedObject.name") == "c" && StringAt(e, "type") == "Warning") {
        return true;
      }
    }
    return false;
  }));
  EXPECT_EQ(IngressIp("c"), "");
  EXPECT_EQ(IngressIp("plain"), "");
  EXPECT_EQ(IngressIp("other"), "");
  ASSERT_TRUE(api().Delete(kServices, "default", "a").ok());
  ASSERT_TRUE(Eventually([&] { return IngressIp("c") == a_ip; }));

  // b stops being a LoadBalancer: its ingress is cleared and its address
  // can be given to another.
  StatusOr<json::object> patched = api().Patch(kServices, "default", "b", client::PatchType::kMerge,
                                               R"({"spec":{"type":"ClusterIP"}})");
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  ASSERT_TRUE(Eventually([&] { return IngressIp("b").empty(); }));
  CreateService("d", R"({"type":"LoadBalancer","ports":[{"port":80}]})");
  ASSERT_TRUE(Eventually([&] { return !IngressIp("d").empty(); }));
  EXPECT_NE(IngressIp("d"), IngressIp("c"));
}

TEST_F(ServicesTest, EndpointsFollowPodReadinessWithNamedTargetPorts) {
  CreateService(
      "web",
      R"({"selector":{"app":"web"},"ports":[{"name":"web","port":80,"targetPort":"http"}]})");
  CreatePod("p1");
  CreatePod("p2");
  CreatePod("no-ip");
  SetPod("p1", "10.244.0.11", true);
  SetPod("p2", "10.244.0.12", false);
  ASSERT_TRUE(Eventually([&] {
    std::optional<json::object> ep = Get(kEndpoints, "web");
    return ep && Array(*ep, "subsets").size() == 1 &&
           Array(Array(*ep, "subsets").at(0).get_object(), "notReadyAddresses").size() == 1;
  }));
  std::optional<json::object> web = Get(kEndpoints, "web");
  ASSERT_TRUE(web.has_value());
  ASSERT_FALSE(Array(*web, "subsets").empty());
  json::object subset = Array(*web, "subsets").at(0).get_object();
  EXPECT_THAT(Ips(Array(subset, "addresses")), ElementsAre("10.244.0.11"));
  EXPECT_THAT(Ips(Array(subset, "notReadyAddresses")), ElementsAre("10.244.0.12"));
  const json::object& port = Array(subset, "ports").at(0).get_object();
  EXPECT_EQ(port.at("port"), 8080);
  EXPECT_EQ(StringAt(port, "name"), "web");
  EXPECT_EQ(StringAt(port, "protocol"), "TCP");
  const json::object& address = Array(subset, "addresses").at(0).get_object();
  EXPECT_EQ(StringAt(address, "targetRef.kind"), "Pod");
  EXPECT_EQ(StringAt(address, "targetRef.name"), "p1");

  SetPod("p2", "10.244.0.12", true);
  ASSERT_TRUE(Eventually([&] {
    std::optional<json::object> ep = Get(kEndpoints, "web");
    return ep && !Array(*ep, "subsets").empty() &&
           Array(Array(*ep, "subsets").at(0).get_object(), "addresses").size() == 2;
  }));
  ASSERT_TRUE(api().Delete(kPods, "default", "p1").ok());
  ASSERT_TRUE(Eventually([&] {
    std::optional<json::object> ep = Get(kEndpoints, "web");
    return ep && !Array(*ep, "subsets").empty() &&
           Ips(Array(Array(*ep, "subsets").at(0).get_object(), "addresses")) ==
               std::vector<std::string>{"10.244.0.12"};
  }));
  ASSERT_TRUE(api().Delete(kPods, "default", "p2").ok());
  ASSERT_TRUE(Eventually([&] {
    std::optional<json::object> ep = Get(kEndpoints, "web");
    return ep && Array(*ep, "subsets").empty();
  }));
  ASSERT_TRUE(api().Delete(kServices, "default", "web").ok());
  ASSERT_TRUE(Eventually([&] { return !Get(kEndpoints, "web").has_value(); }));
}

TEST_F(ServicesTest, EndpointSlicesFollowPodReadiness) {
  StatusOr<json::object> node =
      api().Create(kNodes, "", Parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1",
          "labels":{"topology.kubernetes.io/zone":"zone-a"}}})"));
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  CreateService("web", R"({"selector":{"app":"web"},"ports":[{"port":80,"targetPort":"http"}]})");
  ASSERT_TRUE(Eventually([&] { return Slices("web").size() == 1; }));
  json::object placeholder = Slices("web").at(0);
  EXPECT_TRUE(Array(placeholder, "endpoints").empty());
  EXPECT_THAT(StringAt(placeholder, "metadata.name"), ::testing::StartsWith("web-"));
  EXPECT_EQ(StringAt(placeholder, "metadata.name").size(), 9u);

  CreatePod("p1", R"("nodeName":"n1",)");
  SetPod("p1", "10.244.0.21", false);
  // The zone comes from the node as the controller's cache has it: a slice
  // written before that cache saw n1 gets it once it does.
  ASSERT_TRUE(Eventually([&] {
    std::vector<json::object> s = Slices("web");
    return s.size() == 1 && Array(s[0], "endpoints").size() == 1 &&
           StringAt(Array(s[0], "endpoints").at(0).get_object(), "zone") == "zone-a";
  }));
  json::object slice = Slices("web").at(0);
  EXPECT_EQ(StringAt(slice, "addressType"), "IPv4");
  const json::object& labels = Find(slice, "metadata.labels")->get_object();
  EXPECT_EQ(labels.at("endpointslice.kubernetes.io/managed-by"), "endpointslice-controller.k8s.io");
  EXPECT_EQ(
      StringAt(Find(slice, "metadata.ownerReferences")->get_array().at(0).get_object(), "kind"),
      "Service");
  const json::object& port = Array(slice, "ports").at(0).get_object();
  EXPECT_EQ(port.at("port"), 8080);
  EXPECT_EQ(StringAt(port, "name"), "");
  json::object endpoint = Array(slice, "endpoints").at(0).get_object();
  EXPECT_THAT(Ips(Array(slice, "endpoints")), ElementsAre("10.244.0.21"));
  EXPECT_EQ(Find(endpoint, "conditions.ready")->as_bool(), false);
  EXPECT_EQ(Find(endpoint, "conditions.serving")->as_bool(), false);
  EXPECT_EQ(Find(endpoint, "conditions.terminating")->as_bool(), false);
  EXPECT_EQ(StringAt(endpoint, "nodeName"), "n1");
  EXPECT_EQ(StringAt(endpoint, "zone"), "zone-a");
  EXPECT_EQ(StringAt(endpoint, "targetRef.name"), "p1");

  SetPod("p1", "10.244.0.21", true);
  ASSERT_TRUE(Eventually([&] {
    std::vector<json::object> s = Slices("web");
    if (s.size() != 1 || Array(s[0], "endpoints").size() != 1) return false;
    const json::value* ready =
        Find(Array(s[0], "endpoints").at(0).get_object(), "conditions.ready");
    return ready != nullptr && ready->as_bool();
  }));
  ASSERT_TRUE(api().Delete(kServices, "default", "web").ok());
  ASSERT_TRUE(Eventually([&] { return Slices("web").empty(); }));
}

// A bound pod being deleted stays (no kubelet here) with a
// deletionTimestamp: Endpoints drop it, EndpointSlices keep it as
// terminating and still serving.
TEST_F(ServicesTest, TerminatingPodsLeaveEndpointsAndStayInSlicesAsTerminating) {
  CreateService("web", R"({"selector":{"app":"web"},"ports":[{"port":80,"targetPort":8080}]})");
  CreatePod("p1", R"("nodeName":"n1",)");
  CreatePod("p2");
  SetPod("p1", "10.244.0.41", true);
  SetPod("p2", "10.244.0.42", true);
  ASSERT_TRUE(Eventually([&] {
    std::optional<json::object> ep = Get(kEndpoints, "web");
    return ep && !Array(*ep, "subsets").empty() &&
           Array(Array(*ep, "subsets").at(0).get_object(), "addresses").size() == 2;
  }));
  ASSERT_TRUE(api().Delete(kPods, "default", "p1").ok());
  std::optional<json::object> p1 = Get(kPods, "p1");
  ASSERT_TRUE(p1.has_value());
  ASSERT_FALSE(StringAt(*p1, "metadata.deletionTimestamp").empty());
  ASSERT_TRUE(Eventually([&] {
    std::optional<json::object> ep = Get(kEndpoints, "web");
    return ep && !Array(*ep, "subsets").empty() &&
           Ips(Array(Array(*ep, "subsets").at(0).get_object(), "addresses")) ==
               std::vector<std::string>{"10.244.0.42"};
  }));
  ASSERT_TRUE(Eventually([&] {
    std::vector<json::object> slices = Slices("web");
    if (slices.size() != 1) return false;
    for (const json::value& e : Array(slices[0], "endpoints")) {
      const json::object& endpoint = e.get_object();
      if (StringAt(endpoint, "targetRef.name") != "p1") continue;
      return !Find(endpoint, "conditions.ready")->as_bool() &&
             Find(endpoint, "conditions.serving")->as_bool() &&
             Find(endpoint, "conditions.terminating")->as_bool();
    }
    return false;
  }));
}

TEST_F(ServicesTest, HeadlessServicePublishesStatefulPodHostnames) {
  CreateService(
      "nginx",
      R"({"clusterIP":"None","selector":{"app":"web"},"ports":[{"name":"web","port":80}]})");
  std::optional<json::object> svc = Get(kServices, "nginx");
  ASSERT_TRUE(svc.has_value());
  EXPECT_EQ(StringAt(*svc, "spec.clusterIP"), "None");
  CreatePod("web-0", R"("hostname":"web-0","subdomain":"nginx",)");
  SetPod("web-0", "10.244.0.31", true);
  ASSERT_TRUE(Eventually([&] {
    std::optional<json::object> ep = Get(kEndpoints, "nginx");
    return ep && !Array(*ep, "subsets").empty();
  }));
  std::optional<json::object> got = Get(kEndpoints, "nginx");
  ASSERT_TRUE(got.has_value());
  json::object ep = *got;
  const json::object& address =
      Array(Array(ep, "subsets").at(0).get_object(), "addresses").at(0).get_object();
  EXPECT_EQ(StringAt(address, "hostname"), "web-0");
  EXPECT_EQ(StringAt(address, "ip"), "10.244.0.31");
  EXPECT_TRUE(Find(ep, "metadata.labels")->as_object().contains("service.kubernetes.io/headless"));
  ASSERT_TRUE(Eventually([&] {
    std::vector<json::object> s = Slices("nginx");
    return s.size() == 1 && Array(s[0], "endpoints").size() == 1;
  }));
  EXPECT_EQ(StringAt(Array(Slices("nginx")[0], "endpoints").at(0).get_object(), "hostname"),
            "web-0");
  EXPECT_EQ(IngressIp("nginx"), "");
}

TEST_F(ServicesTest, ServicesWithoutSelectorAreLeftAlone) {
  CreateService("external", R"({"ports":[{"port":5432}]})");
  json::object manual = Parse(R"({"apiVersion":"v1","kind":"Endpoints",
      "metadata":{"name":"external"},
      "subsets":[{"addresses":[{"ip":"192.0.2.10"}],"ports":[{"port":5432}]}]})");
  ASSERT_TRUE(api().Create(kEndpoints, "default", manual).ok());
  // A selected service next to it shows that the controllers ran.
  CreateService("web", R"({"selector":{"app":"web"},"ports":[{"port":80}]})");
  ASSERT_TRUE(Eventually([&] { return Get(kEndpoints, "web").has_value(); }));
  ASSERT_TRUE(Eventually([&] { return Slices("web").size() == 1; }));
  std::optional<json::object> ep = Get(kEndpoints, "external");
  ASSERT_TRUE(ep.has_value());
  EXPECT_THAT(Ips(Array(Array(*ep, "subsets").at(0).get_object(), "addresses")),
              ElementsAre("192.0.2.10"));
  EXPECT_TRUE(Slices("external").empty());
}

}  // namespace
}  // namespace flotilla::member
