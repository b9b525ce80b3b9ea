#include "base/json.h"

namespace flotilla {

StatusOr<json::value> ParseJson(std::string_view text) {
  boost::system::error_code ec;
  json::parse_options opts;
  opts.allow_invalid_utf8 = false;
  // The parser's stacks (the values of containers not yet closed) start
  // here, not on the heap: a fresh parser otherwise grows them by
  // allocation, the largest share of a small object's parse.
  unsigned char stacks[8192];
  json::stream_parser parser({}, opts, stacks, sizeof stacks);
  size_t n = parser.write_some(text.data(), text.size(), ec);
  if (!ec && n < text.size()) {
    // Trailing bytes after a complete value: only whitespace is allowed.
    for (size_t i = n; i < text.size(); ++i) {
      char c = text[i];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
        return Status::BadRequest("invalid JSON: unexpected data after top-level value at offset " +
                                  std::to_string(i));
      }
    }
  }
  if (!ec) parser.finish(ec);
  if (ec) {
    return Status::BadRequest("invalid JSON: " + ec.message() + " at offset " + std::to_string(n));
  }
  return parser.release();
}

StatusOr<json::object> ParseJsonObject(std::string_view text) {
  FLOTILLA_ASSIGN_OR_RETURN(json::value v, ParseJson(text));
  if (!v.is_object()) {
    return Status::BadRequest(std::string("invalid JSON: expected an object, got ") +
                              std::string(JsonTypeName(v)));
  }
  return std::move(v.as_object());
}

std::string ToJson(const json::value& v) { return json::serialize(v); }

namespace {

constexpr size_t kNone = std::string_view::npos;

size_t SkipSpace(std::string_view t, size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r' || t[i] == '\t')) ++i;
  return i;
}

// `t[i]` is the opening quote; the index after the closing one.
size_t SkipString(std::string_view t, size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '\\') {
      ++i;
    } else if (t[i] == '"') {
      return i + 1;
    }
  }
  return kNone;
}

// The index after the value that starts at `i`; kNone when it does not end.
// Containers are skipped by their brackets, not checked.
size_t SkipValue(std::string_view t, size_t i) {
  if (i >= t.size()) return kNone;
  if (t[i] == '"') return SkipString(t, i);
  if (t[i] != '{' && t[i] != '[') {
    while (i < t.size() && t[i] != ',' && t[i] != '}' && t[i] != ']' && t[i] != ' ' &&
           t[i] != '\n' && t[i] != '\r' && t[i] != '\t') {
      ++i;
    }
    return i;
  }
  int depth = 0;
  while (i < t.size()) {
    char c = t[i];
    if (c == '"') {
      i = SkipString(t, i);
      if (i == kNone) return kNone;
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && --depth == 0) return i + 1;
    ++i;
  }
  return kNone;
}

}  // namespace

std::optional<std::string_view> RawMember(std::string_view text, std::string_view key) {
  size_t i = SkipSpace(text, 0);
  if (i >= text.size() || text[i] != '{') return std::nullopt;
  i = SkipSpace(text, i + 1);
  while (i < text.size() && text[i] == '"') {
    size_t key_end = SkipString(text, i);
    if (key_end == kNone) return std::nullopt;
    std::string_view name = text.substr(i + 1, key_end - i - 2);
    i = SkipSpace(text, key_end);
    if (i >= text.size() || text[i] != ':') return std::nullopt;
    i = SkipSpace(text, i + 1);
    size_t value_end = SkipValue(text, i);
    if (value_end == kNone || value_end == i) return std::nullopt;
    if (name == key) return text.substr(i, value_end - i);
    i = SkipSpace(text, value_end);
    if (i >= text.size() || text[i] != ',') return std::nullopt;
    i = SkipSpace(text, i + 1);
  }
  return std::nullopt;
}

const json::value* Find(const json::value& v, std::string_view dotted_path) {
  const json::value* cur = &v;
  while (!dotted_path.empty()) {
    if (!cur->is_object()) return nullptr;
    size_t dot = dotted_path.find('.');
    std::string_view key = dotted_path.substr(0, dot);
    cur = cur->as_object().if_contains(key);
    if (cur == nullptr) return nullptr;
    dotted_path = dot == std::string_view::npos ? "" : dotted_path.substr(dot + 1);
  }
  return cur;
}

