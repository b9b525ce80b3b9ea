// The sync controller against real API servers: a federation and two
// members started in-process on port 0, reached through in-process clients.
// The test reports which members are ready (no cluster controller); the
// controllers' time (retry backoff, rechecks) moves on a FakeClock.
#include "federation/sync/sync_controller.h"

#include <gtest/gtest.h>

#include "api/annotations.h"
#include "api/conditions.h"
#include "api/federated.h"
#include "api/views.h"
#include "client/client_test_util.h"
#include "client/resources.h"
#include "federation/cluster/cluster_controller.h"
#include "federation/cluster/test_util.h"
#include "federation/common/member_copy.h"
#include "federation/common/test_util.h"
#include "federation/sync/interpreted.h"
#include "runtime/test_util.h"

namespace flotilla::federation::sync {
namespace {

using client::kResourceQuotas;
using client::testing::TestCluster;
using cluster::testing::MemberServer;

const client::ResourceRef kNamespaces{"", "v1", "namespaces", false};
const client::ResourceRef kConfigMaps{"", "v1", "configmaps", true};
const client::ResourceRef kSecrets{"", "v1", "secrets", true};
const client::ResourceRef kEvents{"", "v1", "events", true};
const client::ResourceRef kRoles{"rbac.authorization.k8s.io", "v1", "roles", true};
const client::ResourceRef kRoleBindings{"rbac.authorization.k8s.io", "v1", "rolebindings", true};
const client::ResourceRef kServiceAccounts{"", "v1", "serviceaccounts", true};

json::object Obj(std::string_view text) {
  StatusOr<json::object> o = ParseJsonObject(text);
  EXPECT_TRUE(o.ok()) << text;
  return o.ok() ? *o : json::object();
}

json::object ConfigMap(const std::string& ns, const std::string& name, const std::string& value,
                       const std::string& selector = "") {
  json::object cm = Obj(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{}})");
  json::object& meta = cm["metadata"].as_object();
  meta["name"] = name;
  meta["namespace"] = ns;
  if (!selector.empty()) meta["annotations"] = {{api::kClusterSelectorAnnotation, selector}};
  cm["data"] = {{"key", value}};
  return cm;
}

// A customization of the tests' Workload kind (apps.example.com/v1): its
// replicas divided by spec.replicas, and `operation` (a customizations
// entry, e.g. "statusAggregation") with `script`.
json::object WorkloadCustomization(const std::string& operation, const std::string& script) {
  json::object c = Obj(R"({"apiVersion":"config.karmada.io/v1alpha1",
      "kind":"ResourceInterpreterCustomization","metadata":{"name":"workloads"},
      "spec":{"target":{"apiVersion":"apps.example.com/v1","kind":"Workload"},
        "customizations":{
          "replicaResource":{"luaScript":
            "function GetReplicas(obj) return obj.spec.replicas, nil end"},
          "replicaRevision":{"luaScript":
            "function ReviseReplica(obj, n) obj.spec.replicas = n return obj end"}}}})");
  c["spec"].as_object()["customizations"].as_object()[operation] =
      json::object{{"luaScript", script}};
  return c;
}

class SyncControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fed_ = fed_server_.InProcess();
    AddCluster("m1", R"({"region":"eu","tier":"3"})");
    AddCluster("m2", R"({"region":"us","tier":"1"})");
    m1_ = m1_server_.InProcess();
    m2_ = m2_server_.InProcess();
    ASSERT_TRUE(fed_->Create(kNamespaces, "", Obj(R"({"metadata":{"name":"shop"}})")).ok());
    ctx_ = std::make_unique<FederationContext>(*fed_, clock_);
    controller_ = std::make_unique<SyncController>(*ctx_);
    ASSERT_TRUE(ctx_->Start().ok());
    SetReady("m1");
    SetReady("m2");
  }
  void TearDown() override { ctx_->Stop(); }

  void AddCluster(const std::string& name, const std::string& labels) {
    json::object c = Obj(R"({"apiVersion":"federation/v1beta1","kind":"Cluster","metadata":{},
        "spec":{"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0",
                "serverAddress":"https://127.0.0.1:1"}],"secretRef":{"name":"x"}}})");
    c["metadata"].as_object()["name"] = name;
    c["metadata"].as_object()["labels"] = json::parse(labels);
    ASSERT_TRUE(fed_->Create(kClusters, "", c).ok());
  }
  void SetReady(const std::string& name) {
    ctx_->clusters().SetReady(name, name == "m1"
                                        ? std::shared_ptr<client::Client>(m1_server_.InProcess())
                                        : std::shared_ptr<client::Client>(m2_server_.InProcess()));
  }
  // Waits for `done`, moving the fake time on so that retries come due.
  bool Eventually(const std::function<bool()>& done) {
    return runtime::testing::Eventually([&] {
      if (done()) return true;
      clock_.Advance(std::chrono::milliseconds(100));
      return false;
    });
  }
  std::optional<json::object> Get(client::Client& c, const client::ResourceRef& r,
                                  const std::string& ns, const std::string& name) {
    StatusOr<json::object> o = c.Get(r, ns, name);
    if (o.ok()) return *o;
    return std::nullopt;
  }
  // The value of data.key of the ConfigMap; "" when there is none.
  std::string Data(client::Client& c, const std::string& ns, const std::string& name) {
    auto cm = Get(c, kConfigMaps, ns, name);
    return cm ? StringAt(*cm, "data.key") : "";
  }
  bool Gone(client::Client& c, const client::ResourceRef& r, const std::string& ns,
            const std::string& name) {
    return !Get(c, r, ns, name).has_value();
  }
  // Reasons of the events about the federated object `name`.
  std::vector<std::string> EventReasons(const std::string& ns, const std::string& name) {
    std::vector<std::string> reasons;
    StatusOr<client::ObjectList> events = fed_->List(kEvents, ns, {});
    if (!events.ok()) return reasons;
    for (const json::object& e : events->items) {
      if (StringAt(e, "involvedObject.name") == name) reasons.push_back(StringAt(e, "reason"));
    }
    return reasons;
  }
  // Creates the CustomResourceDefinition of a namespaced kind (a status
  // subresource, any fields) on the federation and waits until the
  // federation and both members serve it.
  void EstablishKind(const std::string& group, const std::string& plural, const std::string& kind) {
    json::object crd = Obj(R"({"apiVersion":"apiextensions.k8s.io/v1",
        "kind":"CustomResourceDefinition","metadata":{},
        "spec":{"scope":"Namespaced","names":{},
                "versions":[{"name":"v1","served":true,"storage":true,
                             "subresources":{"status":{}},
                             "schema":{"openAPIV3Schema":{"type":"object",
                               "x-kubernetes-preserve-unknown-fields":true}}}]}})");
    const std::string name = plural + "." + group;
    crd["metadata"].as_object()["name"] = name;
    json::object& spec = crd["spec"].as_object();
    spec["group"] = group;
    std::string singular = kind;
    for (char& ch : singular) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    spec["names"] = json::object{{"plural", plural}, {"singular", singular}, {"kind", kind}};
    ASSERT_TRUE(fed_->Create(client::kCustomResourceDefinitions, "", crd).ok());
    for (client::Client* m : {fed_.get(), m1_.get(), m2_.get()}) {
      ASSERT_TRUE(Eventually([&] {
        auto c = Get(*m, client::kCustomResourceDefinitions, "", name);
        return c && api::ConditionTrue(*c, "Established");
      }));
    }
  }
  bool HasEvent(const std::string& ns, const std::string& name, const std::string& reason) {
    std::vector<std::string> r = EventReasons(ns, name);
    return std::find(r.begin(), r.end(), reason) != r.end();
  }

  FakeClock clock_;
  TestCluster fed_server_;
  MemberServer m1_server_;
  MemberServer m2_server_;
  std::unique_ptr<client::Client> fed_, m1_, m2_;
  // Successful writes to members, as the fan-out counts them.
  double Writes(const std::string& cluster, const std::string& resource, const std::string& op) {
    return ctx_->metrics()
        .Counter("flotilla_federation_member_requests_total", "", {})
        .Value({cluster, resource, op, "ok"});
  }

  std::unique_ptr<FederationContext> ctx_;
  std::unique_ptr<SyncController> controller_;
};

