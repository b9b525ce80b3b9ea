// Hashing helpers (hash.h).
#include "api/hash.h"

#include <algorithm>
#include <vector>

namespace flotilla::api {
namespace {

void WriteCanonical(const json::value& v, std::string& out) {
  if (v.is_object()) {
    std::vector<std::pair<std::string_view, const json::value*>> fields;
    for (const auto& [k, val] : v.get_object()) fields.emplace_back(k, &val);
    std::sort(fields.begin(), fields.end());
    out += '{';
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) out += ',';
      out += json::serialize(json::string(fields[i].first));
      out += ':';
      WriteCanonical(*fields[i].second, out);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    bool first = true;
    for (const json::value& e : v.get_array()) {
      if (!first) out += ',';
      first = false;
      WriteCanonical(e, out);
    }
    out += ']';
  } else {
    out += json::serialize(v);
  }
}

// The pruned canonical text of `v` (AppendPrunedCanonical); "{}" for an
// object of which nothing is left.
void WritePrunedCanonical(const json::value& v, std::string& out) {
  if (v.is_object()) {
    FieldRefs fields;
    fields.reserve(v.get_object().size());
    for (const auto& [k, val] : v.get_object()) fields.emplace_back(k, &val);
    if (!AppendPrunedCanonical(std::move(fields), out)) out += "{}";
  } else if (v.is_array()) {
    out += '[';
    bool first = true;
    for (const json::value& e : v.get_array()) {
      if (!first) out += ',';
      first = false;
      WritePrunedCanonical(e, out);
    }
    out += ']';
  } else {
    out += json::serialize(v);
  }
}

}  // namespace

bool AppendPrunedCanonical(FieldRefs fields, std::string& out) {
  std::sort(fields.begin(), fields.end());
  const size_t start = out.size();
  out += '{';
  bool any = false;
  for (const auto& [key, value] : fields) {
    const size_t mark = out.size();
    if (any) out += ',';
    out += json::serialize(json::string(key));
    out += ':';
    const size_t at = out.size();
    WritePrunedCanonical(*value, out);
    std::string_view written = std::string_view(out).substr(at);
    if (written == "null" || written == "{}" || written == "[]") {
      out.resize(mark);
    } else {
      any = true;
    }
  }
  if (!any) {
    out.resize(start);
    return false;
  }
  out += '}';
  return true;
}

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string CanonicalJson(const json::value& v) {
  std::string out;
  WriteCanonical(v, out);
  return out;
}

std::string SafeEncodeString(std::string_view s) {
  static constexpr std::string_view kAlphanums = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (unsigned char c : s) out += kAlphanums[c % kAlphanums.size()];
  return out;
}

}  // namespace flotilla::api
