// rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding and
// ClusterRoleBinding; authorization.k8s.io/v1 access reviews and
// authentication.k8s.io/v1 TokenReview, which are created and answered,
// never stored. Validation follows pkg/apis/rbac/validation.
#include <algorithm>

#include "api/kinds/resources.h"
#include "api/kinds/util.h"
#include "api/labels.h"
#include "api/validation.h"

namespace flotilla::api::kinds {
namespace {

constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";

bool Empty(const json::object& rule, std::string_view key) {
  const json::array* a = GetArray(rule, key);
  return a == nullptr || a->empty();
}

// ValidatePolicyRule.
void ValidateRule(const json::object& rule, const std::string& path, bool namespaced, Causes& out) {
  if (Empty(rule, "verbs")) {
    out.push_back(FieldRequired(Child(path, "verbs"), "verbs must contain at least one value"));
  }
  if (!Empty(rule, "nonResourceURLs")) {
    const json::value& urls = rule.at("nonResourceURLs");
    if (namespaced) {
      out.push_back(FieldInvalid(Child(path, "nonResourceURLs"), urls,
                                 "namespaced rules cannot apply to non-resource URLs"));
    }
    if (!Empty(rule, "apiGroups") || !Empty(rule, "resources") || !Empty(rule, "resourceNames")) {
      out.push_back(FieldInvalid(Child(path, "nonResourceURLs"), urls,
                                 "rules cannot apply to both regular resources and non-resource "
                                 "URLs"));
    }
    return;
  }
  if (Empty(rule, "apiGroups")) {
    out.push_back(FieldRequired(Child(path, "apiGroups"),
                                "resource rules must supply at least one api group"));
  }
  if (Empty(rule, "resources")) {
    out.push_back(FieldRequired(Child(path, "resources"),
                                "resource rules must supply at least one resource"));
  }
}

Causes ValidateRoleRules(const json::object& obj, bool namespaced) {
  Causes out;
  const json::array* rules = GetArray(obj, "rules");
  if (rules == nullptr) return out;
  for (size_t i = 0; i < rules->size(); ++i) {
    if ((*rules)[i].is_object()) {
      ValidateRule((*rules)[i].get_object(), Index("rules", i), namespaced, out);
    }
  }
  return out;
}

Causes ValidateRole(const json::object& obj, const json::object*) {
  return ValidateRoleRules(obj, true);
}

Causes ValidateClusterRole(const json::object& obj, const json::object*) {
  Causes out = ValidateRoleRules(obj, false);
  const json::array* selectors = ArrayAt(obj, "aggregationRule.clusterRoleSelectors");
  if (selectors == nullptr) return out;
  for (size_t i = 0; i < selectors->size(); ++i) {
    auto more =
        ValidateLabelSelector((*selectors)[i], Index("aggregationRule.clusterRoleSelectors", i));
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

// ValidateRoleBindingSubject.
void ValidateSubject(const json::object& s, const std::string& path, bool cluster_scoped,
                     Causes& out) {
  std::string kind = StringAt(s, "kind");
  std::string name = StringAt(s, "name");
  if (name.empty()) out.push_back(FieldRequired(Child(path, "name"), ""));
  if (kind == "ServiceAccount") {
    if (!StringAt(s, "apiGroup").empty()) {
      out.push_back(FieldNotSupported(Child(path, "apiGroup"), s.at("apiGroup"), {""}));
    }
    if (cluster_scoped && StringAt(s, "namespace").empty()) {
      out.push_back(FieldRequired(Child(path, "namespace"), ""));
    }
  } else if (kind == "User" || kind == "Group") {
    if (StringAt(s, "apiGroup") != kRbacGroup) {
      const json::value* g = s.if_contains("apiGroup");
      out.push_back(
          FieldNotSupported(Child(path, "apiGroup"), g ? *g : json::value(""), {kRbacGroup}));
    }
  } else {
    const json::value* k = s.if_contains("kind");
    out.push_back(FieldNotSupported(Child(path, "kind"), k ? *k : json::value(""),
                                    {"ServiceAccount", "User", "Group"}));
  }
}

Causes ValidateBinding(const json::object& obj, const json::object* old, bool cluster_scoped) {
  Causes out;
  const json::object& ref = ObjectAt(obj, "roleRef") ? *ObjectAt(obj, "roleRef") : EmptyObject();
  if (StringAt(ref, "apiGroup") != kRbacGroup) {
    const json::value* g = ref.if_contains("apiGroup");
    out.push_back(FieldNotSupported("roleRef.apiGroup", g ? *g : json::value(""), {kRbacGroup}));
  }
  std::string kind = StringAt(ref, "kind");
  std::vector<std::string> kinds = cluster_scoped ? std::vector<std::string>{"ClusterRole"}
                                                  : std::vector<std::string>{"Role", "ClusterRole"};
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
    out.push_back(FieldNotSupported("roleRef.kind", json::value(kind), kinds));
  }
  if (StringAt(ref, "name").empty()) out.push_back(FieldRequired("roleRef.name", ""));
  if (old != nullptr && !SemanticEqual(obj.if_contains("roleRef"), old->if_contains("roleRef"))) {
    out.push_back(InvalidRepr("roleRef",
                              "rbac.RoleRef{APIGroup:" + QuoteGo(StringAt(ref, "apiGroup")) +
                                  ", Kind:" + QuoteGo(kind) +
                                  ", Name:" + QuoteGo(StringAt(ref, "name")) + "}",
                              "cannot change roleRef"));
  }
  std::vector<const json::object*> subjects = ObjectsAt(obj, "subjects");
  for (size_t i = 0; i < subjects.size(); ++i) {
    ValidateSubject(*subjects[i], Index("subjects", i), cluster_scoped, out);
  }
  return out;
}

// The subjects of one kind, joined by ", ", as kubectl's wide columns show them.
Cell SubjectsCell(std::string kind) {
  return [kind](const json::object& obj, TimePoint) -> json::value {
    std::string out;
    for (const json::object* s : ObjectsAt(obj, "subjects")) {
      if (StringAt(*s, "kind") != kind) continue;
      std::string name = StringAt(*s, "name");
      if (kind == "ServiceAccount") name = StringAt(*s, "namespace") + "/" + name;
      out += (out.empty() ? "" : ", ") + name;
    }
    return json::string(out);
  };
}

std::vector<TableColumn> RoleColumns() {
  return {NameColumn(), Column("Created At", "date", "CreationTimestamp of the role.", 0,
                               [](const json::object& obj, TimePoint) -> json::value {
                                 return json::string(StringAt(obj, "metadata.creationTimestamp"));
                               })};
}

std::vector<TableColumn> BindingColumns() {
  return {NameColumn(),
          Column("Role", "string", "RoleRef is the role being bound.", 0,
                 [](const json::object& obj, TimePoint) -> json::value {
                   return json::string(StringAt(obj, "roleRef.kind") + "/" +
                                       StringAt(obj, "roleRef.name"));
                 }),
          AgeColumn(),
          Column("Users", "string", "Users in the binding.", 1, SubjectsCell("User")),
          Column("Groups", "string", "Groups in the binding.", 1, SubjectsCell("Group")),
          Column("ServiceAccounts", "string", "ServiceAccounts in the binding.", 1,
                 SubjectsCell("ServiceAccount"))};
}

// SetDefaults_Subject: a User or Group without an apiGroup is of the RBAC
// group, a ServiceAccount of the core one.
void DefaultSubjects(json::object& binding) {
  ForEachObject(binding, "subjects", [](json::object& subject) {
    if (!StringAt(subject, "apiGroup").empty()) return;
    std::string kind = StringAt(subject, "kind");
    if (kind == "User" || kind == "Group") subject["apiGroup"] = kRbacGroup;
    if (kind == "ServiceAccount") subject["apiGroup"] = "";
  });
}

// A kind that is created and answered, never stored: create is its only verb.
Resource Review(std::string group, std::string kind, std::string plural, bool namespaced) {
  std::string short_group = group.substr(0, group.find('.'));
  Resource r = MakeResource(group, "v1", kind, plural, namespaced,
                            "io.k8s.api." + short_group + ".v1." + kind);
  r.verbs = {"create"};
  r.columns = {NameColumn(), AgeColumn()};
  return r;
}

}  // namespace

Resource RoleResource() {
  Resource r = MakeResource(kRbacGroup, "v1", "Role", "roles", true, "io.k8s.api.rbac.v1.Role");
  r.validate_fn = ValidateRole;
  r.columns = RoleColumns();
  return r;
}

Resource ClusterRoleResource() {
  Resource r = MakeResource(kRbacGroup, "v1", "ClusterRole", "clusterroles", false,
                            "io.k8s.api.rbac.v1.ClusterRole");
  r.validate_fn = ValidateClusterRole;
  r.columns = RoleColumns();
  return r;
}

Resource RoleBindingResource() {
  Resource r = MakeResource(kRbacGroup, "v1", "RoleBinding", "rolebindings", true,
                            "io.k8s.api.rbac.v1.RoleBinding");
  r.validate_fn = [](const json::object& obj, const json::object* old) {
    return ValidateBinding(obj, old, false);
  };
  r.default_fn = DefaultSubjects;
  r.columns = BindingColumns();
  return r;
}

Resource ClusterRoleBindingResource() {
  Resource r = MakeResource(kRbacGroup, "v1", "ClusterRoleBinding", "clusterrolebindings", false,
                            "io.k8s.api.rbac.v1.ClusterRoleBinding");
  r.validate_fn = [](const json::object& obj, const json::object* old) {
    return ValidateBinding(obj, old, true);
  };
  r.default_fn = DefaultSubjects;
  r.columns = BindingColumns();
  return r;
}

std::vector<Resource> ReviewResources() {
  return {
      Review("authentication.k8s.io", "SelfSubjectReview", "selfsubjectreviews", false),
      Review("authentication.k8s.io", "TokenReview", "tokenreviews", false),
      Review("authorization.k8s.io", "LocalSubjectAccessReview", "localsubjectaccessreviews", true),
      Review("authorization.k8s.io", "SelfSubjectAccessReview", "selfsubjectaccessreviews", false),
      Review("authorization.k8s.io", "SelfSubjectRulesReview", "selfsubjectrulesreviews", false),
      Review("authorization.k8s.io", "SubjectAccessReview", "subjectaccessreviews", false)};
}

}  // namespace flotilla::api::kinds
