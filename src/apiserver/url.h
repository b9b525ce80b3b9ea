// Percent-decoding of request targets into a path and query parameters.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "base/percent_encoding.h"

namespace flotilla::apiserver {

// Query parameters, percent-decoded, looked up by a view without building
// a string.
using QueryParams = std::multimap<std::string, std::string, std::less<>>;

// Splits "/a%2Fb?x=1&y=%20" into path "/a/b" and {x: "1", y: " "}. '+' in the
// query decodes to a space, as Go's url.ParseQuery does.
void SplitTarget(std::string_view target, std::string* path, QueryParams* query);

}  // namespace flotilla::apiserver
