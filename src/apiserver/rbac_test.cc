// RBAC rule matching, coverage, aggregation and the bootstrap policy.
#include "apiserver/rbac.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "apiserver/auth_test_util.h"
#include "apiserver/rbac_bootstrap.h"

namespace flotilla::apiserver::rbac {
namespace {

using ::flotilla::apiserver::testing::Path;
using ::flotilla::apiserver::testing::Resource;
using ::flotilla::apiserver::testing::User;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

PolicyRule Rule(std::vector<std::string> groups, std::vector<std::string> resources,
                std::vector<std::string> verbs, std::vector<std::string> names = {}) {
  return PolicyRule{
      std::move(verbs), std::move(groups), std::move(resources), std::move(names), {}};
}

PolicyRule UrlRule(std::vector<std::string> urls, std::vector<std::string> verbs) {
  return PolicyRule{std::move(verbs), {}, {}, {}, std::move(urls)};
}

TEST(RuleTest, VerbsGroupsResourcesAndStars) {
  RequestAttributes get_cm = Resource("get", "", "configmaps", "ns", "c");
  EXPECT_TRUE(Allows(Rule({""}, {"configmaps"}, {"get"}), get_cm));
  EXPECT_TRUE(Allows(Rule({"*"}, {"*"}, {"*"}), get_cm));
  EXPECT_FALSE(Allows(Rule({"apps"}, {"configmaps"}, {"get"}), get_cm));
  EXPECT_FALSE(Allows(Rule({""}, {"configmaps"}, {"list"}), get_cm));
  EXPECT_FALSE(Allows(Rule({""}, {"secrets"}, {"get"}), get_cm));
  // A resource rule never allows a path, nor a path rule a resource.
  EXPECT_FALSE(Allows(Rule({"*"}, {"*"}, {"*"}), Path("get", "/metrics")));
  EXPECT_FALSE(Allows(UrlRule({"*"}, {"*"}), get_cm));
}

TEST(RuleTest, Subresources) {
  RequestAttributes scale = Resource("update", "apps", "deployments", "ns", "web");
  scale.subresource = "scale";
  EXPECT_FALSE(Allows(Rule({"apps"}, {"deployments"}, {"update"}), scale));
  EXPECT_TRUE(Allows(Rule({"apps"}, {"deployments/scale"}, {"update"}), scale));
  EXPECT_TRUE(Allows(Rule({"apps"}, {"*/scale"}, {"update"}), scale));
  EXPECT_FALSE(Allows(Rule({"apps"}, {"*/status"}, {"update"}), scale));
  EXPECT_FALSE(Allows(Rule({"apps"}, {"deployments/scale"}, {"update"}),
                      Resource("update", "apps", "deployments", "ns", "web")));
}

TEST(RuleTest, ResourceNamesNeedANamedRequest) {
  PolicyRule only_a = Rule({""}, {"configmaps"}, {"get", "create", "list"}, {"a"});
  EXPECT_TRUE(Allows(only_a, Resource("get", "", "configmaps", "ns", "a")));
  EXPECT_FALSE(Allows(only_a, Resource("get", "", "configmaps", "ns", "b")));
  EXPECT_FALSE(Allows(only_a, Resource("create", "", "configmaps", "ns")));
  EXPECT_FALSE(Allows(only_a, Resource("list", "", "configmaps", "ns")));
}

TEST(RuleTest, NonResourceUrlsExactOrPrefix) {
  PolicyRule rule = UrlRule({"/healthz", "/apis/*"}, {"get"});
  EXPECT_TRUE(Allows(rule, Path("get", "/healthz")));
  EXPECT_FALSE(Allows(rule, Path("get", "/healthz/etcd")));
  EXPECT_TRUE(Allows(rule, Path("get", "/apis/apps/v1")));
  EXPECT_FALSE(Allows(rule, Path("get", "/apis")));
  EXPECT_FALSE(Allows(rule, Path("post", "/healthz")));
}

TEST(CoversTest, BrokenDownRules) {
  std::vector<PolicyRule> owner = {
      Rule({""}, {"configmaps", "pods"}, {"get", "list"}), Rule({"apps"}, {"*/scale"}, {"update"}),
      Rule({""}, {"secrets"}, {"get"}, {"s1"}), UrlRule({"/logs/*"}, {"get"})};
  EXPECT_TRUE(Covers(owner, {Rule({""}, {"pods"}, {"list"})}));
  EXPECT_TRUE(Covers(owner, {Rule({"apps"}, {"deployments/scale"}, {"update"})}));
  EXPECT_TRUE(Covers(owner, {Rule({""}, {"secrets"}, {"get"}, {"s1"})}));
  EXPECT_TRUE(Covers(owner, {UrlRule({"/logs/a"}, {"get"})}));
  std::vector<PolicyRule> missing;
  EXPECT_FALSE(Covers(
      owner,
      {Rule({""}, {"configmaps", "secrets"}, {"get", "delete"}), UrlRule({"/metrics"}, {"get"})},
      &missing));
  std::vector<std::string> described;
  for (const PolicyRule& r : missing) described.push_back(Describe(r));
  EXPECT_THAT(described,
              ElementsAre(R"({APIGroups:[""], Resources:["secrets"], Verbs:["get"]})",
                          R"({APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]})",
                          R"({APIGroups:[""], Resources:["secrets"], Verbs:["delete"]})",
                          R"({NonResourceURLs:["/metrics"], Verbs:["get"]})"));
  // A named grant does not cover every name; a star covers everything.
  EXPECT_FALSE(Covers(owner, {Rule({""}, {"secrets"}, {"get"})}));
  EXPECT_TRUE(Covers({Rule({"*"}, {"*"}, {"*"})}, {Rule({"apps"}, {"deployments"}, {"*"})}));
  EXPECT_FALSE(
      Covers({Rule({"apps"}, {"deployments"}, {"get"})}, {Rule({"apps"}, {"deployments"}, {"*"})}));
}

TEST(BindingTest, SubjectsAndServiceAccounts) {
  auto obj = ParseJsonObject(R"({"metadata": {"name": "b", "namespace": "team"},
      "roleRef": {"kind": "ClusterRole", "name": "edit"},
      "subjects": [{"kind": "ServiceAccount", "name": "bot"},
                   {"kind": "ServiceAccount", "name": "ci", "namespace": "tools"},
                   {"kind": "Group", "name": "devs"}, {"kind": "User", "name": "ann"}]})");
  ASSERT_TRUE(obj.ok());
  Binding b = BindingOf(*obj);
  ASSERT_EQ(b.subjects.size(), 4u);
  UserInfo bot{ServiceAccountUser("team", "bot"), "", {}};
  UserInfo ci{"system:serviceaccount:tools:ci", "", {}};
  EXPECT_TRUE(AppliesTo(b.subjects[0], bot, b.ns));
  EXPECT_FALSE(AppliesTo(b.subjects[0], ci, b.ns));
  EXPECT_TRUE(AppliesTo(b.subjects[1], ci, b.ns));
  EXPECT_TRUE(AppliesTo(b.subjects[2], User("x", {"devs"}), b.ns));
  EXPECT_TRUE(AppliesTo(b.subjects[3], User("ann", {}), b.ns));
  EXPECT_FALSE(AppliesTo(b.subjects[3], User("devs", {}), b.ns));
}

TEST(PolicyTest, RoleBindingsGrantInTheirNamespaceOnly) {
  Policy policy;
  policy.PutRole("team", "reader", {Rule({""}, {"configmaps"}, {"get"})});
  policy.PutRole("", "writer", {Rule({""}, {"configmaps"}, {"create"})});
  policy.PutBinding({"team", "r", {"Role", "reader"}, {{"User", "ann", ""}}});
  policy.PutBinding({"team", "w", {"ClusterRole", "writer"}, {{"User", "ann", ""}}});
  UserInfo ann = User("ann", {});
  EXPECT_TRUE(policy.Authorize(ann, Resource("get", "", "configmaps", "team", "c")).allowed);
  EXPECT_TRUE(policy.Authorize(ann, Resource("create", "", "configmaps", "team")).allowed);
  EXPECT_FALSE(policy.Authorize(ann, Resource("create", "", "configmaps", "other")).allowed);
  EXPECT_FALSE(policy.Authorize(ann, Resource("list", "", "configmaps", "")).allowed);
  Decision d = policy.Authorize(ann, Resource("create", "", "configmaps", "team"));
  EXPECT_EQ(d.reason, R"(RBAC: allowed by RoleBinding "team/w" of ClusterRole "writer")");
  // A binding to a role that does not exist grants nothing, until it does.
  policy.PutBinding({"", "late", {"ClusterRole", "later"}, {{"User", "ann", ""}}});
  EXPECT_FALSE(policy.Authorize(ann, Resource("get", "", "secrets", "x", "s")).allowed);
  policy.PutRole("", "later", {Rule({""}, {"secrets"}, {"get"})});
  EXPECT_TRUE(policy.Authorize(ann, Resource("get", "", "secrets", "x", "s")).allowed);
  policy.RemoveBinding("", "late");
  EXPECT_FALSE(policy.Authorize(ann, Resource("get", "", "secrets", "x", "s")).allowed);
}

TEST(AggregationTest, PicksUpRulesOfMatchingRolesInNameOrder) {
  std::map<std::string, json::object> roles;
  for (const json::object& obj : BootstrapPolicy()) {
    if (StringAt(obj, "kind") == "ClusterRole") roles[StringAt(obj, "metadata.name")] = obj;
  }
  auto extra = ParseJsonObject(R"({"metadata": {"name": "crontabs-view",
      "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
      "rules": [{"apiGroups": ["stable.example.com"], "resources": ["crontabs"],
                 "verbs": ["get", "list", "watch"]}]})");
  ASSERT_TRUE(extra.ok());
  roles["crontabs-view"] = *extra;
  AggregateAll(roles);
  PolicyRule crontabs = Rule({"stable.example.com"}, {"crontabs"}, {"get", "list", "watch"});
  for (const char* name : {"view", "edit", "admin"}) {
    std::vector<PolicyRule> rules = RulesOf(roles[name]);
    EXPECT_NE(std::find(rules.begin(), rules.end(), crontabs), rules.end()) << name;
  }
  // view takes crontabs-view before flotilla:aggregate-to-view (name order).
  EXPECT_EQ(RulesOf(roles["view"]).front(), crontabs);
  EXPECT_FALSE(AggregatedRules("crontabs-view", *extra, roles).has_value());
}