TEST_F(SyncControllerTest, PropagatesEachKindToEveryReadyCluster) {
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop", ConfigMap("shop", "cfg", "v1")).ok());
  ASSERT_TRUE(fed_->Create(kSecrets, "shop", Obj(R"({"metadata":{"name":"pw","namespace":"shop"},
                                   "type":"Opaque","data":{"p":"cw=="}})"))
                  .ok());
  ASSERT_TRUE(fed_->Create(kServices, "shop", Obj(R"({"metadata":{"name":"web","namespace":"shop"},
                                   "spec":{"selector":{"app":"web"},"ports":[{"port":80}]}})"))
                  .ok());
  for (client::Client* m : {m1_.get(), m2_.get()}) {
    ASSERT_TRUE(Eventually([&] { return Data(*m, "shop", "cfg") == "v1"; }));
    ASSERT_TRUE(Eventually([&] { return Get(*m, kSecrets, "shop", "pw").has_value(); }));
    ASSERT_TRUE(Eventually([&] { return Get(*m, kServices, "shop", "web").has_value(); }));
    json::object ns = *Get(*m, kNamespaces, "", "shop");
    EXPECT_EQ(Find(ns, "metadata.annotations")->as_object().at(api::kFederatedObjectAnnotation),
              "shop");
    const json::object& labels = Find(ns, "metadata.labels")->as_object();
    EXPECT_EQ(labels.at(api::kManagedByLabel), api::kManagedByValue);
    json::object cm = *Get(*m, kConfigMaps, "shop", "cfg");
    EXPECT_EQ(Find(cm, "metadata.annotations")->as_object().at(api::kFederatedObjectAnnotation),
              "shop/cfg");
    json::object secret = *Get(*m, kSecrets, "shop", "pw");
    EXPECT_EQ(StringAt(secret, "data.p"), "cw==");
    json::object svc = *Get(*m, kServices, "shop", "web");
    EXPECT_FALSE(StringAt(svc, "spec.clusterIP").empty());  // the member allocated one
  }
  json::object fed_cm = *Get(*fed_, kConfigMaps, "shop", "cfg");
  EXPECT_EQ(Find(fed_cm, "metadata.finalizers")->as_array(),
            json::array{api::kDeleteFromUnderlyingClustersFinalizer});
  ASSERT_TRUE(Eventually([&] { return HasEvent("shop", "cfg", "CreateInCluster"); }));
  // Counted when the create returns to the federation, after the member
  // has the copy.
  ASSERT_TRUE(Eventually([&] {
    return Writes("m1", "configmaps", "create") == 1 && Writes("m2", "configmaps", "create") == 1;
  }));
  // What the members default or allocate does not count as a difference.
  for (const char* cluster : {"m1", "m2"}) {
    for (const char* resource : {"namespaces", "configmaps", "secrets", "services"}) {
      EXPECT_EQ(Writes(cluster, resource, "update"), 0) << resource;
    }
  }
  EXPECT_NE(
      ctx_->metrics().Render().find(
          R"(flotilla_federation_member_requests_total{cluster="m2",resource="configmaps",operation="create",result="ok"} 1)"),
      std::string::npos);
}

// A namespace's rules go to every cluster as they are; the members default
// them as the federation did, so the copies are never rewritten.
TEST_F(SyncControllerTest, NetworkPoliciesAndLimitRangesReachEveryCluster) {
  const client::ResourceRef policies{"networking.k8s.io", "v1", "networkpolicies", true};
  const client::ResourceRef limits{"", "v1", "limitranges", true};
  ASSERT_TRUE(fed_->Create(policies, "shop", Obj(R"({"metadata":{"name":"db-in","namespace":"shop"},
      "spec":{"podSelector":{"matchLabels":{"app":"db"}},
              "ingress":[{"from":[{"podSelector":{"matchLabels":{"app":"web"}}}],
                          "ports":[{"port":5432}]}]}})"))
                  .ok());
  ASSERT_TRUE(
      fed_->Create(limits, "shop", Obj(R"({"metadata":{"name":"defaults","namespace":"shop"},
      "spec":{"limits":[{"type":"Container","max":{"cpu":"2"}}]}})"))
          .ok());
  for (client::Client* m : {m1_.get(), m2_.get()}) {
    ASSERT_TRUE(Eventually([&] { return Get(*m, policies, "shop", "db-in").has_value(); }));
    ASSERT_TRUE(Eventually([&] { return Get(*m, limits, "shop", "defaults").has_value(); }));
    json::object np = *Get(*m, policies, "shop", "db-in");
    EXPECT_EQ(json::serialize(*Find(np, "spec.policyTypes")), R"(["Ingress"])");
    json::object lr = *Get(*m, limits, "shop", "defaults");
    EXPECT_EQ(json::serialize(Find(lr, "spec.limits")->as_array()[0].as_object().at("default")),
              R"({"cpu":"2"})");
  }
  for (const char* cluster : {"m1", "m2"}) {
    for (const char* resource : {"networkpolicies", "limitranges"}) {
      EXPECT_EQ(Writes(cluster, resource, "update"), 0) << resource;
    }
  }
  // A copy deleted by hand comes back.
  ASSERT_TRUE(m1_->Delete(policies, "shop", "db-in").ok());
  ASSERT_TRUE(Eventually([&] { return Get(*m1_, policies, "shop", "db-in").has_value(); }));
}

// A namespace's ResourceQuota goes to every cluster, each member enforces
// its copy, and the federation's status sums their limits and use.
TEST_F(SyncControllerTest, AResourceQuotaReachesEveryClusterAndItsUsageIsSummed) {
  ASSERT_TRUE(
      fed_->Create(kResourceQuotas, "shop", Obj(R"({"metadata":{"name":"team","namespace":"shop"},
      "spec":{"hard":{"pods":"10","requests.cpu":"4"}}})"))
          .ok());
  // Each member's quota controller reports its usage.
  auto report = [&](client::Client& m, const std::string& pods, const std::string& cpu) {
    ASSERT_TRUE(Eventually([&] {
      std::optional<json::object> quota = Get(m, kResourceQuotas, "shop", "team");
      if (!quota) return false;
      (*quota)["status"] =
          json::object{{"hard", *Find(*quota, "spec.hard")},
                       {"used", json::object{{"pods", pods}, {"requests.cpu", cpu}}}};
      return m.UpdateStatus(kResourceQuotas, "shop", *quota).ok();
    }));
  };
  report(*m1_, "3", "1500m");
  report(*m2_, "2", "500m");
  ASSERT_TRUE(Eventually([&] {
    std::optional<json::object> quota = Get(*fed_, kResourceQuotas, "shop", "team");
    const json::value* used = quota ? Find(*quota, "status.used") : nullptr;
    return used != nullptr && json::serialize(*used) == R"({"pods":"5","requests.cpu":"2"})";
  }));
  std::optional<json::object> quota = Get(*fed_, kResourceQuotas, "shop", "team");
  EXPECT_EQ(json::serialize(*Find(*quota, "status.hard")), R"({"pods":"20","requests.cpu":"8"})");
}

