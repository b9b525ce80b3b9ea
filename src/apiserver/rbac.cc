// RBAC rules, coverage and the Policy snapshot (rbac.h).
#include "apiserver/rbac.h"

#include <algorithm>

#include "api/labels.h"
#include "api/validation.h"
#include "base/intern.h"

namespace flotilla::apiserver::rbac {
namespace {

constexpr std::string_view kAll = "*";

bool Has(const std::vector<std::string>& set, std::string_view s) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

bool HasOrAll(const std::vector<std::string>& set, std::string_view s) {
  return Has(set, kAll) || Has(set, s);
}

bool ResourceMatches(const PolicyRule& rule, const RequestAttributes& a) {
  std::string combined = a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
  for (const std::string& r : rule.resources) {
    if (r == kAll || r == combined) return true;
    // "*/scale" matches the scale subresource of any resource.
    if (!a.subresource.empty() && r.size() > 2 && r.compare(0, 2, "*/") == 0 &&
        r.compare(2, std::string::npos, a.subresource) == 0) {
      return true;
    }
  }
  return false;
}

bool UrlMatches(const std::vector<std::string>& urls, std::string_view path) {
  for (const std::string& u : urls) {
    if (u == kAll || u == path) return true;
    if (!u.empty() && u.back() == '*' &&
        path.substr(0, u.size() - 1) == u.substr(0, u.size() - 1)) {
      return true;
    }
  }
  return false;
}

// Whether the single-verb, single-target `piece` is allowed by `owner`, as
// kube-apiserver's ruleCovers decides it for each broken-down rule.
bool OwnerCovers(const PolicyRule& owner, const PolicyRule& piece) {
  if (!HasOrAll(owner.verbs, piece.verbs.front())) return false;
  if (!piece.non_resource_urls.empty()) {
    return UrlMatches(owner.non_resource_urls, piece.non_resource_urls.front());
  }
  if (!HasOrAll(owner.api_groups, piece.api_groups.front())) return false;
  const std::string& res = piece.resources.front();
  bool res_ok = HasOrAll(owner.resources, res);
  if (!res_ok && res != kAll) {
    size_t slash = res.find('/');
    res_ok = slash != std::string::npos && Has(owner.resources, "*/" + res.substr(slash + 1));
  }
  if (!res_ok) return false;
  if (owner.resource_names.empty()) return true;
  return !piece.resource_names.empty() && Has(owner.resource_names, piece.resource_names.front());
}

// kube-apiserver's BreakdownRule: one rule per verb and target.
std::vector<PolicyRule> Breakdown(const PolicyRule& rule) {
  std::vector<PolicyRule> out;
  for (const std::string& verb : rule.verbs) {
    for (const std::string& group : rule.api_groups) {
      for (const std::string& res : rule.resources) {
        if (rule.resource_names.empty()) {
          out.push_back(PolicyRule{{verb}, {group}, {res}, {}, {}});
        }
        for (const std::string& name : rule.resource_names) {
          out.push_back(PolicyRule{{verb}, {group}, {res}, {name}, {}});
        }
      }
    }
    for (const std::string& url : rule.non_resource_urls) {
      out.push_back(PolicyRule{{verb}, {}, {}, {}, {url}});
    }
  }
  return out;
}

std::string QuotedList(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? " " : "") + api::QuoteGo(v[i]);
  return out + "]";
}

}  // namespace

std::vector<PolicyRule> RulesOf(const json::object& role) {
  std::vector<PolicyRule> out;
  const json::array* rules = GetArray(role, "rules");
  if (rules == nullptr) return out;
  for (const json::value& v : *rules) {
    if (!v.is_object()) continue;
    const json::object& r = v.get_object();
    out.push_back(PolicyRule{StringsAt(r, "verbs"), StringsAt(r, "apiGroups"),
                             StringsAt(r, "resources"), StringsAt(r, "resourceNames"),
                             StringsAt(r, "nonResourceURLs")});
  }
  return out;
}

