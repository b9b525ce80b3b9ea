// Table output (meta.k8s.io/v1 Table) for `kubectl get`, from the columns
// each kind registers.
#pragma once

#include <string>
#include <vector>

#include "api/registry.h"
#include "base/clock.h"
#include "base/json.h"

namespace flotilla::apiserver {

enum class IncludeObject { kNone, kMetadata, kObject };

// True when the Accept header's first acceptable entry is a Table.
bool WantsTable(std::string_view accept);
IncludeObject ParseIncludeObject(const std::string& value);

// A Table of `objects`. Column definitions are omitted when `with_columns`
// is false (watch events after the first).
json::object ToTable(const api::Resource& res, const std::vector<json::object>& objects,
                     TimePoint now, IncludeObject include, bool with_columns);

// Table-independent AGE cell: "5s", "3m2s", "2d4h" as kubectl prints ages.
std::string AgeOf(const json::object& obj, TimePoint now);

}  // namespace flotilla::apiserver
