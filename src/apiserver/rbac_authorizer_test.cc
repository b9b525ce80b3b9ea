// RBAC through the API server: the bootstrap policy, bindings, escalation,
// aggregation, access reviews, service account tokens and impersonation.
#include "apiserver/rbac_authorizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <thread>

#include "apiserver/api_server_test_util.h"
#include "apiserver/bootstrap_token.h"
#include "apiserver/certs.h"
#include "apiserver/meta.h"
#include "apiserver/reviews.h"

namespace flotilla::apiserver {
namespace {

using ::flotilla::apiserver::testing::RecordingResponder;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kTokens[] =
    "tok-admin,admin,1,system:masters\n"
    "tok-ann,ann,2\n"
    "tok-bob,bob,3\n"
    "tok-flotilla-viewer,flotilla-viewer,4,flotilla:viewers\n";

class RbacServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto key = certs::GenerateKey();
    ASSERT_TRUE(key.ok());
    auto tokens = ServiceAccountTokens::FromKeyPem(*certs::KeyToPem(key->get()));
    ASSERT_TRUE(tokens.ok());
    tokens_ = std::move(*tokens);
    s_ = std::make_unique<testing::TestServer>(testing::TestServer::Options{
        .tokens_csv = kTokens,
        .service_account_tokens = tokens_.get(),
        .rbac = true,
        .proxy = [this](Request& req, const ProxyTarget& target, const UserInfo& user,
                        Responder& resp) {
          proxied_.push_back({req.method, target.name, target.path, target.query, user.name});
          resp.Respond(200, {{"Content-Type", "text/plain"}}, "proxied");
        }});
    ASSERT_TRUE(s_->started().ok()) << s_->started().ToString();
    server_ = &s_->api();
    store_ = &s_->store();
    clock_ = &s_->clock();
    s_->authn().SetTokenValidator(
        ServerTokenValidator(*tokens_, {std::string(kServiceAccountIssuer)}, server_->objects()));
    for (const char* ns : {"a", "b"}) {
      ASSERT_EQ(Do("admin", "POST", "/api/v1/namespaces",
                   R"({"metadata": {"name": ")" + std::string(ns) + "\"}}"),
                201);
    }
  }

  // Sends the request as the holder of `who`'s token ("tok-" + who, or a
  // raw token); returns the code. RBAC writes wait until decisions reflect them.
  int Do(const std::string& who, const std::string& method, const std::string& target,
         const std::string& body = "", const Headers& extra = {}) {
    last_ = std::make_unique<RecordingResponder>();
    Headers headers = extra;
    headers.emplace_back("authorization",
                         "Bearer " + (who.find('.') != std::string::npos ? who : "tok-" + who));
    s_->Do(*last_, method, target, body, "application/json", "application/json", headers);
    if (last_->code() < 300 && method != "GET" && target.find("/rbac.") != std::string::npos) {
      // A DELETE answers with the object as it was; its revision is the last.
      server_->rbac().WaitForRevision(method == "DELETE" ? store_->CurrentRevision()
                                                         : ResourceVersionOf(last_->Json()));
    }
    return last_->code();
  }

  std::string Message() { return StringAt(last_->Json(), "message"); }

  void Bind(const std::string& ns, const std::string& name, const std::string& role_kind,
            const std::string& role, const std::string& subject) {
    std::string path =
        ns.empty() ? "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
                   : "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/rolebindings";
    std::string body = R"({"metadata": {"name": ")" + name + R"("}, "roleRef": {"apiGroup":
        "rbac.authorization.k8s.io", "kind": ")" +
                       role_kind + R"(", "name": ")" + role + R"("}, "subjects": [)" + subject +
                       "]}";
    ASSERT_EQ(Do("admin", "POST", path, body), 201) << last_->body();
  }

  static std::string User(const std::string& name) {
    return R"({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": ")" + name + "\"}";
  }

  // Polls `ready` (the aggregation controller works in the background).
  bool Eventually(const std::function<bool()>& ready) {
    for (int i = 0; i < 2000; ++i) {
      if (ready()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  // What the proxy handler was given: method, name, path, query, user.
  std::vector<std::array<std::string, 5>> proxied_;
  std::unique_ptr<ServiceAccountTokens> tokens_;
  std::unique_ptr<testing::TestServer> s_;
  ApiServer* server_ = nullptr;      // s_'s
  storage::Store* store_ = nullptr;  // s_'s
  FakeClock* clock_ = nullptr;       // s_'s
  std::unique_ptr<RecordingResponder> last_;
};

constexpr char kConfigMaps[] = "/api/v1/namespaces/{ns}/configmaps";

std::string ConfigMaps(const std::string& ns) {
  std::string p = kConfigMaps;
  return p.replace(p.find("{ns}"), 4, ns);
}

TEST_F(RbacServerTest, BootstrapRolesAreServedAndAggregated) {
  ASSERT_EQ(Do("admin", "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/view"), 200);
  std::string view = last_->body();
  EXPECT_THAT(view, HasSubstr("\"configmaps\""));
  EXPECT_THAT(view, HasSubstr("\"clusters\""));
  EXPECT_THAT(view, Not(HasSubstr("\"secrets\"")));
  EXPECT_EQ(Do("flotilla-viewer", "GET", ConfigMaps("a")), 200);
  EXPECT_EQ(Do("flotilla-viewer", "GET", "/api/v1/namespaces/a/secrets"), 403);
  EXPECT_EQ(Message(),
            R"(secrets is forbidden: User "flotilla-viewer" cannot list resource "secrets" in )"
            R"(API group "" in the namespace "a")");
  EXPECT_EQ(Do("flotilla-viewer", "GET", "/metrics"), 200);
  EXPECT_EQ(Do("ann", "GET", ConfigMaps("a")), 403);
  EXPECT_EQ(Do("ann", "GET", "/apis"), 200);
}

TEST_F(RbacServerTest, EditInOneNamespaceOnly) {
  Bind("a", "ann-edit", "ClusterRole", "edit", User("ann"));
  EXPECT_EQ(Do("ann", "POST", ConfigMaps("a"), R"({"metadata": {"name": "c"}})"), 201);
  EXPECT_EQ(Do("ann", "POST", ConfigMaps("b"), R"({"metadata": {"name": "c"}})"), 403);
  EXPECT_THAT(Message(), HasSubstr(R"(User "ann" cannot create resource "configmaps")"));
  // Deleting the binding takes the right away again.
  ASSERT_EQ(Do("admin", "DELETE",
               "/apis/rbac.authorization.k8s.io/v1/namespaces/a/rolebindings/ann-edit"),
            200);
  EXPECT_EQ(Do("ann", "POST", ConfigMaps("a"), R"({"metadata": {"name": "d"}})"), 403);
}

TEST_F(RbacServerTest, EscalationIsRefusedUnlessHeldOrBindGranted) {
  Bind("a", "ann-admin", "ClusterRole", "admin", User("ann"));
  const std::string roles = "/apis/rbac.authorization.k8s.io/v1/namespaces/a/roles";
  const std::string bindings = "/apis/rbac.authorization.k8s.io/v1/namespaces/a/rolebindings";
  // A role with rules ann holds in a.
  EXPECT_EQ(Do("ann", "POST", roles, R"({"metadata": {"name": "cm"}, "rules": [{"apiGroups":
      [""], "resources": ["configmaps"], "verbs": ["get", "create"]}]})"),
            201)
      << last_->body();
  // One with a rule she does not hold.
  EXPECT_EQ(Do("ann", "POST", roles, R"({"metadata": {"name": "leases"}, "rules": [{"apiGroups":
      ["federation"], "resources": ["clusters"], "verbs": ["delete"]}]})"),
            403);
  EXPECT_THAT(Message(), HasSubstr(R"(roles.rbac.authorization.k8s.io "leases" is forbidden: )"
                                   R"(user "ann" (groups=["system:authenticated"]) is attempting )"
                                   R"(to grant RBAC permissions not currently held:)"
                                   "\n"
                                   R"({APIGroups:["federation"], Resources:["clusters"], )"
                                   R"(Verbs:["delete"]})"));
  // Binding bob to edit is fine (admin holds edit's rules), to cluster-admin not.
  EXPECT_EQ(Do("ann", "POST", bindings, R"({"metadata": {"name": "bob-edit"}, "roleRef":
      {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
      "subjects": [)" + User("bob") + "]}"),
            201)
      << last_->body();
  std::string to_cluster_admin = R"({"metadata": {"name": "bob-root"}, "roleRef":
      {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
      "subjects": [)" + User("bob") +
                                 "]}";
  EXPECT_EQ(Do("ann", "POST", bindings, to_cluster_admin), 403);
  EXPECT_THAT(Message(), HasSubstr("attempting to grant RBAC permissions not currently held"));
  // With `bind` on cluster-admin she may.
  ASSERT_EQ(Do("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
               R"({"metadata": {"name": "bind-root"}, "rules": [{"apiGroups":
               ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["bind"],
               "resourceNames": ["cluster-admin"]}]})"),
            201);
  Bind("a", "ann-bind", "ClusterRole", "bind-root", User("ann"));
  EXPECT_EQ(Do("ann", "POST", bindings, to_cluster_admin), 201) << last_->body();
  // An update is checked like a create.
  EXPECT_EQ(Do("ann", "PATCH", roles + "/cm",
               R"({"rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]})",
               {{"content-type", "application/merge-patch+json"}}),
            403);
  EXPECT_THAT(Message(), HasSubstr("not currently held"));
  // An update that grants nothing new is not checked: ann may annotate a
  // role whose rules she does not hold, not relabel it nor change them.
  ASSERT_EQ(Do("admin", "POST", roles, R"({"metadata": {"name": "clusters"}, "rules":
      [{"apiGroups": ["federation"], "resources": ["clusters"], "verbs": ["delete"]}]})"),
            201);
  const Headers merge = {{"content-type", "application/merge-patch+json"}};
  EXPECT_EQ(Do("ann", "PATCH", roles + "/clusters",
               R"({"metadata": {"annotations": {"team": "ops"}}})", merge),
            200)
      << last_->body();
  EXPECT_EQ(
      Do("ann", "PATCH", roles + "/clusters", R"({"metadata": {"labels": {"x": "y"}}})", merge),
      403);
}

