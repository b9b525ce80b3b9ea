// Where the objects dependents name are needed (dependencies.h).
#include "federation/common/dependencies.h"

#include <algorithm>

namespace flotilla::federation {

std::vector<DependencyRef> DependencyRefs(const json::array& refs, const std::string& ns) {
  std::vector<DependencyRef> out;
  for (const json::value& v : refs) {
    if (!v.is_object()) continue;
    const json::object& r = v.get_object();
    std::string name(StringViewAt(r, "name"));
    if (name.empty()) continue;  // a labelSelector reference is not followed
    std::string ref_ns(StringViewAt(r, "namespace"));
    out.push_back({.api_version = std::string(StringViewAt(r, "apiVersion")),
                   .kind = std::string(StringViewAt(r, "kind")),
                   .ns = ref_ns.empty() ? ns : ref_ns,
                   .name = std::move(name)});
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<DependencyRef> Dependencies::Set(const std::string& dependent,
                                             std::vector<DependencyRef> refs,
                                             std::set<std::string> clusters) {
  MutexLock lock(mu_);
  std::vector<DependencyRef> changed;
  auto it = by_dependent_.find(dependent);
  if (it != by_dependent_.end()) {
    if (it->second.refs == refs && it->second.clusters == clusters) return {};
    changed = it->second.refs;
    Unindex(dependent, it->second);
  }
  if (refs.empty()) {
    if (it != by_dependent_.end()) by_dependent_.erase(it);
    return changed;
  }
  for (const DependencyRef& r : refs) {
    by_ref_[r][dependent] = clusters;
    changed.push_back(r);
  }
  by_dependent_[dependent] = {.refs = std::move(refs), .clusters = std::move(clusters)};
  std::sort(changed.begin(), changed.end());
  changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
  return changed;
}

std::vector<DependencyRef> Dependencies::Remove(const std::string& dependent) {
  MutexLock lock(mu_);
  auto it = by_dependent_.find(dependent);
  if (it == by_dependent_.end()) return {};
  std::vector<DependencyRef> changed = it->second.refs;
  Unindex(dependent, it->second);
  by_dependent_.erase(it);
  return changed;
}

bool Dependencies::NeededIn(const DependencyRef& ref, const std::string& cluster) const {
  MutexLock lock(mu_);
  auto it = by_ref_.find(ref);
  if (it == by_ref_.end()) return false;
  for (const auto& [dependent, clusters] : it->second) {
    if (clusters.contains(cluster)) return true;
  }
  return false;
}

void Dependencies::Unindex(const std::string& dependent, const Entry& entry) {
  for (const DependencyRef& r : entry.refs) {
    auto it = by_ref_.find(r);
    if (it == by_ref_.end()) continue;
    it->second.erase(dependent);
    if (it->second.empty()) by_ref_.erase(it);
  }
}

}  // namespace flotilla::federation