// A federated Service shows the load-balancer ingress its copies got; one
// with federation.kubernetes.io/cluster goes to that cluster only.
TEST_F(SyncControllerTest, AServiceShowsItsCopiesIngressAndMayNameItsOneCluster) {
  ASSERT_TRUE(fed_->Create(kServices, "shop", Obj(R"({"metadata":{"name":"lb","namespace":"shop"},
      "spec":{"type":"LoadBalancer","selector":{"app":"web"},"ports":[{"port":80}]}})"))
                  .ok());
  ASSERT_TRUE(fed_->Create(kServices, "shop", Obj(R"({"metadata":{"name":"one","namespace":"shop",
      "annotations":{"federation.kubernetes.io/cluster":"m2"}},
      "spec":{"type":"LoadBalancer","selector":{"app":"web"},"ports":[{"port":80}]}})"))
                  .ok());
  auto give_ingress = [&](client::Client& m, const std::string& name, const std::string& ip) {
    return Eventually([&] {
      auto svc = Get(m, kServices, "shop", name);
      if (!svc) return false;
      (*svc)["status"] = Obj(R"({"loadBalancer":{"ingress":[{"ip":"IP"}]}})");
      (*svc)["status"]
          .as_object()["loadBalancer"]
          .as_object()["ingress"]
          .as_array()[0]
          .as_object()["ip"] = ip;
      return m.UpdateStatus(kServices, "shop", *svc).ok();
    });
  };
  ASSERT_TRUE(give_ingress(*m1_, "lb", "172.18.0.5"));
  ASSERT_TRUE(give_ingress(*m2_, "lb", "172.18.1.5"));
  ASSERT_TRUE(Eventually([&] {
    auto svc = Get(*fed_, kServices, "shop", "lb");
    const json::value* in = svc ? Find(*svc, "status.loadBalancer.ingress") : nullptr;
    return in != nullptr && *in == json::parse(R"([{"ip":"172.18.0.5"},{"ip":"172.18.1.5"}])");
  }));
  ASSERT_TRUE(give_ingress(*m2_, "one", "172.18.1.6"));
  ASSERT_TRUE(Eventually([&] {
    auto svc = Get(*fed_, kServices, "shop", "one");
    const json::value* in = svc ? Find(*svc, "status.loadBalancer.ingress") : nullptr;
    return in != nullptr && *in == json::parse(R"([{"ip":"172.18.1.6"}])");
  }));
  EXPECT_TRUE(Gone(*m1_, kServices, "shop", "one"));
}

TEST_F(SyncControllerTest, UpdatesAndRestoresCopiesEditedOrDeletedByHand) {
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop", ConfigMap("shop", "cfg", "v1")).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m1_, "shop", "cfg") == "v1"; }));
  json::object cm = *Get(*fed_, kConfigMaps, "shop", "cfg");
  cm["data"] = {{"key", "v2"}};
  ASSERT_TRUE(fed_->Update(kConfigMaps, "shop", cm).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m1_, "shop", "cfg") == "v2"; }));
  ASSERT_TRUE(Eventually([&] { return Data(*m2_, "shop", "cfg") == "v2"; }));

  json::object copy = *Get(*m1_, kConfigMaps, "shop", "cfg");
  copy["data"] = {{"key", "by hand"}};
  ASSERT_TRUE(m1_->Update(kConfigMaps, "shop", copy).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m1_, "shop", "cfg") == "v2"; }));

  ASSERT_TRUE(m2_->Delete(kConfigMaps, "shop", "cfg").ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m2_, "shop", "cfg") == "v2"; }));
  EXPECT_TRUE(Eventually([&] { return HasEvent("shop", "cfg", "UpdateInCluster"); }));
}

TEST_F(SyncControllerTest, ClusterSelectorPlacesAndMovesCopies) {
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop",
                           ConfigMap("shop", "eu-only", "x",
                                     R"([{"key":"region","operator":"In","values":["eu"]}])"))
                  .ok());
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop",
                           ConfigMap("shop", "big", "x",
                                     R"([{"key":"tier","operator":"Gt","values":["2"]}])"))
                  .ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m1_, "shop", "eu-only") == "x"; }));
  ASSERT_TRUE(Eventually([&] { return Data(*m1_, "shop", "big") == "x"; }));
  // m2 has the namespace (admitted everywhere) but none of the two.
  ASSERT_TRUE(Eventually([&] { return Get(*m2_, kNamespaces, "", "shop").has_value(); }));
  EXPECT_TRUE(Gone(*m2_, kConfigMaps, "shop", "eu-only"));
  EXPECT_TRUE(Gone(*m2_, kConfigMaps, "shop", "big"));

  json::object cm = *Get(*fed_, kConfigMaps, "shop", "eu-only");
  cm["metadata"].as_object()["annotations"].as_object()[api::kClusterSelectorAnnotation] =
      R"([{"key":"region","operator":"NotIn","values":["eu"]}])";
  ASSERT_TRUE(fed_->Update(kConfigMaps, "shop", cm).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m2_, "shop", "eu-only") == "x"; }));
  ASSERT_TRUE(Eventually([&] { return Gone(*m1_, kConfigMaps, "shop", "eu-only"); }));

  // Relabelling a Cluster moves copies too.
  json::object m2 = *Get(*fed_, kClusters, "", "m2");
  m2["metadata"].as_object()["labels"].as_object()["tier"] = "5";
  ASSERT_TRUE(fed_->Update(kClusters, "", m2).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m2_, "shop", "big") == "x"; }));
}

TEST_F(SyncControllerTest, LeavesUnmanagedObjectsAloneAndSaysSo) {
  ASSERT_TRUE(m1_->Create(kNamespaces, "", Obj(R"({"metadata":{"name":"mine"}})")).ok());
  ASSERT_TRUE(m1_->Create(kConfigMaps, "mine", ConfigMap("mine", "cfg", "theirs")).ok());
  ASSERT_TRUE(fed_->Create(kNamespaces, "", Obj(R"({"metadata":{"name":"mine"}})")).ok());
  ASSERT_TRUE(fed_->Create(kConfigMaps, "mine", ConfigMap("mine", "cfg", "ours")).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m2_, "mine", "cfg") == "ours"; }));
  ASSERT_TRUE(Eventually([&] { return HasEvent("mine", "cfg", "NotManagedInCluster"); }));
  EXPECT_EQ(Data(*m1_, "mine", "cfg"), "theirs");
  // The namespace that already existed is left alone quietly.
  json::object ns = *Get(*m1_, kNamespaces, "", "mine");
  EXPECT_FALSE(IsManaged(ns));
  EXPECT_FALSE(HasEvent("", "mine", "NotManagedInCluster"));
  EXPECT_FALSE(HasEvent("default", "mine", "NotManagedInCluster"));

  // Deleting the federated object (Background) keeps the unmanaged one.
  ASSERT_TRUE(fed_->Delete(kConfigMaps, "mine", "cfg", {.propagation_policy = "Background"}).ok());
  ASSERT_TRUE(Eventually([&] { return Gone(*fed_, kConfigMaps, "mine", "cfg"); }));
  EXPECT_TRUE(Eventually([&] { return Gone(*m2_, kConfigMaps, "mine", "cfg"); }));
  EXPECT_EQ(Data(*m1_, "mine", "cfg"), "theirs");
}

