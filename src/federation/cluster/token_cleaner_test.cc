// Expired bootstrap tokens deleted, against a real API server
// (cluster::testing::ControllerTest) on the fixture's fake clock.
#include "federation/cluster/token_cleaner.h"

#include <gtest/gtest.h>

#include "apiserver/bootstrap_token.h"
#include "federation/cluster/controller_fixture.h"

namespace flotilla::federation::cluster {
namespace {

constexpr char kSystem[] = "kube-system";

class TokenCleanerTest : public testing::ControllerTest {
 protected:
  TokenCleanerTest()
      : ControllerTest({TokenCleaner::kName}, "kube-system/bootstrap-token-abcdef") {}

  void SetUp() override {
    ControllerTest::SetUp();
    auto ns = fed_client_->Create(client::kNamespaces, "",
                                  json::object{{"metadata", {{"name", kSystem}}}});
    ASSERT_TRUE(ns.ok() || ns.status().Is(Reason::kAlreadyExists)) << ns.status().ToString();
  }
  // Creates the Secret of token ID (6 characters) expiring at `expiration`
  // (never when nullopt).
  void Token(const std::string& id, std::optional<TimePoint> expiration) {
    apiserver::BootstrapTokenSpec spec{.token = {id, "0123456789abcdef"}, .expiration = expiration};
    auto made = fed_client_->Create(kSecrets, kSystem, apiserver::BootstrapTokenSecret(spec));
    ASSERT_TRUE(made.ok()) << made.status().ToString();
  }
  bool Exists(const std::string& name, const std::string& ns = kSystem) {
    return fed_client_->Get(kSecrets, ns, name).ok();
  }
};

TEST_F(TokenCleanerTest, DeletesEachTokenWhenItExpiresAndNothingElse) {
  TimePoint now = clock_.Now();
  Token("abcdef", now - std::chrono::minutes(1));
  Token("later1", now + std::chrono::hours(1));
  Token("never1", std::nullopt);
  // An expiration that cannot be read is taken as passed, as Kubernetes does.
  json::object unreadable =
      apiserver::BootstrapTokenSecret({.token = {"badexp", "0123456789abcdef"}});
  unreadable["data"].as_object()["expiration"] = "bm90IGEgdGltZQ==";  // "not a time"
  ASSERT_TRUE(fed_client_->Create(kSecrets, kSystem, unreadable).ok());
  // What is not a bootstrap token's Secret is not one, whatever it says.
  json::object other = apiserver::BootstrapTokenSecret(
      {.token = {"opaque", "0123456789abcdef"}, .expiration = now - std::chrono::hours(1)});
  other["type"] = "Opaque";
  ASSERT_TRUE(fed_client_->Create(kSecrets, kSystem, other).ok());
  json::object elsewhere = apiserver::BootstrapTokenSecret(
      {.token = {"away01", "0123456789abcdef"}, .expiration = now - std::chrono::hours(1)});
  elsewhere["metadata"].as_object()["namespace"] = kNs;
  ASSERT_TRUE(fed_client_->Create(kSecrets, kNs, elsewhere).ok());

  StartWith([&] { Make<TokenCleaner>(); }, 0);
  Holds([&] { return !Exists("bootstrap-token-abcdef") && !Exists("bootstrap-token-badexp"); });
  EXPECT_TRUE(Exists("bootstrap-token-later1"));
  EXPECT_TRUE(Exists("bootstrap-token-never1"));
  EXPECT_TRUE(Exists("bootstrap-token-opaque"));
  EXPECT_TRUE(Exists("bootstrap-token-away01", kNs));

  // Due in an hour: checked again then, not before.
  clock_.Advance(std::chrono::minutes(59));
  ASSERT_TRUE(Settle([&] { return Controller().Metrics().queue.depth == 0; }));
  EXPECT_TRUE(Exists("bootstrap-token-later1"));
  clock_.Advance(std::chrono::minutes(1));
  ASSERT_TRUE(Settle([&] { return !Exists("bootstrap-token-later1"); }));
  EXPECT_TRUE(Exists("bootstrap-token-never1"));

  // One made while it runs, already expired, goes as well.
  Token("made01", clock_.Now() - std::chrono::seconds(1));
  ASSERT_TRUE(Settle([&] { return !Exists("bootstrap-token-made01"); }));
}

}  // namespace
}  // namespace flotilla::federation::cluster
