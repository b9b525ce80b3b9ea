// GarbageCollector: the decisions for one object or namespace (see gc.h).
#include "apiserver/gc.h"
#include "apiserver/meta.h"
#include "base/log.h"
#include "base/mutex.h"

namespace flotilla::apiserver {
namespace {

// Applies `change` to the current object and writes it, retrying on conflict.
Status Modify(Objects& objects, const api::Resource& res, const std::string& ns,
              const std::string& name, const std::function<bool(json::object&)>& change,
              const std::string& subresource = "") {
  for (int attempt = 0; attempt < 8; ++attempt) {
    auto current = objects.Get(res, ns, name);
    if (!current.ok()) return current.status();
    json::object updated = *current;
    if (!change(updated)) return Status::Ok();
    auto written = objects.Update(res, ns, name, subresource, std::move(updated), {});
    if (written.ok() || !written.status().Is(Reason::kConflict)) return written.status();
  }
  return Status::Conflict("gave up after repeated conflicts on " + name);
}

}  // namespace

void GarbageCollector::Retry(const std::string& key) {
  {
    MutexLock lock(mu_);
    pending_.insert(key);
  }
  worker_.Kick();
}

void GarbageCollector::Process(const std::string& key) {
  std::optional<Node> node = Lookup(key);
  if (!node) return;
  bool owners_gone = !node->owners.empty();
  bool owner_foreground = false;
  for (const auto& owner : node->owners) {
    std::optional<Node> o;
    {
      MutexLock lock(mu_);
      auto it = uid_to_key_.find(owner);
      if (it != uid_to_key_.end()) o = nodes_[it->second];
    }
    if (o) {
      owners_gone = false;
      owner_foreground = owner_foreground || (o->deleting && o->foreground);
    }
  }
  if ((owners_gone || owner_foreground) && !node->deleting) {
    DeleteOptions opts;
    opts.propagation = owner_foreground ? Propagation::kForeground : Propagation::kBackground;
    auto deleted = objects_.Delete(*node->res, node->ns, node->name, opts);
    if (!deleted.ok() && !deleted.status().Is(Reason::kNotFound)) {
      spdlog::warn("garbage collector: deleting {}: {}", key, deleted.status().ToString());
    }
  }
  if (!node->deleting) return;
  std::vector<std::string> dependents = DependentsOf(node->uid);
  if (node->orphan) {
    for (const auto& dep_key : dependents) {
      std::optional<Node> dep = Lookup(dep_key);
      if (!dep) continue;
      Modify(objects_, *dep->res, dep->ns, dep->name, [&](json::object& obj) {
        json::value* refs = MetaOf(obj).if_contains("ownerReferences");
        if (refs == nullptr || !refs->is_array()) return false;
        json::array kept;
        for (auto& r : refs->as_array()) {
          if (!(r.is_object() && GetString(r.as_object(), "uid") == node->uid)) kept.push_back(r);
        }
        if (kept.size() == refs->as_array().size()) return false;
        if (kept.empty())
          MetaOf(obj).erase("ownerReferences");
        else
          *refs = std::move(kept);
        return true;
      }).IgnoreError();
    }
    Modify(objects_, *node->res, node->ns, node->name, [](json::object& obj) {
      if (!HasFinalizer(obj, "orphan")) return false;
      RemoveFinalizer(obj, "orphan");
      return true;
    }).IgnoreError();
  }
  if (node->foreground) {
    if (dependents.empty()) {
      Modify(objects_, *node->res, node->ns, node->name, [](json::object& obj) {
        if (!HasFinalizer(obj, "foregroundDeletion")) return false;
        RemoveFinalizer(obj, "foregroundDeletion");
        return true;
      }).IgnoreError();
    } else {
      for (const auto& dep_key : dependents) Retry(dep_key);
    }
  }
}

void GarbageCollector::ProcessNamespace(const std::string& ns) {
  std::vector<std::pair<std::string, Node>> contents;
  {
    MutexLock lock(mu_);
    for (const auto& [key, node] : nodes_) {
      if (node.ns == ns && node.res->namespaced) contents.emplace_back(key, node);
    }
  }
  for (const auto& [key, node] : contents) {
    if (node.deleting) continue;
    DeleteOptions opts;
    opts.propagation = Propagation::kBackground;
    auto deleted = objects_.Delete(*node.res, node.ns, node.name, opts);
    if (!deleted.ok() && !deleted.status().Is(Reason::kNotFound)) {
      spdlog::warn("namespace {}: deleting {}: {}", ns, key, deleted.status().ToString());
    }
  }
  if (!contents.empty()) return;  // re-checked as each object goes
  const api::Resource* ns_res = objects_.registry().Find("", "v1", "namespaces");
  if (ns_res == nullptr) return;
  Modify(
      objects_, *ns_res, "", ns,
      [](json::object& obj) {
        json::value* fins =
            Find(obj, "spec") ? EnsureObject(obj, "spec").if_contains("finalizers") : nullptr;
        if (fins == nullptr || !fins->is_array()) return false;
        json::array kept;
        for (auto& f : fins->as_array()) {
          if (!(f.is_string() && f.get_string() == "kubernetes")) kept.push_back(f);
        }
        if (kept.size() == fins->as_array().size()) return false;
        *fins = std::move(kept);
        return true;
      },
      "finalize")
      .IgnoreError();
}

}  // namespace flotilla::apiserver
