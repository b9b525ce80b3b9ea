// Internal to the strategic merge patch (strategic_merge_patch.cc): how list
// elements are identified, checked and ordered. Not part of the api layer's
// interface.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::api::smp {

std::string Render(const json::value& v);

// BadRequest "map: {...} does not contain declared merge key: <key>".
Status NoMergeKey(const json::value& item, std::string_view key);

// What identifies a list element when merging and ordering: its merge key's
// value for lists of objects (merge_key non-empty), the element itself
// otherwise. Compared as serialized JSON, so 1 and 1.0 differ, as int64 and
// float64 do in Go.
StatusOr<std::string> Identity(const json::value& item, std::string_view merge_key);
StatusOr<std::vector<std::string>> Identities(const json::array& items, std::string_view merge_key);

using IndexMap = std::unordered_map<std::string, size_t>;
// Position of each identity's first occurrence.
IndexMap IndexOf(const std::vector<std::string>& ids);

struct Entry {
  json::value value;
  std::string id;
};

// apimachinery's normalizeElementOrder + mergeSortedSlice: items named in
// `patch_order` come in that order; the others keep their server order and
// go before the first patch item that follows them on the server.
json::array Reorder(std::vector<Entry> merged, const IndexMap& patch_order,
                    const IndexMap& server_order);

// One JSON type for every element of both lists (sliceElementType), lists
// of lists being Invalid. Integers of either signedness count as one type.
Status CheckElementTypes(const json::array& a, const json::array& b);

}  // namespace flotilla::api::smp
