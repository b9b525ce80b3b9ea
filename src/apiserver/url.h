// Percent-decoding of request targets into a path and query parameters.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "base/percent_encoding.h"

namespace flotilla::apiserver {

// Splits "/a%2Fb?x=1&y=%20" into path "/a/b" and {x: "1", y: " "}. '+' in the
// query decodes to a space, as Go's url.ParseQuery does.
void SplitTarget(std::string_view target, std::string* path,
                 std::multimap<std::string, std::string>* query);

}  // namespace flotilla::apiserver
