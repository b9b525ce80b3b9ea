// UTF-8 as Go reads it (RFC 3629: no overlong forms, no surrogates, nothing
// past U+10FFFF). Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace flotilla {

// The length of the valid UTF-8 sequence starting at s[i]; 0 when the bytes
// there are not one. REQUIRES: i < s.size().
size_t Utf8SequenceLength(std::string_view s, size_t i);

bool ValidUtf8(std::string_view s);

// `s` with every byte that is not part of a valid sequence replaced by
// U+FFFD, as Go's JSON encoder writes such a string: what a message that
// quotes a client's bytes needs before it goes into a JSON response.
std::string ToValidUtf8(std::string_view s);

}  // namespace flotilla
