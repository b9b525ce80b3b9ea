// Helpers for the federation tests.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "base/json.h"
#include "client/client.h"
#include "federation/common/member_informers.h"

namespace flotilla::federation::testing {

// `text`, a JSON object (the test's own literal).
inline json::object Obj(std::string_view text) { return json::parse(text).as_object(); }

// Whether at least `clusters` members have informers and every one of them
// has synced (one on a kind the member does not serve counts as synced).
// A test that moves a fake clock waits for this after a start: a check that
// runs before the caches sync plans nothing, and the one their sync brings
// would otherwise read the clock already moved.
inline bool MembersSynced(const MemberInformers& members, size_t clusters) {
  std::vector<std::string> names = members.Clusters();
  if (names.size() < clusters) return false;
  for (const std::string& cluster : names) {
    for (const auto& [resource, informer] : members.Of(cluster)) {
      if (!informer->HasSynced() && informer->Served()) return false;
    }
  }
  return true;
}

// The value at `key` of `obj`, null when absent.
inline json::value Value(const json::object& obj, std::string_view key) {
  const json::value* v = obj.if_contains(key);
  return v == nullptr ? json::value() : *v;
}

// The per-cluster breakdown in `obj`'s annotation `key` as
// "cluster=ready/planned" by cluster name, comma-separated ("" when none).
inline std::string BreakdownCells(const json::object& obj, std::string_view key) {
  const json::value* annotations = Find(obj, "metadata.annotations");
  const json::value* text = annotations != nullptr && annotations->is_object()
                                ? annotations->get_object().if_contains(key)
                                : nullptr;
  if (text == nullptr || !text->is_string()) return "";
  StatusOr<json::object> breakdown = ParseJsonObject(text->get_string());
  if (!breakdown.ok()) return "<invalid>";
  std::string out;
  const json::value* clusters = breakdown->if_contains("clusters");
  if (clusters == nullptr || !clusters->is_object()) return out;
  std::map<std::string, std::string> sorted;
  for (const auto& [name, cell] : clusters->get_object()) {
    if (!cell.is_object()) continue;
    sorted[std::string(name)] = json::serialize(Value(cell.get_object(), "ready")) + "/" +
                                json::serialize(Value(cell.get_object(), "planned"));
  }
  for (const auto& [name, cell] : sorted) out += (out.empty() ? "" : ",") + name + "=" + cell;
  return out;
}

// Sets annotation `key` of `name` to `value` with a merge patch: the
// controllers write the objects a test watches, and an update of a copy read
// a moment ago can meet a Conflict.
inline bool PatchAnnotation(client::Client& client, const client::ResourceRef& resource,
                            const std::string& ns, const std::string& name, std::string_view key,
                            std::string_view value) {
  json::object annotations{{key, value}};
  json::object patch{{"metadata", json::object{{"annotations", std::move(annotations)}}}};
  return client.Patch(resource, ns, name, client::PatchType::kMerge, json::serialize(patch)).ok();
}

}  // namespace flotilla::federation::testing