TEST_F(RbacServerTest, AggregatedRolesPickUpNewRules) {
  ASSERT_EQ(Do("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
               R"({"metadata": {"name": "crontabs-view", "labels":
               {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}, "rules": [{"apiGroups":
               ["stable.example.com"], "resources": ["crontabs"], "verbs": ["get"]}]})"),
            201);
  for (const char* role : {"view", "edit", "admin"}) {
    EXPECT_TRUE(Eventually([&] {
      Do("admin", "GET", std::string("/apis/rbac.authorization.k8s.io/v1/clusterroles/") + role);
      return last_->body().find("crontabs") != std::string::npos;
    })) << role;
  }
  // Only a user who may escalate may write an aggregationRule.
  Bind("a", "ann-admin", "ClusterRole", "admin", User("ann"));
  ASSERT_EQ(Do("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
               R"({"metadata": {"name": "cr-writer"}, "rules": [{"apiGroups":
               ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs":
               ["create"]}]})"),
            201);
  Bind("", "ann-cr", "ClusterRole", "cr-writer", User("ann"));
  EXPECT_EQ(Do("ann", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
               R"({"metadata": {"name": "mine"}, "aggregationRule": {"clusterRoleSelectors":
               [{"matchLabels": {"x": "y"}}]}})"),
            403);
  EXPECT_THAT(Message(),
              HasSubstr("must have cluster-admin privileges to use the aggregationRule"));
}

