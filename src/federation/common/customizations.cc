// The interpreter's customizations on the federation (customizations.h).
#include "federation/common/customizations.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "api/views.h"

namespace flotilla::federation {

CustomizationPtr Customizations::For(std::string_view api_version, std::string_view kind) const {
  std::pair<std::string, std::string> key{api_version, kind};
  uint64_t generation = 0;
  {
    MutexLock lock(mu_);
    auto it = known_.find(key);
    if (it != known_.end()) return it->second;
    generation = generation_;
  }
  CustomizationPtr merged = Merge(api_version, kind);
  MutexLock lock(mu_);
  // Worked out from a cache that has changed since: not kept.
  if (generation == generation_) known_.emplace(std::move(key), merged);
  return merged;
}

void Customizations::Changed() {
  MutexLock lock(mu_);
  ++generation_;
  known_.clear();
}

CustomizationPtr Customizations::Merge(std::string_view api_version, std::string_view kind) const {
  std::vector<runtime::ObjectPtr> all = informer_.cache().List();
  std::sort(all.begin(), all.end(), [](const runtime::ObjectPtr& a, const runtime::ObjectPtr& b) {
    return api::ObjectView(*a).name() < api::ObjectView(*b).name();
  });
  std::optional<interpreter::Customization> out;
  for (const runtime::ObjectPtr& obj : all) {
    // Most customizations target another kind: skip them before parsing.
    if (StringViewAt(*obj, "spec.target.kind") != kind) continue;
    StatusOr<interpreter::Customization> c = interpreter::Read(*obj);
    if (!c.ok() || c->api_version != api_version || c->kind != kind) continue;
    if (!out.has_value()) {
      out = *std::move(c);
      continue;
    }
    for (interpreter::Operation op : interpreter::kOperations) {
      auto& script = out->scripts[static_cast<size_t>(op)];
      if (script.empty()) script = c->Script(op);
    }
  }
  if (!out.has_value()) return nullptr;
  return std::make_shared<const interpreter::Customization>(*std::move(out));
}

json::object Retained(const CustomizationPtr& c, json::object updated,
                      const json::object& existing) {
  if (c == nullptr || !c->Has(interpreter::Operation::kRetain)) return updated;
  StatusOr<json::object> kept = interpreter::Retain(*c, updated, existing);
  if (!kept.ok()) {
    spdlog::warn("interpreter: Retain of {}/{}: {}", c->kind, api::ObjectView(updated).name(),
                 kept.status().ToString());
    return updated;
  }
  return *std::move(kept);
}

}  // namespace flotilla::federation
