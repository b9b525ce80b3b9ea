// The audit policy's rule matching, the events a request leaves in the log,
// and rotation.
#include "apiserver/audit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "apiserver/api_server_test_util.h"

namespace flotilla::apiserver {
namespace {

using ::flotilla::apiserver::testing::RecordingResponder;
using ::testing::HasSubstr;

constexpr char kPolicy[] = R"(
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: None
    nonResourceURLs: ["/healthz*", "/version"]
  - level: Metadata
    resources:
      - group: ""
        resources: ["secrets", "serviceaccounts/token"]
  - level: None
    users: ["quiet"]
  - level: RequestResponse
    verbs: ["create", "update", "patch", "delete"]
    namespaces: ["loud"]
  - level: Request
    userGroups: ["auditors"]
    resources:
      - group: "apps"
        resources: ["*/scale"]
  - level: Metadata
)";

RequestAttributes Attrs(std::string verb, std::string group, std::string resource,
                        std::string ns = "", std::string sub = "") {
  return {std::move(verb),
          std::move(group),
          std::move(resource),
          std::move(sub),
          std::move(ns),
          "",
          true,
          ""};
}

TEST(AuditPolicyTest, FirstMatchingRuleDecides) {
  auto policy = AuditPolicy::Parse(kPolicy);
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  UserInfo ann{"ann", "", {"system:authenticated"}};
  UserInfo auditor{"aud", "", {"auditors"}};
  auto level = [&](const UserInfo& u, RequestAttributes a) { return policy->Decide(u, a).first; };
  RequestAttributes health{"get", "", "", "", "", "", false, "/healthz/ping"};
  EXPECT_EQ(level(ann, health), AuditLevel::kNone);
  EXPECT_EQ(level(ann, Attrs("get", "", "secrets", "loud")), AuditLevel::kMetadata);
  EXPECT_EQ(level(ann, Attrs("create", "", "serviceaccounts", "a", "token")),
            AuditLevel::kMetadata);
  EXPECT_EQ(level(ann, Attrs("create", "", "configmaps", "loud")), AuditLevel::kRequestResponse);
  EXPECT_EQ(level(ann, Attrs("get", "", "configmaps", "loud")), AuditLevel::kMetadata);
  EXPECT_EQ(level({"quiet", "", {}}, Attrs("create", "", "configmaps", "loud")), AuditLevel::kNone);
  EXPECT_EQ(level(auditor, Attrs("update", "apps", "deployments", "x", "scale")),
            AuditLevel::kRequest);
  EXPECT_EQ(level(auditor, Attrs("update", "apps", "deployments", "x")), AuditLevel::kMetadata);
  EXPECT_EQ(policy->Decide(ann, Attrs("get", "", "pods")).second,
            std::vector<std::string>{"RequestReceived"});
}

TEST(AuditPolicyTest, BadPoliciesAreRefusedWithTheReason) {
  EXPECT_THAT(AuditPolicy::Parse("kind: Policy\nrules:\n- level: Loud\n").status().message(),
              HasSubstr("unknown level \"Loud\""));
  EXPECT_THAT(AuditPolicy::Parse("kind: Policy\nomitStages: [Nope]\n").status().message(),
              HasSubstr("unknown stage \"Nope\""));
  EXPECT_FALSE(AuditPolicy::Parse("kind: ConfigMap\n").ok());
  EXPECT_FALSE(AuditPolicy::Parse("kind: [unclosed\n").ok());
}

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("audit-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<json::object> Events(const std::string& path) {
    std::vector<json::object> out;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      auto obj = ParseJsonObject(line);
      EXPECT_TRUE(obj.ok()) << line;
      if (obj.ok()) out.push_back(std::move(*obj));
    }
    return out;
  }

  std::filesystem::path dir_;
  FakeClock clock_;
};