TEST_F(RbacServerTest, AccessReviews) {
  Bind("a", "ann-edit", "ClusterRole", "edit", User("ann"));
  auto ssar = [&](const std::string& ns) {
    return R"({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"namespace": ")" +
           ns + R"(", "verb": "create", "resource": "configmaps"}}})";
  };
  ASSERT_EQ(Do("ann", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ssar("a")),
            201);
  EXPECT_EQ(Find(last_->Json(), "status.allowed")->as_bool(), true);
  EXPECT_EQ(StringAt(last_->Json(), "status.reason"),
            R"(RBAC: allowed by RoleBinding "a/ann-edit" of ClusterRole "edit")");
  ASSERT_EQ(Do("ann", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ssar("b")),
            201);
  EXPECT_EQ(Find(last_->Json(), "status.allowed")->as_bool(), false);
  // Neither or both kinds of attributes: 422.
  EXPECT_EQ(Do("ann", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
               R"({"spec": {}})"),
            422);
  // Unknown fields are refused, as in every strict decode.
  EXPECT_EQ(Do("ann", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
               R"({"spec": {"resourceAttributes": {"verbb": "get"}}})"),
            400);

  ASSERT_EQ(Do("ann", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
               R"({"spec": {"namespace": "a"}})"),
            201);
  EXPECT_THAT(last_->body(), HasSubstr("\"configmaps\""));
  EXPECT_THAT(last_->body(), HasSubstr("\"selfsubjectaccessreviews\""));
  EXPECT_THAT(last_->body(), HasSubstr("\"/version\""));

  // SubjectAccessReview: the admin may ask about bob; ann may not ask.
  std::string sar = R"({"spec": {"user": "ann", "resourceAttributes": {"namespace": "a",
      "verb": "delete", "resource": "configmaps", "name": "x"}}})";
  ASSERT_EQ(Do("admin", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar), 201);
  EXPECT_EQ(Find(last_->Json(), "status.allowed")->as_bool(), true);
  EXPECT_EQ(Do("ann", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar), 403);
  EXPECT_EQ(Do("admin", "POST",
               "/apis/authorization.k8s.io/v1/namespaces/b/localsubjectaccessreviews", sar),
            422);
  EXPECT_THAT(Message(), HasSubstr("must match"));
  // Reviews are answered, never stored or read.
  EXPECT_EQ(Do("admin", "GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"), 405);
}

