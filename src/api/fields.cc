// Field selectors: term splitting with backslash escapes, then one
// requirement per term, as apimachinery's fields.ParseSelector does.
#include "api/fields.h"

#include <algorithm>

namespace flotilla::api {
namespace {

// Splits at unescaped commas; escapes stay in the terms.
std::vector<std::string> SplitTerms(std::string_view s) {
  std::vector<std::string> terms;
  if (s.empty()) return terms;
  size_t start = 0;
  bool escaped = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (escaped) {
      escaped = false;
    } else if (s[i] == '\\') {
      escaped = true;
    } else if (s[i] == ',') {
      terms.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  terms.emplace_back(s.substr(start));
  return terms;
}

struct Term {
  std::string_view lhs, op, rhs;
};

// The first operator in the term splits it; "!=" and "==" are tried before
// "=" at each position so that no '=' is left on the value.
std::optional<Term> SplitTerm(std::string_view term) {
  for (size_t i = 0; i < term.size(); ++i) {
    for (std::string_view op : {"!=", "==", "="}) {
      if (term.substr(i).starts_with(op)) {
        return Term{term.substr(0, i), op, term.substr(i + op.size())};
      }
    }
  }
  return std::nullopt;
}

// The UTF-8 character starting at s[i] (one byte when malformed).
std::string_view CharAt(std::string_view s, size_t i) {
  unsigned char c = s[i];
  size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
  return s.substr(i, n);
}

StatusOr<std::string> Unescape(std::string_view s) {
  std::string out;
  bool escaped = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (escaped) {
      if (c != '\\' && c != ',' && c != '=') {
        return Status::BadRequest("invalid field selector: invalid escape sequence: \\" +
                                  std::string(CharAt(s, i)));
      }
      out += c;
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
    } else if (c == ',' || c == '=') {
      // Go prints the rune with %v, i.e. as its code point.
      return Status::BadRequest("invalid field selector: unescaped character in value: " +
                                std::to_string(static_cast<int>(c)));
    } else {
      out += c;
    }
  }
  if (escaped) return Status::BadRequest("invalid field selector: invalid escape sequence: \\");
  return out;
}

}  // namespace

StatusOr<FieldSelector> FieldSelector::Parse(std::string_view text) {
  std::vector<std::string> terms = SplitTerms(text);
  std::sort(terms.begin(), terms.end());
  FieldSelector selector;
  for (const std::string& term : terms) {
    if (term.empty()) continue;
    std::optional<Term> parts = SplitTerm(term);
    if (!parts) {
      return Status::BadRequest("invalid selector: '" + std::string(text) +
                                "'; can't understand '" + term + "'");
    }
    FLOTILLA_ASSIGN_OR_RETURN(std::string value, Unescape(parts->rhs));
    selector.requirements_.push_back(
        {std::string(parts->lhs), parts->op != "!=", std::move(value)});
  }
  return selector;
}

bool FieldSelector::Matches(const FieldGetter& get) const {
  return std::all_of(requirements_.begin(), requirements_.end(), [&get](const FieldRequirement& r) {
    return (get(r.field).value_or("") == r.value) == r.equals;
  });
}

std::vector<std::string> FieldSelector::Fields() const {
  std::vector<std::string> out;
  for (const FieldRequirement& r : requirements_) {
    if (std::find(out.begin(), out.end(), r.field) == out.end()) out.push_back(r.field);
  }
  return out;
}

Status FieldSelector::RequireSupported(
    const std::function<bool(std::string_view field)>& supported) const {
  for (const FieldRequirement& r : requirements_) {
    if (!supported(r.field)) return Status::BadRequest("field label not supported: " + r.field);
  }
  return Status::Ok();
}

std::string FieldSelector::ToString() const {
  std::string out;
  for (const FieldRequirement& r : requirements_) {
    if (!out.empty()) out += ",";
    out += r.field + (r.equals ? "=" : "!=") + EscapeFieldValue(r.value);
  }
  return out;
}

std::optional<std::string> FieldSelector::RequiresExactMatch(std::string_view field) const {
  for (const FieldRequirement& r : requirements_) {
    if (r.field == field && r.equals) return r.value;
  }
  return std::nullopt;
}

std::string EscapeFieldValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == ',' || c == '=') out += '\\';
    out += c;
  }
  return out;
}

std::optional<std::string> ObjectMetaFieldGetter(const json::object& obj, std::string_view field) {
  std::string_view key;
  if (field == "metadata.name") key = "name";
  if (field == "metadata.namespace") key = "namespace";
  if (key.empty()) return std::nullopt;
  const json::object* meta = GetObject(obj, "metadata");
  if (meta == nullptr) return std::string();
  return std::string(GetString(*meta, key).value_or(""));
}

FieldGetter MetadataFieldGetter(const json::object& obj) {
  return [&obj](std::string_view field) { return ObjectMetaFieldGetter(obj, field); };
}

}  // namespace flotilla::api