json::array ToJson(const std::vector<PolicyRule>& rules) {
  json::array out;
  for (const PolicyRule& r : rules) {
    json::object o{{"verbs", ToJsonArray(r.verbs)}};
    if (!r.api_groups.empty()) o["apiGroups"] = ToJsonArray(r.api_groups);
    if (!r.resources.empty()) o["resources"] = ToJsonArray(r.resources);
    if (!r.resource_names.empty()) o["resourceNames"] = ToJsonArray(r.resource_names);
    if (!r.non_resource_urls.empty()) o["nonResourceURLs"] = ToJsonArray(r.non_resource_urls);
    out.emplace_back(std::move(o));
  }
  return out;
}

std::string Describe(const PolicyRule& r) {
  std::string out = "{";
  if (r.non_resource_urls.empty()) {
    out += "APIGroups:" + QuotedList(r.api_groups) + ", Resources:" + QuotedList(r.resources);
    if (!r.resource_names.empty()) out += ", ResourceNames:" + QuotedList(r.resource_names);
  } else {
    out += "NonResourceURLs:" + QuotedList(r.non_resource_urls);
  }
  return out + ", Verbs:" + QuotedList(r.verbs) + "}";
}

bool Allows(const PolicyRule& rule, const RequestAttributes& a) {
  if (!HasOrAll(rule.verbs, a.verb)) return false;
  if (!a.resource_request) return UrlMatches(rule.non_resource_urls, a.path);
  if (!HasOrAll(rule.api_groups, a.group) || !ResourceMatches(rule, a)) return false;
  return rule.resource_names.empty() || (!a.name.empty() && Has(rule.resource_names, a.name));
}

bool Covers(const std::vector<PolicyRule>& owner, const std::vector<PolicyRule>& requested,
            std::vector<PolicyRule>* uncovered) {
  bool all = true;
  for (const PolicyRule& rule : requested) {
    for (PolicyRule& piece : Breakdown(rule)) {
      bool covered = std::any_of(owner.begin(), owner.end(),
                                 [&](const PolicyRule& o) { return OwnerCovers(o, piece); });
      if (covered) continue;
      all = false;
      if (uncovered == nullptr) return false;
      uncovered->push_back(std::move(piece));
    }
  }
  return all;
}

Binding BindingOf(const json::object& obj) {
  Binding b{StringAt(obj, "metadata.namespace"),
            StringAt(obj, "metadata.name"),
            {StringAt(obj, "roleRef.kind"), StringAt(obj, "roleRef.name")},
            {}};
  if (const json::array* subjects = GetArray(obj, "subjects")) {
    for (const json::value& v : *subjects) {
      if (!v.is_object()) continue;
      const json::object& s = v.get_object();
      b.subjects.push_back(
          Subject{StringAt(s, "kind"), StringAt(s, "name"), StringAt(s, "namespace")});
    }
  }
  return b;
}

std::string Describe(const Binding& b) {
  return (b.ns.empty() ? "ClusterRoleBinding " : "RoleBinding ") +
         api::QuoteGo(b.ns.empty() ? b.name : b.ns + "/" + b.name) + " of " + b.role_ref.kind +
         " " + api::QuoteGo(b.role_ref.name);
}

std::string ServiceAccountUser(std::string_view ns, std::string_view name) {
  return "system:serviceaccount:" + std::string(ns) + ":" + std::string(name);
}

bool AppliesTo(const Subject& s, const UserInfo& user, std::string_view binding_ns) {
  if (s.kind == "User") return s.name == user.name;
  if (s.kind == "Group") return Has(user.groups, s.name);
  if (s.kind == "ServiceAccount") {
    std::string_view ns = s.ns.empty() ? binding_ns : std::string_view(s.ns);
    return !ns.empty() && user.name == ServiceAccountUser(ns, s.name);
  }
  return false;
}

namespace {

struct RulesHash {
  size_t operator()(const std::vector<PolicyRule>& rules) const {
    size_t h = rules.size();
    auto mix = [&h](const std::vector<std::string>& strings) {
      for (const std::string& s : strings) h = h * 31 + std::hash<std::string>{}(s);
      h = h * 31 + strings.size();
    };
    for (const PolicyRule& r : rules) {
      mix(r.verbs);
      mix(r.api_groups);
      mix(r.resources);
      mix(r.resource_names);
      mix(r.non_resource_urls);
    }
    return h;
  }
};

}  // namespace