TEST_F(RbacServerTest, ServiceAccountTokensExpireAndDieWithTheirAccount) {
  ASSERT_EQ(Do("admin", "POST", "/api/v1/namespaces/a/serviceaccounts",
               R"({"metadata": {"name": "bot"}})"),
            201);
  Bind("a", "bot-edit", "ClusterRole", "edit",
       R"({"kind": "ServiceAccount", "name": "bot", "namespace": "a"})");
  const std::string token_path = "/api/v1/namespaces/a/serviceaccounts/bot/token";
  EXPECT_EQ(Do("admin", "POST", token_path, R"({"spec": {"expirationSeconds": 60}})"), 422);
  EXPECT_THAT(Message(), HasSubstr("may not specify a duration less than 10 minutes"));
  EXPECT_EQ(Do("admin", "POST", "/api/v1/namespaces/a/serviceaccounts/nobody/token", "{}"), 404);
  ASSERT_EQ(Do("admin", "POST", token_path,
               R"({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                   "spec": {"expirationSeconds": 600}})"),
            201);
  std::string token = StringAt(last_->Json(), "status.token");
  EXPECT_EQ(StringAt(last_->Json(), "status.expirationTimestamp"),
            FormatRfc3339(clock_->Now() + std::chrono::seconds(600)));
  EXPECT_EQ(Do(token, "POST", ConfigMaps("a"), R"({"metadata": {"name": "by-bot"}})"), 201);
  EXPECT_EQ(Do(token, "GET", ConfigMaps("b")), 403);
  EXPECT_THAT(Message(), HasSubstr(R"(User "system:serviceaccount:a:bot")"));
  // TokenReview says who it is.
  ASSERT_EQ(Do("admin", "POST", "/apis/authentication.k8s.io/v1/tokenreviews",
               R"({"spec": {"token": ")" + token + "\"}}"),
            201);
  EXPECT_EQ(StringAt(last_->Json(), "status.user.username"), "system:serviceaccount:a:bot");
  EXPECT_THAT(last_->body(), HasSubstr("system:serviceaccounts:a"));

  clock_->Advance(std::chrono::seconds(600));
  EXPECT_EQ(Do(token, "GET", ConfigMaps("a")), 401);

  ASSERT_EQ(Do("admin", "POST", token_path, "{}"), 201);
  std::string fresh = StringAt(last_->Json(), "status.token");
  EXPECT_EQ(Do(fresh, "GET", ConfigMaps("a")), 200);
  ASSERT_EQ(Do("admin", "DELETE", "/api/v1/namespaces/a/serviceaccounts/bot"), 200);
  EXPECT_EQ(Do(fresh, "GET", ConfigMaps("a")), 401);
  // A new account of the same name does not revive the old one's tokens.
  ASSERT_EQ(Do("admin", "POST", "/api/v1/namespaces/a/serviceaccounts",
               R"({"metadata": {"name": "bot"}})"),
            201);
  EXPECT_EQ(Do(fresh, "GET", ConfigMaps("a")), 401);
}

