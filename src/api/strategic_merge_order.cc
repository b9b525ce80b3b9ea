// Element identities and list ordering for the strategic merge patch.
#include "api/strategic_merge_order.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace flotilla::api::smp {
namespace {

constexpr size_t kAbsent = std::numeric_limits<size_t>::max();

size_t Rank(const IndexMap& index, const std::string& id) {
  auto it = index.find(id);
  return it == index.end() ? kAbsent : it->second;
}

}  // namespace

std::string Render(const json::value& v) { return json::serialize(v); }

Status NoMergeKey(const json::value& item, std::string_view key) {
  return Status::BadRequest("map: " + Render(item) +
                            " does not contain declared merge key: " + std::string(key));
}

StatusOr<std::string> Identity(const json::value& item, std::string_view merge_key) {
  if (merge_key.empty()) return Render(item);
  if (!item.is_object()) {
    return Status::BadRequest("expected a map, but received a " + std::string(JsonTypeName(item)));
  }
  const json::value* key = item.get_object().if_contains(merge_key);
  if (key == nullptr) return NoMergeKey(item, merge_key);
  return Render(*key);
}

StatusOr<std::vector<std::string>> Identities(const json::array& items,
                                              std::string_view merge_key) {
  std::vector<std::string> ids;
  for (const json::value& item : items) {
    FLOTILLA_ASSIGN_OR_RETURN(std::string id, Identity(item, merge_key));
    ids.push_back(std::move(id));
  }
  return ids;
}

IndexMap IndexOf(const std::vector<std::string>& ids) {
  IndexMap out;
  for (size_t i = 0; i < ids.size(); ++i) out.emplace(ids[i], i);
  return out;
}

json::array Reorder(std::vector<Entry> merged, const IndexMap& patch_order,
                    const IndexMap& server_order) {
  std::vector<Entry> right, left;  // patch items, server-only items
  for (Entry& e : merged) (patch_order.contains(e.id) ? right : left).push_back(std::move(e));
  auto by = [](const IndexMap& index) {
    return
        [&index](const Entry& a, const Entry& b) { return Rank(index, a.id) < Rank(index, b.id); };
  };
  std::stable_sort(right.begin(), right.end(), by(patch_order));
  std::stable_sort(left.begin(), left.end(), by(server_order));
  json::array out;
  size_t i = 0, j = 0;
  while (i < left.size() || j < right.size()) {
    bool take_left = j >= right.size();
    if (i < left.size() && j < right.size()) {
      size_t l = Rank(server_order, left[i].id), r = Rank(server_order, right[j].id);
      take_left = l != kAbsent && r != kAbsent && l < r;
    }
    out.push_back(std::move(take_left ? left[i++].value : right[j++].value));
  }
  return out;
}

Status CheckElementTypes(const json::array& a, const json::array& b) {
  auto tag = [](const json::value& v) { return v.is_uint64() ? json::kind::int64 : v.kind(); };
  std::optional<json::kind> kind;
  for (const json::array* list : {&a, &b}) {
    for (const json::value& v : *list) {
      if (v.is_array()) return Status::Invalid("lists of lists are not supported");
      if (kind && *kind != tag(v)) {
        return Status::BadRequest("list element types are not identical: " + Render(a) + " " +
                                  Render(b));
      }
      kind = tag(v);
    }
  }
  return Status::Ok();
}

}  // namespace flotilla::api::smp