void Policy::PutRole(const std::string& ns, const std::string& name,
                     std::vector<PolicyRule> rules) {
  roles_[{ns, name}] = Intern<std::vector<PolicyRule>, RulesHash>(std::move(rules));
}

void Policy::RemoveRole(const std::string& ns, const std::string& name) {
  roles_.erase({ns, name});
}

void Policy::PutBinding(Binding binding) {
  auto key = std::pair{binding.ns, binding.name};
  bindings_[key] = std::move(binding);
}

void Policy::RemoveBinding(const std::string& ns, const std::string& name) {
  bindings_.erase({ns, name});
}

const std::vector<PolicyRule>* Policy::Role(const std::string& ns, const std::string& name) const {
  auto it = roles_.find({ns, name});
  return it == roles_.end() ? nullptr : it->second.get();
}

const std::vector<PolicyRule>* Policy::RoleOf(const Binding& b) const {
  if (b.role_ref.kind == "ClusterRole") return Role("", b.role_ref.name);
  if (b.role_ref.kind == "Role" && !b.ns.empty()) return Role(b.ns, b.role_ref.name);
  return nullptr;
}

void Policy::VisitRules(const UserInfo& user, const std::string& ns, const Visitor& visit) const {
  auto visit_binding = [&](const Binding& b) {
    bool applies = std::any_of(b.subjects.begin(), b.subjects.end(),
                               [&](const Subject& s) { return AppliesTo(s, user, b.ns); });
    if (!applies) return true;
    const std::vector<PolicyRule>* rules = RoleOf(b);
    if (rules == nullptr) return true;
    for (const PolicyRule& r : *rules) {
      if (!visit(b, r)) return false;
    }
    return true;
  };
  // ClusterRoleBindings sort first: their namespace is "".
  for (auto it = bindings_.begin(); it != bindings_.end() && it->first.first.empty(); ++it) {
    if (!visit_binding(it->second)) return;
  }
  if (ns.empty()) return;
  for (auto it = bindings_.lower_bound({ns, ""}); it != bindings_.end() && it->first.first == ns;
       ++it) {
    if (!visit_binding(it->second)) return;
  }
}

std::vector<PolicyRule> Policy::RulesFor(const UserInfo& user, const std::string& ns) const {
  std::vector<PolicyRule> out;
  VisitRules(user, ns, [&](const Binding&, const PolicyRule& r) {
    out.push_back(r);
    return true;
  });
  return out;
}

Decision Policy::Authorize(const UserInfo& user, const RequestAttributes& attrs) const {
  Decision d;
  VisitRules(user, attrs.resource_request ? attrs.ns : "",
             [&](const Binding& binding, const PolicyRule& rule) {
               if (!Allows(rule, attrs)) return true;
               d = {true, "RBAC: allowed by " + Describe(binding)};
               return false;
             });
  return d;
}

std::optional<std::vector<PolicyRule>> AggregatedRules(
    const std::string& name, const json::object& role,
    const std::map<std::string, json::object>& all) {
  const json::value* selectors = Find(role, "aggregationRule.clusterRoleSelectors");
  if (selectors == nullptr || !selectors->is_array()) return std::nullopt;
  std::vector<PolicyRule> out;
  for (const json::value& s : selectors->get_array()) {
    auto selector = api::LabelSelector::FromJson(&s, "aggregationRule.clusterRoleSelectors");
    if (!selector.ok()) continue;
    for (const auto& [other_name, other] : all) {
      if (other_name == name || !selector->MatchesObject(other)) continue;
      for (PolicyRule& r : RulesOf(other)) {
        if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(std::move(r));
      }
    }
  }
  return out;
}

void AggregateAll(std::map<std::string, json::object>& roles) {
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [name, role] : roles) {
      auto rules = AggregatedRules(name, role, roles);
      if (rules && *rules != RulesOf(role)) {
        role["rules"] = ToJson(*rules);
        changed = true;
      }
    }
  }
}

}  // namespace flotilla::apiserver::rbac