TEST(BootstrapTokenTest, ParsesOnlyTheIdDotSecretForm) {
  auto token = ParseBootstrapToken("abcdef.0123456789abcdef");
  ASSERT_TRUE(token.has_value());
  EXPECT_EQ(token->id, "abcdef");
  EXPECT_EQ(token->secret, "0123456789abcdef");
  for (const char* bad :
       {"", "abcdef", "abcdef.", "abcde.0123456789abcdef", "abcdef.0123456789abcde",
        "ABCDEF.0123456789abcdef", "abcdef.0123456789abcdef0", "abc-ef.0123456789abcdef",
        "abcdef.0123456789abcdef.x"}) {
    EXPECT_FALSE(ParseBootstrapToken(bad).has_value()) << bad;
  }
  BootstrapToken a = NewBootstrapToken(), b = NewBootstrapToken();
  EXPECT_TRUE(ParseBootstrapToken(a.String()).has_value()) << a.String();
  EXPECT_NE(a.String(), b.String());
}

TEST_F(RbacServerTest, BootstrapTokensAuthenticateUntilTheyExpireOrAreDeleted) {
  const std::string secrets = "/api/v1/namespaces/kube-system/secrets";
  BootstrapTokenSpec spec{.token = {"abcdef", "0123456789abcdef"},
                          .expiration = clock_->Now() + std::chrono::seconds(30),
                          .description = "for the edge agent",
                          .extra_groups = {"system:bootstrappers:flotilla:agent"}};
  ASSERT_EQ(Do("admin", "POST", secrets, json::serialize(BootstrapTokenSecret(spec))), 201)
      << last_->body();
  const std::string whoami = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
  const std::string review = R"({"apiVersion": "authentication.k8s.io/v1",
                                 "kind": "SelfSubjectReview"})";
  ASSERT_EQ(Do(spec.token.String(), "POST", whoami, review), 201) << last_->body();
  EXPECT_EQ(StringAt(last_->Json(), "status.userInfo.username"), "system:bootstrap:abcdef");
  EXPECT_THAT(
      last_->body(),
      HasSubstr(
          R"("system:bootstrappers","system:bootstrappers:flotilla:agent","system:authenticated")"));
  // Only what its groups are bound to: the agent bootstrapper's rules.
  EXPECT_EQ(Do(spec.token.String(), "GET", ConfigMaps("a")), 403);

  // A wrong secret or an unknown id says nothing more than that.
  EXPECT_EQ(Do("abcdef.0123456789abcdeg", "POST", whoami, review), 401);
  EXPECT_EQ(Message(), "Unauthorized: invalid bootstrap token");
  EXPECT_EQ(Do("zzzzzz.0123456789abcdef", "POST", whoami, review), 401);
  EXPECT_EQ(Message(), "Unauthorized: invalid bootstrap token");

  clock_->Advance(std::chrono::seconds(30));
  EXPECT_EQ(Do(spec.token.String(), "POST", whoami, review), 401);
  EXPECT_EQ(Message(),
            "Unauthorized: bootstrap token abcdef expired at " + FormatRfc3339(*spec.expiration));

  // Not for authentication, or with a group outside system:bootstrappers.
  BootstrapTokenSpec other{.token = {"ghijkl", "0123456789abcdef"},
                           .extra_groups = {"system:masters"}};
  ASSERT_EQ(Do("admin", "POST", secrets, json::serialize(BootstrapTokenSecret(other))), 201);
  EXPECT_EQ(Do(other.token.String(), "POST", whoami, review), 401);
  EXPECT_THAT(Message(), HasSubstr("names a group outside system:bootstrappers: system:masters"));
  json::object unused = BootstrapTokenSecret({.token = {"mnopqr", "0123456789abcdef"}});
  unused["data"].as_object()["usage-bootstrap-authentication"] = "ZmFsc2U=";  // "false"
  ASSERT_EQ(Do("admin", "POST", secrets, json::serialize(unused)), 201);
  EXPECT_EQ(Do("mnopqr.0123456789abcdef", "POST", whoami, review), 401);
  EXPECT_EQ(Message(), "Unauthorized: bootstrap token mnopqr is not for authentication");

  // Without expiry it lasts until its Secret is deleted.
  BootstrapTokenSpec lasting{.token = {"stuvwx", "0123456789abcdef"}};
  ASSERT_EQ(Do("admin", "POST", secrets, json::serialize(BootstrapTokenSecret(lasting))), 201);
  clock_->Advance(std::chrono::hours(24 * 365));
  EXPECT_EQ(Do(lasting.token.String(), "POST", whoami, review), 201);
  ASSERT_EQ(Do("admin", "DELETE", secrets + "/bootstrap-token-stuvwx"), 200);
  EXPECT_EQ(Do(lasting.token.String(), "POST", whoami, review), 401);
  EXPECT_EQ(Message(), "Unauthorized: invalid bootstrap token");
}

