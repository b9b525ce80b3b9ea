// The RBAC authorizer, bootstrap and aggregation (rbac_authorizer.h).
#include "apiserver/rbac_authorizer.h"

#include <algorithm>

#include "api/validation.h"
#include "apiserver/meta.h"
#include "apiserver/rbac_bootstrap.h"
#include "base/io.h"
#include "base/log.h"
#include "base/mutex.h"

namespace flotilla::apiserver {
namespace {

constexpr std::string_view kKeyPrefix = "/rbac.authorization.k8s.io/";
constexpr std::string_view kAutoupdate = "rbac.authorization.kubernetes.io/autoupdate";

bool IsMaster(const UserInfo& user) {
  return std::find(user.groups.begin(), user.groups.end(), kGroupMasters) != user.groups.end();
}

// The escalation message's user: `user "u" (groups=["a" "b"])`.
std::string DescribeUser(const UserInfo& user) {
  std::string groups;
  for (const std::string& g : user.groups) groups += (groups.empty() ? "" : " ") + api::QuoteGo(g);
  return "user " + api::QuoteGo(user.name) + " (groups=[" + groups + "])";
}

// The bootstrap object's rules and subjects merged into the stored one's,
// as kube-apiserver reconciles objects that keep the autoupdate annotation;
// nullopt when nothing is missing.
std::optional<json::object> Reconciled(const json::object& stored, const json::object& wanted) {
  if (StringAt(stored, "metadata.annotations." + std::string(kAutoupdate)) != "true") {
    return std::nullopt;
  }
  json::object out = stored;
  bool changed = false;
  for (const char* field : {"rules", "subjects"}) {
    const json::array* want = GetArray(wanted, field);
    if (want == nullptr || wanted.contains("aggregationRule")) continue;
    json::value& have = out[field];
    if (!have.is_array()) have = json::array();
    for (const json::value& v : *want) {
      if (std::find(have.get_array().begin(), have.get_array().end(), v) !=
          have.get_array().end()) {
        continue;
      }
      have.get_array().push_back(v);
      changed = true;
    }
  }
  if (!changed) return std::nullopt;
  return out;
}

// What aggregation reads of a ClusterRole besides its rules.
json::object AggregationFields(const json::object& role) {
  json::object out;
  if (const json::value* labels = Find(role, "metadata.labels")) {
    out["metadata"] = json::object{{"labels", *labels}};
  }
  if (const json::value* rule = role.if_contains("aggregationRule")) out["aggregationRule"] = *rule;
  return out;
}

}  // namespace

RbacAuthorizer::RbacAuthorizer(Objects& objects, std::vector<std::string> controller_groups)
    : objects_(objects), controller_groups_(std::move(controller_groups)) {
  const api::Registry& reg = objects.registry();
  roles_ = reg.Find(rbac::kGroup, "v1", "roles");
  cluster_roles_ = reg.Find(rbac::kGroup, "v1", "clusterroles");
  bindings_ = reg.Find(rbac::kGroup, "v1", "rolebindings");
  cluster_bindings_ = reg.Find(rbac::kGroup, "v1", "clusterrolebindings");
}

RbacAuthorizer::~RbacAuthorizer() { Stop(); }

Status RbacAuthorizer::Start() {
  if (roles_ == nullptr || cluster_roles_ == nullptr || bindings_ == nullptr ||
      cluster_bindings_ == nullptr) {
    return Status::Internal("the RBAC kinds are not registered");
  }
  storage::Store& store = objects_.store();
  FLOTILLA_ASSIGN_OR_RETURN(storage::ListResult list, store.List(kKeyPrefix, {}));
  {
    WriterLock lock(mu_);
    for (const storage::KeyValue& kv : list.items) {
      ApplyLocked(kv.key, kv.value, kv.mod_revision, false);
    }
    MutexLock seen_lock(seen_mu_);
    seen_ = list.revision;
  }
  FLOTILLA_ASSIGN_OR_RETURN(
      watcher_, store.Watch(kKeyPrefix, list.revision,
                            [this](const std::vector<storage::Event>& batch) { OnEvents(batch); }));
  int64_t written = 0;
  FLOTILLA_RETURN_IF_ERROR(EnsureBootstrap(&written));
  // Aggregation chains (admin takes edit, which takes view) settle in a
  // few passes, each on the policy the last one wrote.
  for (int pass = 0; pass < 8; ++pass) {
    WaitForRevision(written);
    FLOTILLA_ASSIGN_OR_RETURN(int rewritten, Aggregate(&written));
    if (rewritten == 0) break;
  }
  WaitForRevision(written);
  MutexLock lock(loop_mu_);
  started_ = true;
  if (dirty_) aggregator_.Kick();
  return Status::Ok();
}

void RbacAuthorizer::Stop() {
  aggregator_.Stop();
  if (watcher_) watcher_->Stop();
}

void RbacAuthorizer::OnEvents(const std::vector<storage::Event>& batch) {
  bool cluster_role_changed = false;
  {
    WriterLock lock(mu_);
    for (const storage::Event& e : batch) {
      ApplyLocked(e.kv.key, e.kv.value, e.kv.mod_revision, e.type == storage::Event::Type::kDelete);
      cluster_role_changed |= e.kv.key.starts_with(Objects::Prefix(*cluster_roles_, ""));
    }
    MutexLock seen_lock(seen_mu_);
    for (const storage::Event& e : batch) seen_ = std::max(seen_, e.kv.mod_revision);
  }
  seen_cv_.NotifyAll();
  if (cluster_role_changed) {
    MutexLock lock(loop_mu_);
    dirty_ = true;
    if (started_) aggregator_.Kick();
  }
}

void RbacAuthorizer::ApplyLocked(const std::string& key, const std::string& value, int64_t revision,
                                 bool deleted) {
  int64_t& applied = revisions_[key];
  if (revision <= applied) return;
  applied = revision;
  auto obj = ParseJsonObject(value);
  if (!obj.ok()) {
    spdlog::warn("rbac: cannot read {}: {}", key, obj.status().ToString());
    return;
  }
  std::string ns = StringAt(*obj, "metadata.namespace");
  std::string name = StringAt(*obj, "metadata.name");
  if (key.starts_with(Objects::Prefix(*roles_, "")) ||
      key.starts_with(Objects::Prefix(*cluster_roles_, ""))) {
    bool cluster = key.starts_with(Objects::Prefix(*cluster_roles_, ""));
    std::string role_ns = cluster ? "" : ns;
    if (deleted) {
      policy_.RemoveRole(role_ns, name);
      if (cluster) cluster_roles_by_name_.erase(name);
    } else {
      policy_.PutRole(role_ns, name, rbac::RulesOf(*obj));
      if (cluster) cluster_roles_by_name_[name] = AggregationFields(*obj);
    }
    return;
  }
  bool cluster = key.starts_with(Objects::Prefix(*cluster_bindings_, ""));
  if (deleted) {
    policy_.RemoveBinding(cluster ? "" : ns, name);
  } else {
    rbac::Binding b = rbac::BindingOf(*obj);
    if (cluster) b.ns.clear();
    policy_.PutBinding(std::move(b));
  }
}

void RbacAuthorizer::WaitForRevision(int64_t revision) {
  MutexLock lock(seen_mu_);
  ScopedBlocking blocking;
  seen_cv_.Wait(lock, [&]() REQUIRES(seen_mu_) { return seen_ >= revision; });
}

namespace {

void NoteWrite(const StatusOr<json::object>& written, int64_t* revision) {
  if (written.ok() && revision != nullptr) {
    *revision = std::max(*revision, ResourceVersionOf(*written));
  }
}

}  // namespace

Status RbacAuthorizer::EnsureBootstrap(int64_t* written) {
  for (const json::object& wanted : rbac::BootstrapPolicy(controller_groups_)) {
    const api::Resource& res =
        StringAt(wanted, "kind") == "ClusterRole" ? *cluster_roles_ : *cluster_bindings_;
    std::string name = StringAt(wanted, "metadata.name");
    auto stored = objects_.Get(res, "", name);
    if (stored.status().Is(Reason::kNotFound)) {
      auto created = objects_.Create(res, "", wanted, {});
      NoteWrite(created, written);
      if (!created.ok() && !created.status().Is(Reason::kAlreadyExists)) return created.status();
      continue;
    }
    if (!stored.ok()) return stored.status();
    if (std::optional<json::object> merged = Reconciled(*stored, wanted)) {
      auto updated = objects_.Update(res, "", name, "", std::move(*merged), {});
      NoteWrite(updated, written);
      if (!updated.ok() && !updated.status().Is(Reason::kConflict)) return updated.status();
    }
  }
  return Status::Ok();
}

StatusOr<int> RbacAuthorizer::Aggregate(int64_t* written) {
  std::vector<std::pair<std::string, std::vector<rbac::PolicyRule>>> changes;
  {
    ReaderLock lock(mu_);
    // The roles as aggregation reads them: their labels, aggregationRule
    // and rules.
    std::map<std::string, json::object> roles;
    for (const auto& [name, fields] : cluster_roles_by_name_) {
      json::object& role = roles[name] = fields;
      const std::vector<rbac::PolicyRule>* rules = policy_.Role("", name);
      role["rules"] = rbac::ToJson(rules != nullptr ? *rules : std::vector<rbac::PolicyRule>{});
    }
    for (const auto& [name, role] : roles) {
      auto rules = rbac::AggregatedRules(name, role, roles);
      if (rules && *rules != rbac::RulesOf(role)) changes.emplace_back(name, std::move(*rules));
    }
  }
  for (auto& [name, rules] : changes) {
    json::object patch{{"rules", rbac::ToJson(rules)}};
    PatchRequest req{"application/merge-patch+json", json::serialize(patch)};
    auto patched = objects_.Patch(*cluster_roles_, "", name, "", req, {});
    NoteWrite(patched, written);
    if (!patched.ok() && !patched.status().Is(Reason::kNotFound)) return patched.status();
  }
  return static_cast<int>(changes.size());
}

void RbacAuthorizer::AggregateOnce() {
  {
    MutexLock lock(loop_mu_);
    dirty_ = false;
  }
  auto rewritten = Aggregate(nullptr);
  if (!rewritten.ok()) {
    spdlog::warn("rbac: aggregating ClusterRoles: {}", rewritten.status().ToString());
  }
}

Decision RbacAuthorizer::Authorize(const UserInfo& user, const RequestAttributes& attrs) const {
  if (IsMaster(user)) return {true, "allowed: group \"system:masters\" may do everything"};
  ReaderLock lock(mu_);
  return policy_.Authorize(user, attrs);
}

std::vector<rbac::PolicyRule> RbacAuthorizer::RulesFor(const UserInfo& user,
                                                       const std::string& ns) const {
  ReaderLock lock(mu_);
  return policy_.RulesFor(user, ns);
}

Status RbacAuthorizer::Forbid(const api::Resource& res, const json::object& obj,
                              const std::string& why) const {
  return Status::Forbidden(res.GroupResource() + " " +
                           api::QuoteGo(StringAt(obj, "metadata.name")) + " is forbidden: " + why);
}

Status RbacAuthorizer::Admit(const UserInfo& user, const api::Resource& res, const std::string& ns,
                             const json::object& obj, const json::object* old) const {
  if (res.group != rbac::kGroup || IsMaster(user)) return Status::Ok();
  bool is_role = &res == roles_ || &res == cluster_roles_;
  if (old != nullptr) {
    auto same = [&](std::string_view path) {
      const json::value* a = Find(obj, path);
      const json::value* b = Find(*old, path);
      return a == nullptr || b == nullptr ? a == b : *a == *b;
    };
    bool grants_nothing_new =
        is_role ? same("rules") && same("aggregationRule") && same("metadata.labels")
                : same("roleRef") && same("subjects");
    if (grants_nothing_new) return Status::Ok();
  }
  std::string role_ns = res.namespaced ? ns : "";
  std::vector<rbac::PolicyRule> wanted;
  if (is_role) {
    RequestAttributes escalate{
        "escalate", res.group, res.plural, "", role_ns, StringAt(obj, "metadata.name"), true, ""};
    if (Authorize(user, escalate).allowed) return Status::Ok();
    if (obj.contains("aggregationRule") && !obj.at("aggregationRule").is_null()) {
      return Forbid(res, obj, "must have cluster-admin privileges to use the aggregationRule");
    }
    wanted = rbac::RulesOf(obj);
  } else {
    rbac::Binding b = rbac::BindingOf(obj);
    bool cluster_role = b.role_ref.kind == "ClusterRole";
    RequestAttributes bind{"bind",
                           std::string(rbac::kGroup),
                           cluster_role ? "clusterroles" : "roles",
                           "",
                           role_ns,
                           b.role_ref.name,
                           true,
                           ""};
    if (Authorize(user, bind).allowed) return Status::Ok();
    std::optional<std::vector<rbac::PolicyRule>> rules;
    {
      ReaderLock lock(mu_);
      if (auto* r = policy_.Role(cluster_role ? "" : role_ns, b.role_ref.name)) rules = *r;
    }
    if (!rules) {
      // A role written just now may not have reached the policy yet; the
      // store has it (a controller creates a role, then its binding).
      auto stored = objects_.Get(cluster_role ? *cluster_roles_ : *roles_,
                                 cluster_role ? "" : role_ns, b.role_ref.name);
      if (stored.ok()) rules = rbac::RulesOf(*stored);
    }
    if (!rules) {
      return Forbid(res, obj,
                    (cluster_role ? "clusterroles" : "roles") + std::string(".") +
                        std::string(rbac::kGroup) + " " + api::QuoteGo(b.role_ref.name) +
                        " not found");
    }
    wanted = *rules;
  }
  std::vector<rbac::PolicyRule> missing;
  if (rbac::Covers(RulesFor(user, role_ns), wanted, &missing)) return Status::Ok();
  std::string why =
      DescribeUser(user) + " is attempting to grant RBAC permissions not currently held:";
  for (const rbac::PolicyRule& r : missing) why += "\n" + rbac::Describe(r);
  return Forbid(res, obj, why);
}

}  // namespace flotilla::apiserver