TEST_F(AuditLogTest, ACreateIsRecordedWithUserVerbResourceCodeAndBodies) {
  auto policy = AuditPolicy::Parse(kPolicy);
  ASSERT_TRUE(policy.ok());
  std::string path = (dir_ / "audit.log").string();
  auto log = AuditLog::Open({path, 0, 0}, std::move(*policy), clock_);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  RequestAttributes attrs = Attrs("create", "", "configmaps", "loud");
  UserInfo ann{"ann", "u1", {"system:authenticated"}};
  AuditRequest req(log->get(), "POST", "/api/v1/namespaces/loud/configmaps", "10.0.0.7:4242",
                   "kubectl/v1.32", attrs, "v1");
  req.Received(&ann, nullptr, R"({"metadata": {"name": "c"}, "data": {"k": "v"}})");
  req.Decided({true, "RBAC: allowed by X"});
  EXPECT_TRUE(req.WantsResponseBody());
  req.ResponseComplete(201, R"({"metadata": {"name": "c", "uid": "x"}})");

  // A secret read by someone else: Metadata, no bodies; a 403 keeps its reason.
  AuditRequest secret(log->get(), "GET", "/api/v1/namespaces/a/secrets/s", "[::1]:1", "",
                      Attrs("get", "", "secrets", "a"), "v1");
  UserInfo bob{"bob", "", {}};
  UserInfo as{"eve", "", {}};
  secret.Received(&bob, &as, "");
  secret.ResponseComplete(403, R"({"kind": "Status", "status": "Failure", "reason": "Forbidden",
                                   "message": "no", "code": 403})");
  AuditRequest quiet(log->get(), "POST", "/x", "1.2.3.4:5", "", attrs, "v1");
  UserInfo quiet_user{"quiet", "", {}};
  quiet.Received(&quiet_user, nullptr, "{}");
  quiet.ResponseComplete(201, "{}");

  std::vector<json::object> events = Events(path);
  ASSERT_EQ(events.size(), 2u);  // RequestReceived is omitted; quiet is None
  const json::object& e = events[0];
  EXPECT_EQ(StringAt(e, "apiVersion"), "audit.k8s.io/v1");
  EXPECT_EQ(StringAt(e, "level"), "RequestResponse");
  EXPECT_EQ(StringAt(e, "stage"), "ResponseComplete");
  EXPECT_EQ(StringAt(e, "verb"), "create");
  EXPECT_EQ(StringAt(e, "user.username"), "ann");
  EXPECT_EQ(StringAt(e, "objectRef.resource"), "configmaps");
  EXPECT_EQ(StringAt(e, "objectRef.namespace"), "loud");
  EXPECT_EQ(StringAt(e, "objectRef.name"), "c");
  EXPECT_EQ(IntAt(e, "responseStatus.code"), 201);
  EXPECT_EQ(StringAt(e, "requestObject.data.k"), "v");
  EXPECT_EQ(StringAt(e, "responseObject.metadata.uid"), "x");
  EXPECT_EQ(StringAt(e, "sourceIPs.0"), "");  // arrays are not dotted paths
  EXPECT_EQ(GetArray(e, "sourceIPs")->at(0), json::value("10.0.0.7"));
  EXPECT_EQ(StringAt(e, "userAgent"), "kubectl/v1.32");
  EXPECT_EQ(GetObject(e, "annotations")->at("authorization.k8s.io/decision"), "allow");
  EXPECT_FALSE(StringAt(e, "auditID").empty());
  const json::object& s = events[1];
  EXPECT_EQ(StringAt(s, "level"), "Metadata");
  EXPECT_EQ(StringAt(s, "user.username"), "bob");
  EXPECT_EQ(StringAt(s, "impersonatedUser.username"), "eve");
  EXPECT_EQ(GetArray(s, "sourceIPs")->at(0), json::value("::1"));
  EXPECT_EQ(StringAt(s, "responseStatus.reason"), "Forbidden");
  EXPECT_FALSE(s.contains("requestObject"));
  EXPECT_FALSE(s.contains("responseObject"));
}

TEST_F(AuditLogTest, RotatesPastMaxSizeKeepingMaxBackups) {
  auto policy = AuditPolicy::Parse("kind: Policy\nrules:\n- level: RequestResponse\n");
  ASSERT_TRUE(policy.ok());
  std::string path = (dir_ / "audit.log").string();
  auto log = AuditLog::Open({path, 1, 2}, std::move(*policy), clock_);
  ASSERT_TRUE(log.ok());
  std::string big = R"({"data": ")" + std::string(300 * 1024, 'x') + "\"}";
  UserInfo ann{"ann", "", {}};
  for (int i = 0; i < 12; ++i) {
    clock_.Advance(std::chrono::seconds(1));
    AuditRequest r(log->get(), "POST", "/api/v1/namespaces/a/configmaps", "1.1.1.1:1", "",
                   Attrs("create", "", "configmaps", "a"), "v1");
    r.Received(&ann, nullptr, big);
    r.ResponseComplete(201, "{}");
  }
  std::vector<std::string> backups;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    std::string name = entry.path().filename().string();
    if (name != "audit.log") backups.push_back(name);
    EXPECT_LE(std::filesystem::file_size(entry.path()), 1u << 20) << name;
  }
  ASSERT_EQ(backups.size(), 2u);
  for (const std::string& b : backups) {
    EXPECT_THAT(
        b, ::testing::MatchesRegex(
               R"(audit-[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}-[0-9]{2}-[0-9]{2}\.[0-9]{3}\.log)"));
  }
  EXPECT_FALSE(Events(path).empty());
}

}  // namespace
}  // namespace flotilla::apiserver
