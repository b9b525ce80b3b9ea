// JSON helpers over Boost.JSON. Objects are JSON documents (DESIGN §2);
// these helpers parse untrusted input into Status errors and read nested
// fields without throwing.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace flotilla {

namespace json = boost::json;

// Parses `text`; a syntax error is BadRequest carrying the parser's message
// and offset. Duplicate keys keep the last value, as Go's decoder does.
StatusOr<json::value> ParseJson(std::string_view text);
// Like ParseJson but requires a JSON object at the top level.
StatusOr<json::object> ParseJsonObject(std::string_view text);

std::string ToJson(const json::value& v);

// The text of the value of the first top-level member named `key` in the
// JSON object `text`, without parsing the rest: stored objects read for
// one field (the garbage collector reads only metadata). Keys are compared
// as written, so a key spelled with escapes is not found; nullopt when
// `key` is absent or `text` is not a well-formed object up to that member.
std::optional<std::string_view> RawMember(std::string_view text, std::string_view key);

// Nested lookup by a dotted path ("metadata.name"); nullptr when any step is
// missing or not an object.
const json::value* Find(const json::value& v, std::string_view dotted_path);
const json::value* Find(const json::object& o, std::string_view dotted_path);

// The string at a dotted path; "" when absent or not a string.
std::string StringAt(const json::object& o, std::string_view dotted_path);
// The same without a copy: a view into `o`, valid while `o` is unchanged.
std::string_view StringViewAt(const json::object& o, std::string_view dotted_path);
// The integer at a dotted path; `fallback` when absent or not an integer.
int64_t IntAt(const json::object& o, std::string_view dotted_path, int64_t fallback = 0);

// Typed reads of an object's field; nullopt when absent or of another type.
std::optional<std::string_view> GetString(const json::object& o, std::string_view key);
std::optional<int64_t> GetInt(const json::object& o, std::string_view key);
std::optional<bool> GetBool(const json::object& o, std::string_view key);
const json::object* GetObject(const json::object& o, std::string_view key);
const json::array* GetArray(const json::object& o, std::string_view key);
// The array o[key]; an empty one when absent or not an array.
const json::array& ArrayOrEmpty(const json::object& o, std::string_view key);

// The strings of the array at a dotted path, in order, skipping elements
// that are not strings; empty when absent or not an array.
std::vector<std::string> StringsAt(const json::object& o, std::string_view dotted_path);
// The strings as a JSON array.
json::array ToJsonArray(const std::vector<std::string>& strings);

// Returns o[key] as an object, creating (or replacing a non-object with) an
// empty one.
json::object& EnsureObject(json::object& o, std::string_view key);
// Sets the value at a dotted path, making (or replacing non-objects with)
// the objects on the way.
void SetAt(json::object& o, std::string_view dotted_path, json::value v);

// Whether `have` holds everything `want` says: every field of an object
// `want` with an equal (recursively: contained) value in `have`, arrays of
// the same length element by element, scalars equal (numbers by value).
// Null, empty objects and empty arrays in `want` count as absent (Go's
// omitempty), and `have` may carry more fields (a server's defaults).
bool JsonContains(const json::value& have, const json::value& want);

// The JSON type name used in error messages ("string", "object", ...).
std::string_view JsonTypeName(const json::value& v);

}  // namespace flotilla