TEST(BootstrapPolicyTest, ViewCannotReadSecretsEditCanAndAdminManagesRoles) {
  Policy policy = BootstrappedPolicy();
  policy.PutBinding({"team", "v", {"ClusterRole", "view"}, {{"User", "v", ""}}});
  policy.PutBinding({"team", "e", {"ClusterRole", "edit"}, {{"User", "e", ""}}});
  policy.PutBinding({"team", "a", {"ClusterRole", "admin"}, {{"User", "a", ""}}});
  auto can = [&](const char* who, RequestAttributes attrs) {
    return policy.Authorize(User(who, {}), attrs).allowed;
  };
  EXPECT_TRUE(can("v", Resource("list", "", "configmaps", "team")));
  EXPECT_FALSE(can("v", Resource("get", "", "secrets", "team", "s")));
  EXPECT_FALSE(can("v", Resource("create", "", "configmaps", "team")));
  EXPECT_TRUE(can("e", Resource("get", "", "secrets", "team", "s")));
  EXPECT_TRUE(can("e", Resource("create", "apps", "deployments", "team")));
  RequestAttributes token = Resource("create", "", "serviceaccounts", "team", "bot");
  token.subresource = "token";
  EXPECT_TRUE(can("e", token));
  EXPECT_FALSE(can("e", Resource("create", "rbac.authorization.k8s.io", "rolebindings", "team")));
  EXPECT_TRUE(can("a", Resource("create", "rbac.authorization.k8s.io", "rolebindings", "team")));
  EXPECT_FALSE(can("a", Resource("create", "", "configmaps", "elsewhere")));
  EXPECT_FALSE(can("a", Resource("list", "federation", "clusters", "")));
}

