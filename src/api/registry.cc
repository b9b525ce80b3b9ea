#include "api/registry.h"

#include <algorithm>
#include <cassert>

namespace flotilla::api {

void Registry::Add(Resource r) {
  assert(Find(r.group, r.version, r.plural) == nullptr);
  resources_.push_back(std::make_shared<Resource>(std::move(r)));
}

Registry Registry::Extended(const std::vector<std::shared_ptr<Resource>>& more) const {
  Registry out;
  out.resources_ = resources_;
  out.custom_kind_hooks_ = custom_kind_hooks_;
  out.resources_.insert(out.resources_.end(), more.begin(), more.end());
  return out;
}

int Registry::ForEachVersion(std::string_view group, std::string_view plural,
                             const std::function<void(Resource&)>& fn) {
  int n = 0;
  for (const auto& r : resources_) {
    if (r->group != group || r->plural != plural) continue;
    fn(*r);
    ++n;
  }
  return n;
}

void ChainValidation(Resource& r, ValidateFn fn) {
  ValidateFn before = std::move(r.validate_fn);
  if (!before) {
    r.validate_fn = std::move(fn);
    return;
  }
  r.validate_fn = [before, fn](const json::object& obj, const json::object* old) {
    std::vector<StatusCause> causes = before(obj, old);
    std::vector<StatusCause> more = fn(obj, old);
    causes.insert(causes.end(), more.begin(), more.end());
    return causes;
  };
}

void ChainCreateMutation(Resource& r, MutateFn fn) {
  MutateFn before = std::move(r.mutate_on_create);
  if (!before) {
    r.mutate_on_create = std::move(fn);
    return;
  }
  r.mutate_on_create = [before, fn](json::object& obj) {
    before(obj);
    fn(obj);
  };
}

int Registry::AddValidation(std::string_view group, std::string_view plural, ValidateFn fn) {
  return ForEachVersion(group, plural, [&fn](Resource& r) { ChainValidation(r, fn); });
}

int Registry::AddAdmission(std::string_view group, std::string_view plural,
                           std::function<Status(const json::object&, const json::object*)> fn) {
  return ForEachVersion(group, plural, [&fn](Resource& r) {
    auto before = std::move(r.admit_fn);
    if (!before) {
      r.admit_fn = fn;
      return;
    }
    r.admit_fn = [before, fn](const json::object& obj, const json::object* old) {
      FLOTILLA_RETURN_IF_ERROR(before(obj, old));
      return fn(obj, old);
    };
  });
}

int Registry::AddCreateMutation(std::string_view group, std::string_view plural, MutateFn fn) {
  return ForEachVersion(group, plural, [&fn](Resource& r) { ChainCreateMutation(r, fn); });
}

void Registry::AddCustomKindHook(std::function<void(Resource&)> fn) {
  custom_kind_hooks_.push_back(std::move(fn));
}

void Registry::PrepareCustomKind(Resource& custom) const {
  for (const auto& fn : custom_kind_hooks_) fn(custom);
}

const Resource* Registry::Find(std::string_view group, std::string_view version,
                               std::string_view plural) const {
  for (const auto& r : resources_) {
    if (r->group == group && r->version == version && r->plural == plural) return r.get();
  }
  return nullptr;
}

std::shared_ptr<const Resource> Registry::FindShared(std::string_view group,
                                                     std::string_view version,
                                                     std::string_view plural) const {
  for (const auto& r : resources_) {
    if (r->group == group && r->version == version && r->plural == plural) return r;
  }
  return nullptr;
}

const Resource* Registry::FindKind(std::string_view api_version, std::string_view kind) const {
  for (const auto& r : resources_) {
    if (r->kind == kind && r->ApiVersion() == api_version) return r.get();
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::vector<std::string>>> Registry::Groups() const {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const auto& r : resources_) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == r->group; });
    if (it == groups.end()) {
      groups.push_back({r->group, {r->version}});
    } else if (std::find(it->second.begin(), it->second.end(), r->version) == it->second.end()) {
      it->second.push_back(r->version);
    }
  }
  return groups;
}

}  // namespace flotilla::api