TEST_F(SyncControllerTest, DeletionFollowsThePropagationPolicy) {
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop", ConfigMap("shop", "bg", "x")).ok());
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop", ConfigMap("shop", "fg", "x")).ok());
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop", ConfigMap("shop", "none", "x")).ok());
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop", ConfigMap("shop", "orphan", "x")).ok());
  for (const char* name : {"bg", "fg", "none", "orphan"}) {
    // In both members before the deletes: a copy the federation has not
    // made yet would never come for the orphaned ones.
    for (client::Client* m : {m1_.get(), m2_.get()}) {
      ASSERT_TRUE(Eventually([&] { return Data(*m, "shop", name) == "x"; })) << name;
    }
    ASSERT_TRUE(Eventually([&] {
      auto cm = Get(*fed_, kConfigMaps, "shop", name);
      return cm && Find(*cm, "metadata.finalizers") != nullptr;
    }));
  }
  ASSERT_TRUE(fed_->Delete(kConfigMaps, "shop", "bg", {.propagation_policy = "Background"}).ok());
  ASSERT_TRUE(fed_->Delete(kConfigMaps, "shop", "fg", {.propagation_policy = "Foreground"}).ok());
  ASSERT_TRUE(fed_->Delete(kConfigMaps, "shop", "none").ok());
  ASSERT_TRUE(fed_->Delete(kConfigMaps, "shop", "orphan", {.propagation_policy = "Orphan"}).ok());
  for (const char* name : {"bg", "fg", "none", "orphan"}) {
    ASSERT_TRUE(Eventually([&] { return Gone(*fed_, kConfigMaps, "shop", name); })) << name;
  }
  for (client::Client* m : {m1_.get(), m2_.get()}) {
    EXPECT_TRUE(Eventually([&] { return Gone(*m, kConfigMaps, "shop", "bg"); }));
    EXPECT_TRUE(Eventually([&] { return Gone(*m, kConfigMaps, "shop", "fg"); }));
    EXPECT_EQ(Data(*m, "shop", "none"), "x");
    EXPECT_EQ(Data(*m, "shop", "orphan"), "x");
  }
  // Events are written in the background.
  EXPECT_TRUE(Eventually([&] { return HasEvent("shop", "bg", "DeleteInCluster"); }));
}

TEST_F(SyncControllerTest, ANamespaceDeletedInBackgroundTakesItsCopiesAlong) {
  ASSERT_TRUE(fed_->Create(kNamespaces, "", Obj(R"({"metadata":{"name":"tmp"}})")).ok());
  ASSERT_TRUE(fed_->Create(kConfigMaps, "tmp", ConfigMap("tmp", "cfg", "x")).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m1_, "tmp", "cfg") == "x"; }));
  ASSERT_TRUE(Eventually([&] {
    auto ns = Get(*fed_, kNamespaces, "", "tmp");
    return ns && Find(*ns, "metadata.finalizers") != nullptr;
  }));
  ASSERT_TRUE(fed_->Delete(kNamespaces, "", "tmp", {.propagation_policy = "Background"}).ok());
  ASSERT_TRUE(Eventually([&] { return Gone(*fed_, kNamespaces, "", "tmp"); }));
  // The members' namespaces finish terminating on their own.
  EXPECT_TRUE(Eventually([&] { return Gone(*m1_, kNamespaces, "", "tmp"); }));
  EXPECT_TRUE(Eventually([&] { return Gone(*m2_, kConfigMaps, "tmp", "cfg"); }));
}

TEST_F(SyncControllerTest, AClusterThatBecomesReadyGetsWhatItLacks) {
  ctx_->clusters().SetNotReady("m2");
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop", ConfigMap("shop", "cfg", "v1")).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m1_, "shop", "cfg") == "v1"; }));
  EXPECT_TRUE(Gone(*m2_, kConfigMaps, "shop", "cfg"));
  SetReady("m2");
  ASSERT_TRUE(Eventually([&] { return Data(*m2_, "shop", "cfg") == "v1"; }));
}

// With no member to write to, an object is left as it was: no finalizer
// (no second write per object); it comes with the first copy.
TEST_F(SyncControllerTest, TheFinalizerComesWithTheFirstCopy) {
  ctx_->clusters().SetNotReady("m1");
  ctx_->clusters().SetNotReady("m2");
  runtime::Controller* sync = ctx_->manager().Find("sync-configmaps");
  ASSERT_NE(sync, nullptr);
  uint64_t before = sync->Metrics().reconciles;
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop", ConfigMap("shop", "cfg", "v1")).ok());
  ASSERT_TRUE(Eventually([&] { return sync->Metrics().reconciles > before; }));
  EXPECT_EQ(Find(*Get(*fed_, kConfigMaps, "shop", "cfg"), "metadata.finalizers"), nullptr);
  SetReady("m1");
  ASSERT_TRUE(Eventually([&] { return Data(*m1_, "shop", "cfg") == "v1"; }));
  EXPECT_EQ(Find(*Get(*fed_, kConfigMaps, "shop", "cfg"), "metadata.finalizers")->as_array(),
            json::array{api::kDeleteFromUnderlyingClustersFinalizer});
}

// An object written before the controllers ran (nothing put the finalizer
// on at its create) and placed by a policy gets the finalizer and the
// policy's annotation in one write, not one write each.
TEST_F(SyncControllerTest, TheFinalizerAndThePolicyComeInOneWrite) {
  ASSERT_TRUE(fed_->Create(kClusterPropagationPolicies, "", Obj(R"({
      "apiVersion":"policy.karmada.io/v1alpha1","kind":"ClusterPropagationPolicy",
      "metadata":{"name":"to-m1"},
      "spec":{"resourceSelectors":[{"apiVersion":"v1","kind":"ConfigMap","name":"cfg"}],
              "placement":{"clusterAffinity":{"clusterNames":["m1"]}}}})"))
                  .ok());
  // The policy is known before the object is checked.
  ASSERT_TRUE(Eventually([&] { return !ctx_->policies().All().empty(); }));
  Mutex mu;
  std::vector<json::object> modified;
  auto watch = fed_->StartWatch(
      kConfigMaps, "shop", {},
      [&](const client::WatchEvent& e) {
        MutexLock lock(mu);
        if (e.type == client::WatchEvent::Type::kModified) modified.push_back(e.object);
      },
      [](const Status&) {});
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop", ConfigMap("shop", "cfg", "v1")).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m1_, "shop", "cfg") == "v1"; }));
  EXPECT_TRUE(Gone(*m2_, kConfigMaps, "shop", "cfg"));
  ASSERT_TRUE(Eventually([&] {
    MutexLock lock(mu);
    return !modified.empty();
  }));
  (*watch)->Stop();
  MutexLock lock(mu);
  const json::object& first = modified.front();
  EXPECT_EQ(Find(first, "metadata.finalizers")->as_array(),
            json::array{api::kDeleteFromUnderlyingClustersFinalizer});
  const json::value* policy =
      api::FindAnnotation(first, "clusterpropagationpolicy.karmada.io/name");
  ASSERT_NE(policy, nullptr);
  EXPECT_EQ(*policy, "to-m1");
}