// The controllers read and update Roles and RoleBindings (their finalizer,
// their annotations); they create none, bind nothing, escalate nothing.
TEST(BootstrapPolicyTest, ControllerRoleCannotGrantOrImpersonate) {
  Policy policy = BootstrappedPolicy();
  UserInfo controller{"system:flotilla:federation-controller", "", {"system:authenticated"}};
  auto can = [&](RequestAttributes attrs) { return policy.Authorize(controller, attrs).allowed; };
  EXPECT_TRUE(can(Resource("update", "apps", "replicasets", "ns", "r")));
  EXPECT_TRUE(can(Resource("list", "", "secrets", "flotilla-system")));
  EXPECT_TRUE(can(Resource("patch", "federation", "clusters", "", "c")));
  EXPECT_TRUE(can(Resource("watch", "rbac.authorization.k8s.io", "roles", "")));
  EXPECT_TRUE(can(Resource("update", "rbac.authorization.k8s.io", "rolebindings", "ns", "b")));
  EXPECT_FALSE(can(Resource("create", "rbac.authorization.k8s.io", "rolebindings", "ns")));
  EXPECT_FALSE(can(Resource("create", "rbac.authorization.k8s.io", "clusterrolebindings", "")));
  EXPECT_FALSE(can(Resource("create", "rbac.authorization.k8s.io", "clusterroles", "")));
  EXPECT_FALSE(can(Resource("update", "rbac.authorization.k8s.io", "clusterroles", "", "admin")));
  EXPECT_FALSE(
      can(Resource("delete", "rbac.authorization.k8s.io", "clusterrolebindings", "", "admin")));
  EXPECT_FALSE(can(Resource("bind", "rbac.authorization.k8s.io", "roles", "ns", "r")));
  EXPECT_FALSE(can(Resource("escalate", "rbac.authorization.k8s.io", "roles", "ns", "r")));
  EXPECT_FALSE(can(Resource("impersonate", "", "users", "", "flotilla-admin")));
}

