#include "member/replicaset/controller_ref.h"

#include <algorithm>
#include <optional>

#include "api/owner.h"
#include "api/views.h"

namespace flotilla::member {
namespace {

std::string Meta(const json::object& obj, std::string_view key) {
  const json::object* meta = GetObject(obj, "metadata");
  if (meta == nullptr) return "";
  return std::string(GetString(*meta, key).value_or(""));
}

StatusOr<json::object> PatchOwnerRefs(client::Client& client, const ClaimRequest& req,
                                      const json::object& obj, json::value ref) {
  json::object patch = {
      {"metadata", {{"ownerReferences", json::array{std::move(ref)}}, {"uid", Meta(obj, "uid")}}}};
  return client.Patch(*req.resource, Meta(obj, "namespace"), Meta(obj, "name"),
                      client::PatchType::kStrategic, ToJson(patch));
}

}  // namespace

ClaimResult ClaimObjects(client::Client& client, const ClaimRequest& req,
                         const std::vector<runtime::ObjectPtr>& candidates) {
  ClaimResult out;
  const std::string owner_uid = Meta(*req.owner, "uid");
  const bool owner_deleting = api::IsBeingDeleted(*req.owner);
  std::optional<Status> adoptable;  // checked at the first adoption
  auto fail = [&](const Status& s) {
    if (out.error.ok()) out.error = s;
  };
  for (const runtime::ObjectPtr& obj : candidates) {
    const json::object* ref = api::ControllerRef(*obj);
    bool matches = req.selector->MatchesObject(*obj);
    if (ref != nullptr) {
      if (GetString(*ref, "uid") != owner_uid) continue;  // another controller's
      if (matches) {
        out.claimed.push_back(obj);
        continue;
      }
      if (owner_deleting) continue;
      json::object del = {{"$patch", "delete"}, {"uid", owner_uid}};
      auto released = PatchOwnerRefs(client, req, *obj, std::move(del));
      if (!released.ok() && !released.status().Is(Reason::kNotFound)) fail(released.status());
      continue;
    }
    if (!matches || owner_deleting || api::IsBeingDeleted(*obj)) continue;
    if (Meta(*obj, "namespace") != Meta(*req.owner, "namespace")) continue;
    if (!adoptable) adoptable = req.can_adopt ? req.can_adopt() : Status::Ok();
    if (!adoptable->ok()) {
      fail(*adoptable);
      continue;
    }
    auto adopted =
        PatchOwnerRefs(client, req, *obj,
                       api::NewControllerRef(*req.owner, req.owner_api_version, req.owner_kind));
    if (adopted.ok()) {
      out.claimed.push_back(std::make_shared<const json::object>(std::move(*adopted)));
    } else if (!adopted.status().Is(Reason::kNotFound)) {
      fail(adopted.status());
    }
  }
  return out;
}

std::vector<std::string> ControllerlessValues(const json::object& obj) {
  if (api::ControllerRef(obj) != nullptr) return {};
  return {Meta(obj, "namespace")};
}

std::vector<runtime::ObjectPtr> ClaimCandidates(const runtime::Lister& lister,
                                                const json::object& owner) {
  const std::string ns = Meta(owner, "namespace");
  std::vector<runtime::ObjectPtr> out = lister.ByIndex(kControllerlessIndex, ns);
  for (runtime::ObjectPtr& obj : lister.ByOwner(Meta(owner, "uid"))) {
    if (api::ControllerRef(*obj) != nullptr && Meta(*obj, "namespace") == ns) {
      out.push_back(std::move(obj));
    }
  }
  // The two reads are not one snapshot: an object adopted between them is in
  // both, orphaned in the first and owned in the second. Claimed twice it
  // would count twice, and the controller would delete a pod it needs. Keep
  // the later read (stable sort: the owned copy comes after).
  std::vector<std::pair<std::string, runtime::ObjectPtr>> keyed;
  keyed.reserve(out.size());
  for (runtime::ObjectPtr& obj : out) keyed.emplace_back(runtime::ObjectKey(*obj), std::move(obj));
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<runtime::ObjectPtr> unique;
  unique.reserve(keyed.size());
  for (size_t i = 0; i < keyed.size(); ++i) {
    if (i > 0 && keyed[i - 1].first == keyed[i].first) {
      unique.back() = std::move(keyed[i].second);
    } else {
      unique.push_back(std::move(keyed[i].second));
    }
  }
  return unique;
}

std::vector<runtime::ObjectPtr> ControlledBy(const runtime::Lister& lister, std::string_view ns,
                                             std::string_view owner_uid) {
  std::vector<runtime::ObjectPtr> out;
  for (runtime::ObjectPtr& obj : lister.ByOwner(owner_uid)) {
    const json::object* ref = api::ControllerRef(*obj);
    if (ref == nullptr || GetString(*ref, "uid").value_or("") != owner_uid) continue;
    if (Meta(*obj, "namespace") != ns) continue;
    out.push_back(std::move(obj));
  }
  return out;
}

}  // namespace flotilla::member