TEST_F(SyncControllerTest, ACopyInAClusterBeingUnjoinedStays) {
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop", ConfigMap("shop", "cfg", "v1")).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m2_, "shop", "cfg") == "v1"; }));
  // The Cluster goes before the registry hears of it.
  ASSERT_TRUE(fed_->Delete(kClusters, "", "m2").ok());
  // Its Cluster informer is independent of the others: wait until it has
  // seen the deletion, i.e. a new object reaches m1 and not m2.
  int probes = 0;
  ASSERT_TRUE(Eventually([&] {
    std::string name = "probe-" + std::to_string(probes++);
    if (!fed_->Create(kConfigMaps, "shop", ConfigMap("shop", name, "x")).ok()) return false;
    if (!Eventually([&] { return Data(*m1_, "shop", name) == "x"; })) return false;
    return Gone(*m2_, kConfigMaps, "shop", name);
  }));
  json::object cm = *Get(*fed_, kConfigMaps, "shop", "cfg");
  cm["data"] = {{"key", "v2"}};
  ASSERT_TRUE(fed_->Update(kConfigMaps, "shop", cm).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m1_, "shop", "cfg") == "v2"; }));
  ASSERT_TRUE(fed_->Delete(kConfigMaps, "shop", "cfg", {.propagation_policy = "Orphan"}).ok());
  ASSERT_TRUE(Eventually([&] { return Gone(*fed_, kConfigMaps, "shop", "cfg"); }));
  EXPECT_EQ(Data(*m2_, "shop", "cfg"), "v1");
}

TEST_F(SyncControllerTest, KeepsTheFederationsOwnObjects) {
  ASSERT_TRUE(fed_->Create(kConfigMaps, "kube-system", ConfigMap("kube-system", "sys", "x")).ok());
  ASSERT_TRUE(fed_->Create(kSecrets, "shop", Obj(R"({"metadata":{"name":"tok","namespace":"shop",
                                   "annotations":{"kubernetes.io/service-account.name":"d"}},
                                   "type":"kubernetes.io/service-account-token"})"))
                  .ok());
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop", ConfigMap("shop", "marker", "x")).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m1_, "shop", "marker") == "x"; }));
  EXPECT_TRUE(Gone(*m1_, kConfigMaps, "kube-system", "sys"));
  EXPECT_TRUE(Gone(*m1_, kSecrets, "shop", "tok"));
  json::object sys = *Get(*fed_, kConfigMaps, "kube-system", "sys");
  EXPECT_EQ(Find(sys, "metadata.finalizers"), nullptr);
}

}  // namespace
// A CustomResourceDefinition made once the controllers run: it reaches
// both members, then its kind's objects follow (their informers in the
// members, which found the kind not served, list again as soon as the
// member's copy is Established: no wait of not_served_retry), and each
// copy's status comes back in the status-by-cluster annotation.
TEST_F(SyncControllerTest, ACustomKindIsFederatedOnceItsDefinitionIsEstablished) {
  const client::ResourceRef crontabs{"stable.example.com", "v1", "crontabs", true};
  EstablishKind("stable.example.com", "crontabs", "CronTab");
  ASSERT_TRUE(fed_->Create(crontabs, "shop", Obj(R"({"apiVersion":"stable.example.com/v1",
      "kind":"CronTab","metadata":{"name":"nightly"},"spec":{"cronSpec":"0 3 * * *"}})"))
                  .ok());
  for (client::Client* m : {m1_.get(), m2_.get()}) {
    ASSERT_TRUE(Eventually([&] {
      auto copy = Get(*m, crontabs, "shop", "nightly");
      return copy && StringAt(*copy, "spec.cronSpec") == "0 3 * * *" && IsManaged(*copy);
    }));
  }
  auto copy = Get(*m1_, crontabs, "shop", "nightly");
  ASSERT_TRUE(copy);
  (*copy)["status"] = json::object{{"phase", "Running"}};
  ASSERT_TRUE(m1_->UpdateStatus(crontabs, "shop", *copy).ok());
  EXPECT_TRUE(Eventually([&] {
    auto fed = Get(*fed_, crontabs, "shop", "nightly");
    return fed && api::AnnotationAt(*fed, api::kStatusByClusterAnnotation) ==
                      R"({"m1":{"phase":"Running"}})";
  }));
}

// A custom kind with an interpreter customization: its replicas divided
// over the ready clusters by GetReplicas and ReviseReplica, moved when a
// cluster is no longer ready, its status aggregated; a script that fails
// leaves the copies as they are and says so in an event.
TEST_F(SyncControllerTest, ACustomizedKindIsDividedAndItsStatusAggregated) {
  const client::ResourceRef workloads{"apps.example.com", "v1", "workloads", true};
  EstablishKind("apps.example.com", "workloads", "Workload");
  const json::object customization = WorkloadCustomization(
      "statusAggregation",
      "function AggregateStatus(obj, items) local r = 0 for i = 1, #items do if items[i].status "
      "~= nil then r = r + (items[i].status.ready or 0) end end obj.status = {ready = r, "
      "clusters = #items} return obj end");
  ASSERT_TRUE(fed_->Create(kResourceInterpreterCustomizations, "", customization).ok());
  ASSERT_TRUE(fed_->Create(workloads, "shop", Obj(R"({"apiVersion":"apps.example.com/v1",
      "kind":"Workload","metadata":{"name":"web"},"spec":{"replicas":5}})"))
                  .ok());
  auto replicas = [&](client::Client& m) -> int64_t {
    auto copy = Get(m, workloads, "shop", "web");
    return copy ? GetInt(*GetObject(*copy, "spec"), "replicas").value_or(-1) : 0;
  };
  ASSERT_TRUE(Eventually([&] {
    return replicas(*m1_) + replicas(*m2_) == 5 && replicas(*m1_) > 0 && replicas(*m2_) > 0;
  }));

  // The members report; the federation aggregates. The sum is of what they
  // reported: a division that changes after a copy was read does not
  // change what that copy says is ready.
  int64_t reported = 0;
  for (client::Client* m : {m1_.get(), m2_.get()}) {
    auto copy = Get(*m, workloads, "shop", "web");
    ASSERT_TRUE(copy);
    int64_t ready = GetInt(*GetObject(*copy, "spec"), "replicas").value_or(0);
    reported += ready;
    (*copy)["status"] = json::object{{"ready", ready}};
    ASSERT_TRUE(m->UpdateStatus(workloads, "shop", *copy).ok());
  }
  EXPECT_TRUE(Eventually([&] {
    auto fed = Get(*fed_, workloads, "shop", "web");
    return fed && Find(*fed, "status.ready") != nullptr &&
           *Find(*fed, "status.ready") == reported && *Find(*fed, "status.clusters") == 2;
  }));

  // m2 is no longer ready: m1 runs all 5.
  ctx_->clusters().SetNotReady("m2");
  EXPECT_TRUE(Eventually([&] { return replicas(*m1_) == 5; }));

  // A script that fails: the copy stays, the object says why.
  json::object broken = customization;
  auto current = Get(*fed_, kResourceInterpreterCustomizations, "", "workloads");
  ASSERT_TRUE(current);
  broken["metadata"] = (*current)["metadata"];
  broken["spec"].as_object()["customizations"].as_object()["replicaResource"] =
      json::object{{"luaScript", "function GetReplicas(obj) return obj.spec.nothing.here end"}};
  ASSERT_TRUE(fed_->Update(kResourceInterpreterCustomizations, "", broken).ok());
  EXPECT_TRUE(Eventually([&] { return HasEvent("shop", "web", "InterpreterFailed"); }));
  EXPECT_EQ(replicas(*m1_), 5);
}