// Agents' registrations create an agent's ClusterRole and ClusterRoleBinding
// (escalation prevention holds them to what the registrar holds: an agent's
// rights), and change none; nothing else.
TEST(BootstrapPolicyTest, RegistrarRoleCreatesAgentsAndNoMore) {
  Policy policy = BootstrappedPolicy();
  UserInfo registrar{"system:flotilla:agent-registrar", "", {"system:authenticated"}};
  auto can = [&](RequestAttributes attrs) { return policy.Authorize(registrar, attrs).allowed; };
  EXPECT_TRUE(can(Resource("create", "rbac.authorization.k8s.io", "clusterrolebindings", "")));
  EXPECT_TRUE(can(Resource("create", "rbac.authorization.k8s.io", "clusterroles", "")));
  EXPECT_TRUE(can(Resource("create", "", "serviceaccounts", "flotilla-system")));
  EXPECT_TRUE(can(Resource("create", "federation", "clusters", "")));
  EXPECT_FALSE(can(Resource("update", "rbac.authorization.k8s.io", "clusterroles", "", "admin")));
  EXPECT_FALSE(can(Resource("bind", "rbac.authorization.k8s.io", "clusterroles", "", "admin")));
  EXPECT_FALSE(can(Resource("escalate", "rbac.authorization.k8s.io", "clusterroles", "", "a")));
  EXPECT_FALSE(can(Resource("delete", "federation", "clusters", "", "c")));
  EXPECT_FALSE(can(Resource("get", "", "secrets", "flotilla-system", "s")));
  EXPECT_FALSE(can(Resource("impersonate", "", "users", "", "flotilla-admin")));
}

// The groups of the kinds the federation propagates join the controllers'
// role (a federated Job needs batch); named once, and RBAC still not.
TEST(BootstrapPolicyTest, ControllerRoleTakesTheFederatedKindsGroups) {
  std::vector<json::object> objects =
      BootstrapPolicy({"batch", "apps", "batch", "rbac.authorization.k8s.io"});
  const json::object* role = nullptr;
  for (const json::object& o : objects) {
    if (StringAt(o, "metadata.name") == "flotilla:federation-controller" &&
        StringAt(o, "kind") == "ClusterRole") {
      role = &o;
    }
  }
  ASSERT_NE(role, nullptr);
  const json::array& groups =
      (*Find(*role, "rules")).get_array()[0].get_object().at("apiGroups").get_array();
  EXPECT_EQ(std::count(groups.begin(), groups.end(), json::value("batch")), 1);
  EXPECT_EQ(std::count(groups.begin(), groups.end(), json::value("apps")), 1);
  EXPECT_EQ(std::count(groups.begin(), groups.end(), json::value("rbac.authorization.k8s.io")), 0);
  // The shared table is not changed.
  for (const json::object& o : BootstrapPolicy()) {
    if (StringAt(o, "metadata.name") != "flotilla:federation-controller" ||
        StringAt(o, "kind") != "ClusterRole") {
      continue;
    }
    const json::array& plain =
        (*Find(o, "rules")).get_array()[0].get_object().at("apiGroups").get_array();
    EXPECT_EQ(std::count(plain.begin(), plain.end(), json::value("batch")), 0);
  }
}

