// Kubernetes RBAC (rbac.authorization.k8s.io/v1) as data and pure functions:
// rules and whether they allow a request, whether one set of rules covers
// another (escalation prevention), which bindings apply to a user, and a
// Policy snapshot of every Role, ClusterRole and binding that answers
// "may this user do this?" the way kube-apiserver's RBAC authorizer does.
//
// The semantics are Kubernetes': "*" matches every verb, group, resource or
// URL; a resource entry "pods/log" matches the subresource, "*/scale" the
// subresource of any resource; an empty resourceNames matches every name,
// a non-empty one only requests that name an object (a create or a list
// names none); nonResourceURLs match exactly or by a prefix ending in "*".
// A RoleBinding grants its role's rules in its own namespace only (a
// ClusterRole bound by a RoleBinding too); a ClusterRoleBinding grants them
// everywhere, cluster-scoped requests and paths included.
//
// A Policy is a plain value with no locking of its own.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/auth.h"
#include "base/json.h"

namespace flotilla::apiserver::rbac {

inline constexpr std::string_view kGroup = "rbac.authorization.k8s.io";

struct PolicyRule {
  std::vector<std::string> verbs, api_groups, resources, resource_names, non_resource_urls;
  bool operator==(const PolicyRule&) const = default;
};

// The "rules" array of a Role or ClusterRole. Entries that are not objects,
// and fields of the wrong type, are skipped (the schema check refuses them
// on the way in).
std::vector<PolicyRule> RulesOf(const json::object& role);
json::array ToJson(const std::vector<PolicyRule>& rules);
// kube-apiserver's rendering of a rule in messages:
// {APIGroups:[""], Resources:["secrets"], Verbs:["get"]}.
std::string Describe(const PolicyRule& rule);

// Whether `rule` allows the request.
bool Allows(const PolicyRule& rule, const RequestAttributes& attrs);

// Whether `owner` covers every piece of `requested`: each verb on each
// group, resource and name, and each verb on each URL, is allowed by some
// owner rule. What is not covered is added to `uncovered` (one atomic rule
// each) when it is not null.
bool Covers(const std::vector<PolicyRule>& owner, const std::vector<PolicyRule>& requested,
            std::vector<PolicyRule>* uncovered = nullptr);

// The rules a ClusterRole with an aggregationRule gets, given every
// ClusterRole by name: for each of its clusterRoleSelectors, the rules of the
// other ClusterRoles it matches, in name order, each distinct rule once.
// nullopt when `role` has no aggregationRule.
std::optional<std::vector<PolicyRule>> AggregatedRules(
    const std::string& name, const json::object& role,
    const std::map<std::string, json::object>& all);

// Rewrites the rules of every aggregating ClusterRole in `roles` (by name)
// until none changes, as the server's aggregation settles.
void AggregateAll(std::map<std::string, json::object>& roles);

struct Subject {
  std::string kind;  // User, Group or ServiceAccount
  std::string name;
  std::string ns;  // ServiceAccount only; empty means the binding's namespace
};

struct RoleRef {
  std::string kind;  // Role or ClusterRole
  std::string name;
};

struct Binding {
  std::string ns;  // "" for a ClusterRoleBinding
  std::string name;
  RoleRef role_ref;
  std::vector<Subject> subjects;
};

Binding BindingOf(const json::object& obj);
// Whether `subject` of a binding in `binding_ns` names `user`.
bool AppliesTo(const Subject& subject, const UserInfo& user, std::string_view binding_ns);
// `RoleBinding "ns/name" of ClusterRole "edit"`, as RBAC's reasons name it.
std::string Describe(const Binding& binding);

// The service account user name, "system:serviceaccount:NS:NAME".
std::string ServiceAccountUser(std::string_view ns, std::string_view name);

class Policy {
 public:
  // ns "" for a ClusterRole.
  void PutRole(const std::string& ns, const std::string& name, std::vector<PolicyRule> rules);
  void RemoveRole(const std::string& ns, const std::string& name);
  void PutBinding(Binding binding);
  void RemoveBinding(const std::string& ns, const std::string& name);

  // nullptr when no such role is known.
  const std::vector<PolicyRule>* Role(const std::string& ns, const std::string& name) const;

  // Calls `visit` with each rule that applies to `user` in `ns` ("" for the
  // cluster scope: ClusterRoleBindings only), and the binding it comes
  // from; stops when `visit` returns false.
  using Visitor = std::function<bool(const Binding& binding, const PolicyRule& rule)>;
  void VisitRules(const UserInfo& user, const std::string& ns, const Visitor& visit) const;

  std::vector<PolicyRule> RulesFor(const UserInfo& user, const std::string& ns) const;

  // The RBAC decision; the reason names the binding and role that allowed it.
  Decision Authorize(const UserInfo& user, const RequestAttributes& attrs) const;

 private:
  const std::vector<PolicyRule>* RoleOf(const Binding& binding) const;

  // (namespace, name) -> rules; namespace "" for ClusterRoles. Interned
  // (base/intern.h): the servers of one process share their bootstrap
  // roles' rules.
  std::map<std::pair<std::string, std::string>, std::shared_ptr<const std::vector<PolicyRule>>>
      roles_;
  // (namespace, name) -> binding; namespace "" for ClusterRoleBindings.
  std::map<std::pair<std::string, std::string>, Binding> bindings_;
};

}  // namespace flotilla::apiserver::rbac