// A definition that moves its storage version gets a reconciler on the new
// version; one deleted takes its reconciler and the members' informers
// along.
TEST_F(SyncControllerTest, AKindFollowsItsDefinitionsVersionAndGoesWithIt) {
  const std::string name = "crontabs.stable.example.com";
  const std::string controller = "sync-" + name;
  EstablishKind("stable.example.com", "crontabs", "CronTab");
  const client::ResourceRef v1{"stable.example.com", "v1", "crontabs", true};
  const client::ResourceRef v2{"stable.example.com", "v2", "crontabs", true};
  auto member_version = [&](const std::string& cluster) -> std::string {
    std::shared_ptr<runtime::Informer> i = ctx_->members().Get(cluster, v1);
    return i == nullptr ? "" : i->resource().version;
  };
  ASSERT_TRUE(Eventually([&] { return member_version("m1") == "v1"; }));
  ASSERT_TRUE(fed_->Create(v1, "shop", Obj(R"({"apiVersion":"stable.example.com/v1",
      "kind":"CronTab","metadata":{"name":"nightly"},"spec":{"cronSpec":"0 3 * * *"}})"))
                  .ok());
  ASSERT_TRUE(Eventually([&] { return Get(*m1_, v1, "shop", "nightly").has_value(); }));

  // v2 becomes the storage version (v1 still served).
  ASSERT_TRUE(Eventually([&] {
    auto crd = Get(*fed_, client::kCustomResourceDefinitions, "", name);
    if (!crd) return false;
    (*crd)["spec"].as_object()["versions"] = json::parse(R"([
        {"name":"v1","served":true,"storage":false,
         "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
        {"name":"v2","served":true,"storage":true,"subresources":{"status":{}},
         "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}])");
    return fed_->Update(client::kCustomResourceDefinitions, "", *crd).ok();
  }));
  ASSERT_TRUE(Eventually([&] {
    return member_version("m1") == "v2" && member_version("m2") == "v2" &&
           ctx_->manager().Find(controller) != nullptr;
  }));
  // The new reconciler keeps the copies as they should be (once the
  // member serves v2 too).
  ASSERT_TRUE(Eventually([&] {
    auto copy = Get(*m1_, v2, "shop", "nightly");
    if (!copy) return false;
    (*copy)["spec"].as_object()["cronSpec"] = "edited";
    auto st = m1_->Update(v2, "shop", *copy);
    if (!st.ok()) std::cerr << "UPDATE " << st.status().ToString() << "\n";
    return st.ok();
  })) << m1_->Get(v2, "shop", "nightly").status().ToString()
      << " " << m1_->Get(v1, "shop", "nightly").status().ToString() << " "
      << fed_->Get(v2, "shop", "nightly").status().ToString();
  ASSERT_TRUE(Eventually([&] {
    auto c = Get(*m1_, v2, "shop", "nightly");
    return c && StringAt(*c, "spec.cronSpec") == "0 3 * * *";
  }));

  // The definition goes (its objects first, as the API server deletes
  // them): so do the reconciler and the informers in the members.
  ASSERT_TRUE(fed_->Delete(client::kCustomResourceDefinitions, "", name, {}).ok());
  ASSERT_TRUE(Eventually([&] {
    return !Get(*fed_, client::kCustomResourceDefinitions, "", name).has_value() &&
           ctx_->manager().Find(controller) == nullptr && member_version("m1").empty() &&
           member_version("m2").empty();
  }));
  // Made again, it is federated again.
  EstablishKind("stable.example.com", "crontabs", "CronTab");
  ASSERT_TRUE(fed_->Create(v1, "shop", Obj(R"({"apiVersion":"stable.example.com/v1",
      "kind":"CronTab","metadata":{"name":"again"},"spec":{"cronSpec":"1 * * * *"}})"))
                  .ok());
  EXPECT_TRUE(Eventually([&] { return Get(*m2_, v1, "shop", "again").has_value(); }));
}

// A cluster with resource figures takes no more replicas of a customized
// kind than it has room for; what fits nowhere is said.
TEST_F(SyncControllerTest, ACustomizedKindTakesNoMoreThanAClusterHasRoomFor) {
  const client::ResourceRef workloads{"apps.example.com", "v1", "workloads", true};
  EstablishKind("apps.example.com", "workloads", "Workload");
  // Room for one replica of 500m in m1, for eight in m2.
  auto summarize = [&](const std::string& cluster, const std::string& cpu,
                       const std::string& allocated) {
    auto c = Get(*fed_, kClusters, "", cluster);
    ASSERT_TRUE(c);
    (*c)["status"] = json::object{
        {"resourceSummary",
         json::object{{"allocatable", json::object{{"cpu", cpu}, {"pods", "110"}}},
                      {"allocated", json::object{{"cpu", allocated}, {"pods", "0"}}}}}};
    ASSERT_TRUE(fed_->UpdateStatus(kClusters, "", *c).ok());
  };
  summarize("m1", "1", "500m");
  summarize("m2", "4", "0");
  ASSERT_TRUE(Eventually([&] {
    const runtime::ObjectPtr m2 = ctx_->cluster_objects().cache().Get("m2");
    return m2 != nullptr && Find(*m2, "status.resourceSummary") != nullptr;
  }));
  ASSERT_TRUE(fed_->Create(kResourceInterpreterCustomizations, "",
                           WorkloadCustomization("replicaResource", R"(
function GetReplicas(obj)
  return obj.spec.replicas, {resourceRequest = {cpu = "500m"}}
end)"))
                  .ok());
  auto create = [&](const std::string& name, int replicas) {
    json::object w = Obj(R"({"apiVersion":"apps.example.com/v1","kind":"Workload",
        "metadata":{},"spec":{}})");
    w["metadata"].as_object()["name"] = name;
    w["spec"].as_object()["replicas"] = replicas;
    ASSERT_TRUE(fed_->Create(workloads, "shop", w).ok());
  };
  auto replicas = [&](client::Client& m, const std::string& name) -> int64_t {
    auto copy = Get(m, workloads, "shop", name);
    return copy ? GetInt(*GetObject(*copy, "spec"), "replicas").value_or(-1) : 0;
  };
  // Each member's informer of the kind may have looked before the member
  // served it: until it looks again that cluster is not admitted, and
  // replicas that fit only there would be said to fit nowhere.
  const client::ResourceRef read[] = {workloads};
  ASSERT_TRUE(Eventually([&] {
    std::vector<MemberInformers::ClusterSync> sync = ctx_->members().Synced(read);
    return ctx_->customizations().For("apps.example.com/v1", "Workload") != nullptr &&
           sync.size() == 2 &&
           std::ranges::all_of(sync, [](const auto& s) { return s.served && s.synced; });
  }));
  // An even split would give m1 two or three.
  create("web", 5);
  EXPECT_TRUE(Eventually([&] { return replicas(*m1_, "web") == 1 && replicas(*m2_, "web") == 4; }))
      << replicas(*m1_, "web") << " " << replicas(*m2_, "web");
  // Twelve do not fit: nine are placed.
  create("big", 12);
  EXPECT_TRUE(Eventually([&] { return HasEvent("shop", "big", "NotEnoughRoom"); }));
  EXPECT_TRUE(Eventually([&] { return replicas(*m1_, "big") == 1 && replicas(*m2_, "big") == 8; }));
  EXPECT_FALSE(HasEvent("shop", "web", "NotEnoughRoom"));
  ASSERT_TRUE(fed_->Delete(workloads, "shop", "big", {}).ok());

  // web's replica in m1 runs a pod on a node: m1 is full, and that room is
  // web's own, so web keeps its replica there when it grows.
  auto copy = Get(*m1_, workloads, "shop", "web");
  ASSERT_TRUE(copy);
  json::object pod = Obj(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0"},
      "spec":{"nodeName":"node-1","containers":[{"name":"c","image":"busybox",
              "resources":{"requests":{"cpu":"500m"}}}]}})");
  pod["metadata"].as_object()["ownerReferences"] =
      json::array{json::object{{"apiVersion", "apps.example.com/v1"},
                               {"kind", "Workload"},
                               {"name", "web"},
                               {"uid", StringAt(*copy, "metadata.uid")},
                               {"controller", true}}};
  ASSERT_TRUE(m1_->Create(kPods, "shop", pod).ok());
  summarize("m1", "1", "1");
  ASSERT_TRUE(Eventually([&] {
    const runtime::ObjectPtr m1 = ctx_->cluster_objects().cache().Get("m1");
    std::shared_ptr<runtime::Informer> pods = ctx_->members().Get("m1", kPods);
    return m1 != nullptr && StringAt(*m1, "status.resourceSummary.allocated.cpu") == "1" &&
           pods != nullptr && pods->cache().Get("shop/web-0") != nullptr;
  }));
  ASSERT_TRUE(Eventually([&] {
    auto w = Get(*fed_, workloads, "shop", "web");
    if (!w) return false;
    (*w)["spec"].as_object()["replicas"] = 6;
    return fed_->Update(workloads, "shop", *w).ok();
  }));
  EXPECT_TRUE(Eventually([&] { return replicas(*m1_, "web") == 1 && replicas(*m2_, "web") == 5; }))
      << replicas(*m1_, "web") << " " << replicas(*m2_, "web");
}

// A built-in kind keeps its strategy; a customization overrides the
// operations it defines: here Retain keeps what a member sets in data.site.
TEST_F(SyncControllerTest, ABuiltInKindTakesTheRetentionItsCustomizationDefines) {
  ASSERT_TRUE(fed_->Create(kResourceInterpreterCustomizations, "", Obj(R"({
      "apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterCustomization",
      "metadata":{"name":"configmaps"},
      "spec":{"target":{"apiVersion":"v1","kind":"ConfigMap"},
        "customizations":{"retention":{"luaScript":
          "function Retain(desired, observed) if observed.data ~= nil and observed.data.site ~= nil then desired.data.site = observed.data.site end return desired end"}}}})"))
                  .ok());
  ASSERT_TRUE(Eventually([&] { return ctx_->customizations().For("v1", "ConfigMap") != nullptr; }));
  json::object cm = ConfigMap("shop", "cfg", "v1");
  cm["data"].as_object()["site"] = "federation's";
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop", cm).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m1_, "shop", "cfg") == "v1"; }));

  // The member sets data.site and edits data.key: the key is restored,
  // data.site stays the member's.
  json::object copy = *Get(*m1_, kConfigMaps, "shop", "cfg");
  copy["data"] = {{"key", "by hand"}, {"site", "m1's"}};
  ASSERT_TRUE(m1_->Update(kConfigMaps, "shop", copy).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m1_, "shop", "cfg") == "v1"; }));
  EXPECT_EQ(StringAt(*Get(*m1_, kConfigMaps, "shop", "cfg"), "data.site"), "m1's");

  // That took one update, and the copy is up to date as it is: no more
  // while another object goes out.
  ASSERT_TRUE(Eventually([&] { return Writes("m1", "configmaps", "update") == 1; }));
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop", ConfigMap("shop", "probe", "p")).ok());
  ASSERT_TRUE(Eventually([&] { return Data(*m1_, "shop", "probe") == "p"; }));
  EXPECT_EQ(Writes("m1", "configmaps", "update"), 1);

  // An update from the federation keeps the member's data.site too; m2,
  // which set none, gets the federation's.
  cm = *Get(*fed_, kConfigMaps, "shop", "cfg");
  cm["data"].as_object()["key"] = "v2";
  ASSERT_TRUE(fed_->Update(kConfigMaps, "shop", cm).ok());
  ASSERT_TRUE(Eventually(
      [&] { return Data(*m1_, "shop", "cfg") == "v2" && Data(*m2_, "shop", "cfg") == "v2"; }));
  EXPECT_EQ(StringAt(*Get(*m1_, kConfigMaps, "shop", "cfg"), "data.site"), "m1's");
  EXPECT_EQ(StringAt(*Get(*m2_, kConfigMaps, "shop", "cfg"), "data.site"), "federation's");

  // Without the customization, the federation's next update writes its
  // own value (a copy as the federation last wrote it is not rewritten
  // just because the customization went).
  ASSERT_TRUE(fed_->Delete(kResourceInterpreterCustomizations, "", "configmaps").ok());
  ASSERT_TRUE(Eventually([&] { return ctx_->customizations().For("v1", "ConfigMap") == nullptr; }));
  cm = *Get(*fed_, kConfigMaps, "shop", "cfg");
  cm["data"].as_object()["key"] = "v3";
  ASSERT_TRUE(fed_->Update(kConfigMaps, "shop", cm).ok());
  EXPECT_TRUE(Eventually([&] {
    auto c = Get(*m1_, kConfigMaps, "shop", "cfg");
    return c && StringAt(*c, "data.key") == "v3" && StringAt(*c, "data.site") == "federation's";
  }));
}