struct MatrixCase {
  const char* who;
  RequestAttributes attrs;
  bool allowed;
};

TEST(BootstrapPolicyTest, Matrix) {
  const Policy policy = BootstrappedPolicy();
  const UserInfo admin = User("flotilla-admin", {"system:masters"});
  const UserInfo viewer = User("flotilla-viewer", {"flotilla:viewers"});
  const UserInfo nobody = User("nobody", {});
  std::map<std::string, const UserInfo*> users = {
      {"admin", &admin}, {"viewer", &viewer}, {"nobody", &nobody}};
  RequestAttributes scale = Resource("update", "apps", "deployments", "default", "web");
  scale.subresource = "scale";
  RequestAttributes pod_log = Resource("get", "", "pods", "default", "p");
  pod_log.subresource = "log";
  const std::vector<MatrixCase> cases = {
      {"admin", Resource("create", "", "configmaps", "default"), true},
      {"admin", Resource("deletecollection", "apps", "deployments", "default"), true},
      {"admin", Resource("get", "", "secrets", "flotilla-system", "m1"), true},
      {"admin", scale, true},
      {"admin", Path("post", "/anything"), true},
      {"viewer", Resource("get", "", "configmaps", "default", "x"), true},
      {"viewer", Resource("list", "apps", "deployments", ""), true},
      {"viewer", Resource("watch", "federation", "clusters", ""), true},
      {"viewer", pod_log, true},
      {"viewer", Resource("create", "", "configmaps", "default"), false},
      {"viewer", Resource("update", "", "configmaps", "default", "x"), false},
      {"viewer", Resource("patch", "", "configmaps", "default", "x"), false},
      {"viewer", Resource("delete", "", "configmaps", "default", "x"), false},
      {"viewer", Resource("deletecollection", "", "configmaps", "default"), false},
      {"viewer", scale, false},
      {"viewer", Resource("get", "", "secrets", "flotilla-system", "m1"), false},
      {"viewer", Resource("list", "", "secrets", ""), false},
      {"viewer", Path("get", "/metrics"), true},
      {"viewer", Path("post", "/metrics"), false},
      {"nobody", Resource("get", "", "configmaps", "default", "x"), false},
      {"nobody", Resource("list", "", "namespaces", ""), false},
      {"nobody", Path("get", "/api"), true},
      {"nobody", Path("get", "/api/v1"), true},
      {"nobody", Path("get", "/apis/apps/v1"), true},
      {"nobody", Path("get", "/version"), true},
      {"nobody", Path("get", "/openapi/v2"), true},
      {"nobody", Path("get", "/openapi/v3/apis/apps/v1"), true},
      {"nobody", Path("get", "/healthz"), true},
      {"nobody", Path("get", "/livez"), true},
      {"nobody", Path("get", "/readyz"), true},
      {"nobody", Path("post", "/api"), false},
      {"nobody", Path("get", "/metrics"), false},
      {"nobody", Path("get", "/apisx"), false},
      {"nobody", Path("get", "/healthz/etcd"), false},
      {"nobody", Resource("create", "authorization.k8s.io", "selfsubjectaccessreviews"), true},
      {"nobody", Resource("create", "authorization.k8s.io", "selfsubjectrulesreviews"), true},
      {"nobody", Resource("create", "authentication.k8s.io", "selfsubjectreviews"), true},
      {"nobody", Resource("create", "authorization.k8s.io", "subjectaccessreviews"), false},
  };
  for (const auto& c : cases) {
    Decision d = policy.Authorize(*users.at(c.who), c.attrs);
    std::string what = std::string(c.who) + " " + c.attrs.verb + " " +
                       (c.attrs.resource_request ? c.attrs.resource : c.attrs.path);
    EXPECT_EQ(d.allowed, c.allowed) << what << ": " << d.reason;
    if (c.allowed) {
      EXPECT_THAT(d.reason, HasSubstr("RBAC: allowed by ")) << what;
    }
  }
}

TEST(BootstrapPolicyTest, UnauthenticatedGroupsGetNothingPublic) {
  UserInfo bare{"bare", "", {}};
  EXPECT_FALSE(BootstrappedPolicy().Authorize(bare, Path("get", "/version")).allowed);
}

}  // namespace
}  // namespace flotilla::apiserver::rbac
