// Percent-encoding of URL parts (RFC 3986), shared by the server that
// decodes request targets and the clients that build them.
#pragma once

#include <string>
#include <string_view>

namespace flotilla {

// Everything but the unreserved characters (ALPHA DIGIT - _ . ~) as %XX.
std::string PercentEncode(std::string_view s);
// %XX sequences decoded (a malformed one is kept as it is); with
// `plus_is_space`, '+' is a space, as in a query string.
std::string PercentDecode(std::string_view s, bool plus_is_space);

}  // namespace flotilla
