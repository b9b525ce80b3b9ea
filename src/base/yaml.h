// YAML documents as JSON values: the bodies of `application/apply-patch+yaml`
// requests and test data. Plain scalars resolve as YAML 1.2's core schema
// does (null, true/false, integers, floats); quoted scalars are strings.
// JSON is YAML, so a JSON body parses the same as through ParseJson.
#pragma once

#include <optional>
#include <string_view>

#include "base/json.h"
#include "base/status.h"

namespace flotilla {

// One YAML document. BadRequest with the parser's message and position for
// malformed YAML or UTF-8, for more than one document, and for values JSON
// cannot hold (.inf, .nan, map keys that are not scalars).
StatusOr<json::value> ParseYaml(std::string_view text);

}  // namespace flotilla