TEST_F(RbacServerTest, ImpersonationNeedsImpersonate) {
  Bind("a", "bob-view", "ClusterRole", "view", User("bob"));
  Headers as_bob = {{"impersonate-user", "bob"}};
  EXPECT_EQ(Do("ann", "GET", ConfigMaps("a"), "", as_bob), 403);
  EXPECT_EQ(Message(), R"(users "bob" is forbidden: User "ann" cannot impersonate resource )"
                       R"("users" in API group "" at the cluster scope)");
  // The admin may; the request is then bob's.
  EXPECT_EQ(Do("admin", "GET", ConfigMaps("a"), "", as_bob), 200);
  EXPECT_EQ(Do("admin", "POST", ConfigMaps("a"), R"({"metadata": {"name": "x"}})", as_bob), 403);
  EXPECT_THAT(Message(), HasSubstr(R"(User "bob" cannot create)"));
  // Granted impersonate on bob only, ann may act as bob but not as admin.
  ASSERT_EQ(Do("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
               R"({"metadata": {"name": "as-bob"}, "rules": [{"apiGroups": [""], "resources":
               ["users"], "verbs": ["impersonate"], "resourceNames": ["bob"]}]})"),
            201);
  Bind("", "ann-as-bob", "ClusterRole", "as-bob", User("ann"));
  EXPECT_EQ(Do("ann", "GET", ConfigMaps("a"), "", as_bob), 200);
  EXPECT_EQ(Do("ann", "GET", ConfigMaps("a"), "", {{"impersonate-user", "admin"}}), 403);
  EXPECT_EQ(Do("ann", "GET", ConfigMaps("a"), "",
               {{"impersonate-user", "bob"}, {"impersonate-group", "system:masters"}}),
            403);
  EXPECT_THAT(Message(), HasSubstr(R"(groups "system:masters" is forbidden)"));
  EXPECT_EQ(Do("admin", "GET", ConfigMaps("a"), "", {{"impersonate-group", "g"}}), 400);
}

