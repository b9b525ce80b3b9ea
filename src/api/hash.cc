// Hashing helpers (hash.h).
#include "api/hash.h"

#include <algorithm>
#include <vector>

namespace flotilla::api {
namespace {

void WriteCanonical(const json::value& v, bool prune, std::string& out);

// Writes the object holding `fields`, its keys sorted; when `prune`, its
// members that come out as null, {} or [] are left out, and nothing at all
// is written (false returned) when none is left.
bool WriteObject(FieldRefs fields, bool prune, std::string& out) {
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
    WriteCanonical(*value, prune, out);
    std::string_view written = std::string_view(out).substr(at);
    if (prune && (written == "null" || written == "{}" || written == "[]")) {
      out.resize(mark);
    } else {
      any = true;
    }
  }
  if (prune && !any) {
    out.resize(start);
    return false;
  }
  out += '}';
  return true;
}

// The canonical text of `v`, pruned (AppendPrunedCanonical) or not; an
// object of which nothing is left is "{}".
void WriteCanonical(const json::value& v, bool prune, std::string& out) {
  if (v.is_object()) {
    FieldRefs fields;
    fields.reserve(v.get_object().size());
    for (const auto& [k, val] : v.get_object()) fields.emplace_back(k, &val);
    if (!WriteObject(std::move(fields), prune, out)) out += "{}";
  } else if (v.is_array()) {
    out += '[';
    bool first = true;
    for (const json::value& e : v.get_array()) {
      if (!first) out += ',';
      first = false;
      WriteCanonical(e, prune, out);
    }
    out += ']';
  } else {
    out += json::serialize(v);
  }
}

}  // namespace

bool AppendPrunedCanonical(FieldRefs fields, std::string& out) {
  return WriteObject(std::move(fields), true, out);
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
  WriteCanonical(v, false, out);
  return out;
}

std::string SafeEncodeString(std::string_view s) {
  static constexpr std::string_view kAlphanums = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (unsigned char c : s) out += kAlphanums[c % kAlphanums.size()];
  return out;
}

}  // namespace flotilla::api