const json::value* Find(const json::object& o, std::string_view dotted_path) {
  size_t dot = dotted_path.find('.');
  const json::value* first = o.if_contains(dotted_path.substr(0, dot));
  if (first == nullptr || dot == std::string_view::npos) return first;
  return Find(*first, dotted_path.substr(dot + 1));
}

std::string StringAt(const json::object& o, std::string_view dotted_path) {
  const json::value* v = Find(o, dotted_path);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

namespace {

bool Empty(const json::value& v) {
  return v.is_null() || (v.is_object() && v.get_object().empty()) ||
         (v.is_array() && v.get_array().empty());
}

}  // namespace

bool JsonContains(const json::value& have, const json::value& want) {
  if (Empty(want)) return true;
  if (want.is_object()) {
    if (!have.is_object()) return false;
    for (const auto& [k, v] : want.get_object()) {
      const json::value* h = have.get_object().if_contains(k);
      if (h == nullptr ? !Empty(v) : !JsonContains(*h, v)) return false;
    }
    return true;
  }
  if (want.is_array()) {
    if (!have.is_array() || have.get_array().size() != want.get_array().size()) return false;
    for (size_t i = 0; i < want.get_array().size(); ++i) {
      if (!JsonContains(have.get_array()[i], want.get_array()[i])) return false;
    }
    return true;
  }
  if (want.is_number() && have.is_number()) {
    if (want.is_double() || have.is_double()) {
      return want.to_number<double>() == have.to_number<double>();
    }
    if (want.is_int64() && want.get_int64() < 0) return have.is_int64() && have == want;
    if (have.is_int64() && have.get_int64() < 0) return false;
    return want.to_number<uint64_t>() == have.to_number<uint64_t>();
  }
  return have == want;
}

std::string_view StringViewAt(const json::object& o, std::string_view dotted_path) {
  const json::value* v = Find(o, dotted_path);
  return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

int64_t IntAt(const json::object& o, std::string_view dotted_path, int64_t fallback) {
  const json::value* v = Find(o, dotted_path);
  if (v == nullptr) return fallback;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->get_uint64());
  return fallback;
}

std::optional<std::string_view> GetString(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return std::string_view(v->get_string());
}

std::optional<int64_t> GetInt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return std::nullopt;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64() && v->get_uint64() <= INT64_MAX) return static_cast<int64_t>(v->get_uint64());
  if (v->is_double()) {
    double d = v->get_double();
    if (d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

std::optional<bool> GetBool(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_bool()) return std::nullopt;
  return v->get_bool();
}

const json::object* GetObject(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

const json::array* GetArray(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_array() ? &v->get_array() : nullptr;
}

const json::array& ArrayOrEmpty(const json::object& o, std::string_view key) {
  static const json::array kEmpty;
  const json::array* a = GetArray(o, key);
  return a != nullptr ? *a : kEmpty;
}

std::vector<std::string> StringsAt(const json::object& o, std::string_view dotted_path) {
  std::vector<std::string> out;
  const json::value* v = Find(o, dotted_path);
  if (v == nullptr || !v->is_array()) return out;
  for (const json::value& s : v->get_array()) {
    if (s.is_string()) out.emplace_back(s.get_string());
  }
  return out;
}

json::array ToJsonArray(const std::vector<std::string>& strings) {
  json::array out;
  for (const std::string& s : strings) out.emplace_back(s);
  return out;
}

json::object& EnsureObject(json::object& o, std::string_view key) {
  json::value& v = o[key];
  if (!v.is_object()) v = json::object();
  return v.as_object();
}

void SetAt(json::object& o, std::string_view dotted_path, json::value v) {
  json::object* at = &o;
  size_t dot;
  while ((dot = dotted_path.find('.')) != std::string_view::npos) {
    at = &EnsureObject(*at, dotted_path.substr(0, dot));
    dotted_path.remove_prefix(dot + 1);
  }
  (*at)[dotted_path] = std::move(v);
}

std::string_view JsonTypeName(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "boolean";
    case json::kind::int64:
    case json::kind::uint64:
      return "integer";
    case json::kind::double_:
      return "number";
    case json::kind::string:
      return "string";
    case json::kind::array:
      return "array";
    case json::kind::object:
      return "object";
  }
  return "unknown";
}

}  // namespace flotilla