// A cluster's proxy subresource: RBAC on clusters/proxy with the verb of
// the HTTP method (a proxied ?watch=true is still a get), decided before
// the handler sees anything; the handler gets the path and query after
// {name}/proxy as they were sent.
TEST_F(RbacServerTest, ClusterProxyIsAuthorizedByMethodThenHandedOver) {
  const std::string proxy = "/apis/federation/v1beta1/clusters/a/proxy";
  EXPECT_EQ(Do("ann", "GET", proxy + "/api/v1/pods"), 403);
  EXPECT_THAT(Message(),
              HasSubstr(R"(cannot get resource "clusters/proxy" in API group "federation")"));
  EXPECT_TRUE(proxied_.empty());

  ASSERT_EQ(Do("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
               R"({"metadata": {"name": "proxy-a"}, "rules": [{"apiGroups": ["federation"],
                   "resources": ["clusters/proxy"], "resourceNames": ["a"], "verbs": ["get"]}]})"),
            201);
  Bind("", "ann-proxy-a", "ClusterRole", "proxy-a", User("ann"));
  EXPECT_EQ(
      Do("ann", "GET", proxy + "/api/v1/namespaces/x%2Fy/pods?watch=true&labelSelector=k%3Dv"),
      200);
  EXPECT_EQ(last_->body(), "proxied");
  ASSERT_EQ(proxied_.size(), 1u);
  EXPECT_EQ(proxied_[0], (std::array<std::string, 5>{"GET", "a", "/api/v1/namespaces/x%2Fy/pods",
                                                     "watch=true&labelSelector=k%3Dv", "ann"}));
  EXPECT_EQ(Do("ann", "GET", proxy), 200);
  EXPECT_EQ(proxied_.back()[2], "/");
  EXPECT_EQ(Do("ann", "GET", proxy + "/"), 200);
  EXPECT_EQ(proxied_.back()[2], "/");
  // Another cluster, or another verb: not granted.
  EXPECT_EQ(Do("ann", "GET", "/apis/federation/v1beta1/clusters/b/proxy/api"), 403);
  EXPECT_EQ(Do("ann", "POST", proxy + "/api/v1/namespaces/default/configmaps", "{}"), 403);
  EXPECT_THAT(Message(), HasSubstr(R"(cannot create resource "clusters/proxy")"));
  EXPECT_EQ(Do("ann", "DELETE", proxy + "/api/v1/namespaces/default/configmaps/x"), 403);
  EXPECT_EQ(proxied_.size(), 3u);
  // The admin may do anything; the handler sees the method.
  EXPECT_EQ(Do("admin", "DELETE", proxy + "/api/v1/namespaces/default/configmaps/x"), 200);
  EXPECT_EQ(proxied_.back()[0], "DELETE");
  EXPECT_EQ(proxied_.back()[4], "admin");
}

TEST_F(RbacServerTest, DiscoveryListsTheClusterProxy) {
  ASSERT_EQ(Do("admin", "GET", "/apis/federation/v1beta1"), 200);
  json::object doc = last_->Json();
  const json::value* resources = Find(doc, "resources");
  ASSERT_NE(resources, nullptr) << last_->body();
  bool found = false;
  for (const auto& r : resources->as_array()) {
    if (StringAt(r.as_object(), "name") != "clusters/proxy") continue;
    found = true;
    EXPECT_EQ(StringAt(r.as_object(), "kind"), "ClusterProxyOptions");
    EXPECT_EQ(json::serialize(r.as_object().at("verbs")),
              R"(["create","delete","get","patch","update"])");
  }
  EXPECT_TRUE(found) << last_->body();
}

}  // namespace
}  // namespace flotilla::apiserver
