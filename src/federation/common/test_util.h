// Helpers for the federation/common tests.
#pragma once

#include <string_view>

#include "base/json.h"

namespace flotilla::federation::testing {

// `text`, a JSON object (the test's own literal).
inline json::object Obj(std::string_view text) { return json::parse(text).as_object(); }

}  // namespace flotilla::federation::testing