// GetDependencies: the ConfigMap a divided custom object's pod template
// mounts goes where the object's copy is, though its own selector admits no
// cluster, follows the object when it moves, and leaves when the object is
// gone.
TEST_F(SyncControllerTest, DependenciesGoWhereTheirDependentsAre) {
  const client::ResourceRef workloads{"apps.example.com", "v1", "workloads", true};
  EstablishKind("apps.example.com", "workloads", "Workload");
  ASSERT_TRUE(fed_->Create(kResourceInterpreterCustomizations, "",
                           WorkloadCustomization("dependencyInterpretation",
                                                 "local kube = require('kube') function "
                                                 "GetDependencies(obj) return "
                                                 "kube.getPodDependencies(obj.spec.template, "
                                                 "obj.metadata.namespace) end"))
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    auto c = ctx_->customizations().For("apps.example.com/v1", "Workload");
    return c != nullptr && c->Has(interpreter::Operation::kInterpretDependency);
  }));
  // Its own selector admits no cluster.
  ASSERT_TRUE(fed_->Create(kConfigMaps, "shop",
                           ConfigMap("shop", "cfg", "v1",
                                     R"([{"key":"region","operator":"In","values":["mars"]}])"))
                  .ok());
  ASSERT_TRUE(fed_->Create(workloads, "shop", Obj(R"({"apiVersion":"apps.example.com/v1",
      "kind":"Workload","metadata":{"name":"web"},"spec":{"replicas":1,"template":{
        "spec":{"containers":[{"name":"web","image":"nginx"}],
                "volumes":[{"name":"c","configMap":{"name":"cfg"}}]}}}})"))
                  .ok());
  auto has = [&](client::Client& m, const client::ResourceRef& r, const std::string& name) {
    return Get(m, r, "shop", name).has_value();
  };
  std::string first;
  ASSERT_TRUE(Eventually([&] {
    bool in1 = has(*m1_, workloads, "web"), in2 = has(*m2_, workloads, "web");
    if (in1 == in2) return false;
    first = in1 ? "m1" : "m2";
    return true;
  }));
  client::Client& with = first == "m1" ? *m1_ : *m2_;
  client::Client& without = first == "m1" ? *m2_ : *m1_;
  ASSERT_TRUE(Eventually([&] { return Data(with, "shop", "cfg") == "v1"; }));
  EXPECT_FALSE(has(without, kConfigMaps, "cfg"));

  // The object moves: its ConfigMap follows.
  ctx_->clusters().SetNotReady(first);
  ASSERT_TRUE(Eventually([&] { return has(without, workloads, "web"); }));
  ASSERT_TRUE(Eventually([&] { return Data(without, "shop", "cfg") == "v1"; }));

  // The object is gone: nothing needs the ConfigMap there any more.
  ASSERT_TRUE(fed_->Delete(workloads, "shop", "web").ok());
  EXPECT_TRUE(Eventually([&] { return !has(without, kConfigMaps, "cfg"); }));
}

