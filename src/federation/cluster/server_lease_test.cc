// The federation servers' Leases against a real API server: written with
// the server's URL, renewed, deleted at Stop; another server's Lease is
// deleted once not renewed for expire_after, and only then.
#include "federation/cluster/server_lease.h"

#include <gtest/gtest.h>

#include "client/client_test_util.h"
#include "runtime/test_util.h"

namespace flotilla::federation::cluster {
namespace {

using client::testing::TestCluster;
using runtime::testing::Eventually;

constexpr char kLeaseNamespace[] = "kube-system";

json::object Lease(const std::string& name, const std::string& url, TimePoint renewed) {
  return json::object{
      {"apiVersion", "coordination.k8s.io/v1"},
      {"kind", "Lease"},
      {"metadata",
       {{"name", name},
        {"labels", {{std::string(kServerLeaseLabel), std::string(kServerLeaseLabelValue)}}},
        {"annotations", {{std::string(kServerUrlAnnotation), url}}}}},
      {"spec",
       {{"holderIdentity", name},
        {"leaseDurationSeconds", 30},
        {"renewTime", FormatRfc3339Micro(renewed)}}}};
}

TEST(ServerLeaseTest, WrittenRenewedAndDeletedWithOthersLongGone) {
  TestCluster fed;
  std::unique_ptr<client::Client> c = fed.InProcess();
  FakeClock clock;
  TimePoint now = clock.Now();
  // A server killed two hours ago, one a minute ago, and a Lease that is
  // not a server's.
  ASSERT_TRUE(c->Create(client::kLeases, kLeaseNamespace,
                        Lease("flotilla-apiserver-gone", "https://10.0.0.1:6443",
                              now - std::chrono::hours(2)))
                  .ok());
  ASSERT_TRUE(c->Create(client::kLeases, kLeaseNamespace,
                        Lease("flotilla-apiserver-late", "https://10.0.0.2:6443",
                              now - std::chrono::minutes(1)))
                  .ok());
  json::object other = Lease("some-controller", "", now - std::chrono::hours(2));
  other["metadata"].as_object().erase("labels");
  ASSERT_TRUE(c->Create(client::kLeases, kLeaseNamespace, other).ok());

  std::string id = NewServerId();
  EXPECT_EQ(id.rfind("flotilla-apiserver-", 0), 0u);
  EXPECT_EQ(id.size(), std::string("flotilla-apiserver-").size() + 16);
  EXPECT_NE(id, NewServerId());
  ServerLease lease({.id = id,
                     .url = "https://127.0.0.1:6443",
                     .renew = std::chrono::milliseconds(20),
                     .clock = &clock});
  lease.Start(*c);
  auto exists = [&](const std::string& name) {
    return c->Get(client::kLeases, kLeaseNamespace, name).ok();
  };
  ASSERT_TRUE(Eventually([&] { return exists(id) && !exists("flotilla-apiserver-gone"); }));
  EXPECT_TRUE(exists("flotilla-apiserver-late"));
  EXPECT_TRUE(exists("some-controller"));
  auto listed = c->List(client::kLeases, kLeaseNamespace, {});
  ASSERT_TRUE(listed.ok());
  std::map<std::string, std::string> urls = ServerUrls(listed->items);
  EXPECT_EQ(urls, (std::map<std::string, std::string>{
                      {id, "https://127.0.0.1:6443"},
                      {"flotilla-apiserver-late", "https://10.0.0.2:6443"}}));

  // Renewed on its clock.
  clock.Advance(std::chrono::seconds(5));
  ASSERT_TRUE(Eventually([&] {
    auto mine = c->Get(client::kLeases, kLeaseNamespace, id);
    return mine.ok() && StringAt(*mine, "spec.renewTime") == FormatRfc3339Micro(clock.Now());
  }));
  // The late one, an hour after its last renewal.
  clock.Advance(std::chrono::minutes(59));
  ASSERT_TRUE(Eventually([&] { return !exists("flotilla-apiserver-late"); }));
  EXPECT_TRUE(exists("some-controller"));

  lease.Stop();
  EXPECT_FALSE(exists(id));
}

}  // namespace
}  // namespace flotilla::federation::cluster
