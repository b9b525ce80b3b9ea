// The federated Ingress controller: which Services an Ingress routes to,
// how its copies' addresses add up, and against real API servers
// (cluster::testing::ControllerTest, members c1, c2 and c3) an Ingress
// served where a backend has a ready endpoint and leaving a cluster whose
// backends are gone. The tests play each member's endpoints and ingress
// controllers.
#include "federation/ingress/ingress_controller.h"

#include <gtest/gtest.h>

#include "api/annotations.h"
#include "api/federated.h"
#include "federation/cluster/controller_fixture.h"
#include "federation/common/member_copy.h"

namespace flotilla::federation::ingress {
namespace {

using client::kEndpoints;
using client::kIngresses;
using runtime::testing::Eventually;

json::object Parse(std::string_view text) {
  StatusOr<json::object> o = ParseJsonObject(text);
  EXPECT_TRUE(o.ok()) << text;
  return o.ok() ? *o : json::object{};
}

constexpr std::string_view kShop = R"({"apiVersion":"networking.k8s.io/v1","kind":"Ingress",
  "metadata":{"name":"shop"},"spec":{"rules":[{"host":"shop.flotilla.local","http":{"paths":[
    {"path":"/","pathType":"Prefix","backend":{"service":{"name":"web","port":{"number":80}}}},
    {"path":"/api","pathType":"Prefix","backend":{"service":{"name":"api","port":{"number":80}}}}]}}],
  "defaultBackend":{"service":{"name":"fallback","port":{"number":80}}}}})";

TEST(BackendServices, TheDefaultBackendAndEveryPaths) {
  EXPECT_EQ(BackendServices(Parse(kShop)), (std::set<std::string>{"api", "fallback", "web"}));
  EXPECT_TRUE(BackendServices(Parse(R"({"spec":{"rules":[{"host":"a.b"}]}})")).empty());
}

TEST(LoadBalancerOf, TheCopiesAddressesEachOnce) {
  json::object a = Parse(R"({"status":{"loadBalancer":{"ingress":[{"ip":"10.1.0.1"}]}}})");
  json::object b = Parse(
      R"({"status":{"loadBalancer":{"ingress":[{"ip":"10.1.0.1"},{"hostname":"lb.example.com"}]}}})");
  EXPECT_EQ(json::serialize(LoadBalancerOf({&a, nullptr, &b})),
            R"({"ingress":[{"ip":"10.1.0.1"},{"hostname":"lb.example.com"}]})");
  EXPECT_EQ(json::serialize(LoadBalancerOf({nullptr})), "{}");
}

class IngressControllerTest : public cluster::testing::ControllerTest {
 protected:
  IngressControllerTest() : ControllerTest({IngressController::kName}, "default/shop") {}
  std::string Name(int i) const override { return "c" + std::to_string(i + 1); }

  void Start() {
    WorkloadOptions options;
    options.member_change_delay = Duration::zero();
    StartWith([&] { Make<IngressController>(options); });
  }
  // Member i's Endpoints of Service "web", with a ready address or not.
  void Endpoints(int i, bool ready) {
    json::object eps = Parse(R"({"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"web"},
      "subsets":[{")" + std::string(ready ? "addresses" : "notReadyAddresses") +
                             R"(":[{"ip":"10.244.0.5"}],"ports":[{"port":80}]}]})");
    auto current = member_clients_[i]->Get(kEndpoints, kNs, "web");
    if (current.ok()) {
      eps["metadata"] = (*current)["metadata"];
      ASSERT_TRUE(member_clients_[i]->Update(kEndpoints, kNs, eps).ok());
    } else {
      ASSERT_TRUE(member_clients_[i]->Create(kEndpoints, kNs, eps).ok());
    }
  }
  json::object Fed() {
    auto s = fed_client_->Get(kIngresses, kNs, "shop");
    return s.ok() ? *s : json::object{};
  }
  bool Has(int i) { return member_clients_[i]->Get(kIngresses, kNs, "shop").ok(); }
  std::vector<bool> Copies() { return {Has(0), Has(1), Has(2)}; }
  // Plays member i's ingress controller.
  void Serve(int i, const std::string& ip) {
    ASSERT_TRUE(Eventually([&] {
      auto s = member_clients_[i]->Get(kIngresses, kNs, "shop");
      if (!s.ok()) return false;
      (*s)["status"] = json::object{
          {"loadBalancer", json::object{{"ingress", json::array{json::object{{"ip", ip}}}}}}};
      return member_clients_[i]->UpdateStatus(kIngresses, kNs, *s).ok();
    }));
  }
  std::string Addresses() {
    json::object fed = Fed();
    const json::value* ingress = Find(fed, "status.loadBalancer.ingress");
    return ingress == nullptr ? "" : json::serialize(*ingress);
  }
  bool Settle(const std::function<bool()>& done) {
    return ControllerTest::Settle(done, std::chrono::seconds(30));
  }
};

TEST_F(IngressControllerTest, ServedWhereABackendIsReadyAndItsAddressesGathered) {
  Endpoints(0, true);
  Endpoints(1, true);
  Endpoints(2, false);
  Start();
  ASSERT_TRUE(fed_client_->Create(kIngresses, kNs, Parse(kShop)).ok());
  ASSERT_TRUE(Settle([&] { return Copies() == std::vector<bool>{true, true, false}; }));
  auto local = member_clients_[0]->Get(kIngresses, kNs, "shop");
  ASSERT_TRUE(local.ok());
  EXPECT_TRUE(IsManaged(*local));
  EXPECT_EQ(json::serialize(*Find(*local, "spec")), json::serialize(*Find(Parse(kShop), "spec")));

  Serve(0, "10.1.0.1");
  Serve(1, "10.2.0.1");
  ASSERT_TRUE(Settle([&] { return Addresses() == R"([{"ip":"10.1.0.1"},{"ip":"10.2.0.1"}])"; }))
      << Addresses();

  // c2's backends go: its copy goes, and its address with it; c3's come.
  Endpoints(1, false);
  Endpoints(2, true);
  ASSERT_TRUE(Settle([&] { return Copies() == std::vector<bool>{true, false, true}; }));
  Serve(2, "10.3.0.1");
  ASSERT_TRUE(Settle([&] { return Addresses() == R"([{"ip":"10.1.0.1"},{"ip":"10.3.0.1"}])"; }))
      << Addresses();
  // `kubectl flotilla status` lists it by its copies, served once addressed.
  EXPECT_EQ(federation::testing::BreakdownCells(Fed(), api::kIngressStatusAnnotation),
            Name(0) + "=1/1," + Name(2) + "=1/1");
}

}  // namespace
}  // namespace flotilla::federation::ingress