// A claim is storage: it goes nowhere of its own accord; placed, it moves
// with its placement, but not out of a cluster where a pod still uses it.
// Its status is its copies'.
TEST_F(SyncControllerTest, AClaimStaysWhereAPodUsesIt) {
  auto claim = [&](const std::string& name, const std::string& region) {
    json::object c = Obj(R"({"apiVersion":"v1","kind":"PersistentVolumeClaim",
        "metadata":{"namespace":"shop"},"spec":{"accessModes":["ReadWriteOnce"],
        "resources":{"requests":{"storage":"1Gi"}}}})");
    c["metadata"].as_object()["name"] = name;
    if (!region.empty()) {
      c["metadata"].as_object()["annotations"] =
          json::object{{api::kClusterSelectorAnnotation,
                        R"([{"key":"region","operator":"In","values":[")" + region + R"("]}])"}};
    }
    return c;
  };
  ASSERT_TRUE(fed_->Create(kPersistentVolumeClaims, "shop", claim("unplaced", "")).ok());
  ASSERT_TRUE(fed_->Create(kPersistentVolumeClaims, "shop", claim("data", "eu")).ok());
  ASSERT_TRUE(Eventually([&] { return !Gone(*m1_, kPersistentVolumeClaims, "shop", "data"); }));
  EXPECT_TRUE(Gone(*m2_, kPersistentVolumeClaims, "shop", "data"));
  for (client::Client* m : {m1_.get(), m2_.get()}) {
    EXPECT_TRUE(Gone(*m, kPersistentVolumeClaims, "shop", "unplaced"));
  }
  // The member binds it: the federated claim is bound.
  json::object bound = *Get(*m1_, kPersistentVolumeClaims, "shop", "data");
  bound["status"] = Obj(R"({"phase":"Bound","accessModes":["ReadWriteOnce"],
                             "capacity":{"storage":"1Gi"}})");
  ASSERT_TRUE(m1_->UpdateStatus(kPersistentVolumeClaims, "shop", bound).ok());
  ASSERT_TRUE(Eventually([&] {
    auto c = Get(*fed_, kPersistentVolumeClaims, "shop", "data");
    return c && StringAt(*c, "status.phase") == "Bound" &&
           StringAt(*c, "status.capacity.storage") == "1Gi";
  }));
  // `kubectl flotilla status` lists it by its copies, Bound ones ready.
  EXPECT_EQ(federation::testing::BreakdownCells(
                *Get(*fed_, kPersistentVolumeClaims, "shop", "data"), api::kClaimStatusAnnotation),
            "m1=1/1");

  ASSERT_TRUE(m1_->Create(kPods, "shop", Obj(R"({"metadata":{"name":"db"},
      "spec":{"nodeName":"node-1","containers":[{"name":"db","image":"postgres"}],
              "volumes":[{"name":"d","persistentVolumeClaim":{"claimName":"data"}}]}})"))
                  .ok());
  ASSERT_TRUE(federation::testing::PatchAnnotation(
      *fed_, kPersistentVolumeClaims, "shop", "data", api::kClusterSelectorAnnotation,
      R"([{"key":"region","operator":"In","values":["us"]}])"));
  ASSERT_TRUE(Eventually([&] { return !Gone(*m2_, kPersistentVolumeClaims, "shop", "data"); }));
  for (int i = 0; i < 20; ++i) clock_.Advance(std::chrono::milliseconds(100));
  EXPECT_FALSE(Gone(*m1_, kPersistentVolumeClaims, "shop", "data"));
  // The pod goes: so does the claim (being deleted: the member's
  // pvc-protection would let it go once it sees no pod using it).
  ASSERT_TRUE(m1_->Delete(kPods, "shop", "db").ok());
  EXPECT_TRUE(Eventually([&] {
    auto c = Get(*m1_, kPersistentVolumeClaims, "shop", "data");
    return !c || !StringAt(*c, "metadata.deletionTimestamp").empty();
  }));
}

// ServiceAccounts (not `default`), Roles and RoleBindings reach every
// cluster; a copy bound to another role than the federated binding's, which
// no update can change, is replaced.
TEST_F(SyncControllerTest, AccountsRolesAndBindingsReachEveryCluster) {
  ASSERT_TRUE(fed_->Create(kServiceAccounts, "shop", Obj(R"({"metadata":{"name":"builder"},
      "imagePullSecrets":[{"name":"registry"}]})"))
                  .ok());
  ASSERT_TRUE(
      fed_->Create(kServiceAccounts, "shop", Obj(R"({"metadata":{"name":"default"}})")).ok());
  ASSERT_TRUE(fed_->Create(kRoles, "shop", Obj(R"({"metadata":{"name":"reader"},
      "rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}]})"))
                  .ok());
  json::object binding = Obj(R"({"metadata":{"name":"read"},
      "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"reader"},
      "subjects":[{"kind":"User","name":"ann"}]})");
  StatusOr<json::object> made = fed_->Create(kRoleBindings, "shop", binding);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  for (client::Client* m : {m1_.get(), m2_.get()}) {
    ASSERT_TRUE(Eventually([&] {
      auto b = Get(*m, kRoleBindings, "shop", "read");
      auto r = Get(*m, kRoles, "shop", "reader");
      auto a = Get(*m, kServiceAccounts, "shop", "builder");
      return b && r && a && StringAt(*b, "roleRef.name") == "reader" &&
             Find(*r, "rules") != nullptr && Find(*a, "imagePullSecrets") != nullptr;
    }));
    EXPECT_TRUE(Gone(*m, kServiceAccounts, "shop", "default"));
  }
  // Deleted with its copies orphaned and made again for another role.
  client::DeleteOptions orphan;
  orphan.propagation_policy = "Orphan";
  ASSERT_TRUE(fed_->Delete(kRoleBindings, "shop", "read", orphan).ok());
  ASSERT_TRUE(Eventually([&] { return Gone(*fed_, kRoleBindings, "shop", "read"); }));
  binding["roleRef"].as_object()["name"] = "writer";
  StatusOr<json::object> again = fed_->Create(kRoleBindings, "shop", binding);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  for (client::Client* m : {m1_.get(), m2_.get()}) {
    EXPECT_TRUE(Eventually([&] {
      auto b = Get(*m, kRoleBindings, "shop", "read");
      return b && StringAt(*b, "roleRef.name") == "writer";
    }));
  }
}

}  // namespace flotilla::federation::sync
