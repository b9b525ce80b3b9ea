// Format checks, cause builders and message aggregation. ObjectMeta rules
// live in object_meta_validation.cc.
#include "api/validation.h"

#include <charconv>
#include <cstdio>
#include <set>

namespace flotilla::api {
namespace {

constexpr int kDNS1123LabelMaxLength = 63;
constexpr int kDNS1123SubdomainMaxLength = 253;
constexpr int kDNS1035LabelMaxLength = 63;
constexpr int kQualifiedNameMaxLength = 63;
constexpr int kLabelValueMaxLength = 63;

constexpr std::string_view kDNS1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr std::string_view kDNS1123LabelErrMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character";
constexpr std::string_view kDNS1123SubdomainFmt =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr std::string_view kDNS1123SubdomainErrMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";
constexpr std::string_view kDNS1035LabelFmt = "[a-z]([-a-z0-9]*[a-z0-9])?";
constexpr std::string_view kDNS1035LabelErrMsg =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character";
constexpr std::string_view kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view kQualifiedNameErrMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr std::string_view kLabelValueFmt = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr std::string_view kLabelValueErrMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character";

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool MatchesDNS1123Label(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

bool MatchesDNS1123Subdomain(std::string_view s) {
  while (true) {
    size_t dot = s.find('.');
    if (!MatchesDNS1123Label(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

bool MatchesDNS1035Label(std::string_view s) {
  return MatchesDNS1123Label(s) && s.front() >= 'a' && s.front() <= 'z';
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool MatchesQualifiedNamePart(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

std::string MaxLenError(int length) {
  return "must be no more than " + std::to_string(length) + " characters";
}

std::string RegexError(std::string_view msg, std::string_view fmt,
                       std::initializer_list<std::string_view> examples) {
  std::string out(msg);
  out += " (";
  if (examples.size() > 0) out += "e.g. ";
  bool first = true;
  for (std::string_view example : examples) {
    if (!first) out += " or ";
    first = false;
    out += "'" + std::string(example) + "', ";
  }
  out += "regex used for validation is '" + std::string(fmt) + "')";
  return out;
}

// Go's strconv.FormatFloat(f, 'g', -1, 64), which %v uses for float64:
// exponent form below 1e-4 and from 1e+06 on.
std::string FormatGoFloat(double d) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  if (ec != std::errc()) return "NaN";
  std::string sci(buf, end);  // "-1.2345e+06"
  size_t e = sci.find('e');
  int exp = std::stoi(sci.substr(e + 1));
  std::string sign = sci[0] == '-' ? "-" : "";
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c >= '0' && c <= '9') digits += c;
  }
  if (exp < -4 || exp >= 6) {
    std::string mant = digits.substr(0, 1);
    if (digits.size() > 1) mant += "." + digits.substr(1);
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    return sign + mant + exp_buf;
  }
  if (exp < 0) return sign + "0." + std::string(-exp - 1, '0') + digits;
  if (static_cast<size_t>(exp) + 1 >= digits.size()) {
    return sign + digits + std::string(exp + 1 - digits.size(), '0');
  }
  return sign + digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
}

// Length of the valid UTF-8 sequence starting at s[i], or 0.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  unsigned char c = s[i];
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

StatusCause MakeCause(std::string_view type, std::string field, std::string body,
                      std::string_view detail) {
  if (!detail.empty()) body += ": " + std::string(detail);
  return StatusCause{std::string(type), std::move(body), std::move(field)};
}

}  // namespace

std::vector<std::string> IsDNS1123Label(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDNS1123LabelMaxLength) errs.push_back(MaxLenError(kDNS1123LabelMaxLength));
  if (!MatchesDNS1123Label(value)) {
    if (MatchesDNS1123Subdomain(value)) {
      errs.push_back("must not contain dots");
    } else {
      errs.push_back(RegexError(kDNS1123LabelErrMsg, kDNS1123LabelFmt, {"my-name", "123-abc"}));
    }
  }
  return errs;
}

std::vector<std::string> IsDNS1123Subdomain(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDNS1123SubdomainMaxLength) {
    errs.push_back(MaxLenError(kDNS1123SubdomainMaxLength));
  }
  if (!MatchesDNS1123Subdomain(value)) {
    errs.push_back(RegexError(kDNS1123SubdomainErrMsg, kDNS1123SubdomainFmt, {"example.com"}));
  }
  return errs;
}

std::vector<std::string> IsDNS1035Label(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDNS1035LabelMaxLength) errs.push_back(MaxLenError(kDNS1035LabelMaxLength));
  if (!MatchesDNS1035Label(value)) {
    errs.push_back(RegexError(kDNS1035LabelErrMsg, kDNS1035LabelFmt, {"my-name", "abc-123"}));
  }
  return errs;
}

std::vector<std::string> IsQualifiedName(std::string_view value) {
  std::vector<std::string> errs;
  std::string_view name = value;
  size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      return {
          "a qualified name " +
          RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt, {"MyName", "my.name", "123-abc"}) +
          " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"};
    }
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      for (std::string& msg : IsDNS1123Subdomain(prefix)) errs.push_back("prefix part " + msg);
    }
  }
  if (name.empty()) {
    errs.push_back("name part must be non-empty");
  } else if (name.size() > kQualifiedNameMaxLength) {
    errs.push_back("name part " + MaxLenError(kQualifiedNameMaxLength));
  }
  if (!MatchesQualifiedNamePart(name)) {
    errs.push_back("name part " + RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt,
                                             {"MyName", "my.name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> IsValidLabelValue(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kLabelValueMaxLength) errs.push_back(MaxLenError(kLabelValueMaxLength));
  if (!value.empty() && !MatchesQualifiedNamePart(value)) {
    errs.push_back(RegexError(kLabelValueErrMsg, kLabelValueFmt, {"MyValue", "my_value", "12345"}));
  }
  return errs;
}

std::vector<std::string> IsValidPathSegmentName(std::string_view value) {
  if (value == "." || value == "..") return {"may not be '" + std::string(value) + "'"};
  std::vector<std::string> errs;
  if (value.find('/') != std::string_view::npos) errs.push_back("may not contain '/'");
  if (value.find('%') != std::string_view::npos) errs.push_back("may not contain '%'");
  return errs;
}

namespace {
// apimachinery's maskTrailingDash: a generateName prefix may end in '-'.
// Kubernetes replaces the last two bytes with "a"; we keep that quirk.
std::string_view MaskTrailingDash(std::string_view name, std::string& buf) {
  if (name.size() > 1 && name.back() == '-') {
    buf = std::string(name.substr(0, name.size() - 2)) + "a";
    return buf;
  }
  return name;
}
}  // namespace

std::vector<std::string> NameIsDNSSubdomain(std::string_view name, bool prefix) {
  std::string buf;
  return IsDNS1123Subdomain(prefix ? MaskTrailingDash(name, buf) : name);
}

std::vector<std::string> NameIsDNSLabel(std::string_view name, bool prefix) {
  std::string buf;
  return IsDNS1123Label(prefix ? MaskTrailingDash(name, buf) : name);
}

std::vector<std::string> NameIsDNS1035Label(std::string_view name, bool prefix) {
  std::string buf;
  return IsDNS1035Label(prefix ? MaskTrailingDash(name, buf) : name);
}

std::vector<std::string> ValidatePathSegmentName(std::string_view name, bool prefix) {
  if (!prefix) return IsValidPathSegmentName(name);
  std::vector<std::string> errs = IsValidPathSegmentName(name);
  std::erase_if(errs, [](const std::string& e) { return e.starts_with("may not be '"); });
  return errs;
}

namespace {
// Appends byte `c` of a Go-quoted string.
void AppendQuoted(unsigned char c, std::string& out) {
  static constexpr std::pair<char, std::string_view> kEscapes[] = {
      {'"', "\\\""}, {'\\', "\\\\"}, {'\a', "\\a"}, {'\b', "\\b"}, {'\f', "\\f"},
      {'\n', "\\n"}, {'\r', "\\r"},  {'\t', "\\t"}, {'\v', "\\v"}};
  for (const auto& [ch, escaped] : kEscapes) {
    if (c == static_cast<unsigned char>(ch)) {
      out += escaped;
      return;
    }
  }
  if (c < 0x20 || c >= 0x7f) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "\\x%02x", c);
    out += hex;
  } else {
    out += static_cast<char>(c);
  }
}
}  // namespace

std::string QuoteGo(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    size_t n = static_cast<unsigned char>(s[i]) >= 0x80 ? Utf8SequenceLength(s, i) : 0;
    if (n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      AppendQuoted(s[i++], out);
    }
  }
  return out + "\"";
}

std::string FormatBadValue(const json::value& value) {
  switch (value.kind()) {
    case json::kind::string:
      return QuoteGo(value.get_string());
    case json::kind::double_:
      return FormatGoFloat(value.get_double());
    default:
      return json::serialize(value);
  }
}

StatusCause FieldInvalid(std::string field, const json::value& value, std::string_view detail) {
  return MakeCause("FieldValueInvalid", std::move(field), "Invalid value: " + FormatBadValue(value),
                   detail);
}

StatusCause FieldRequired(std::string field, std::string_view detail) {
  return MakeCause("FieldValueRequired", std::move(field), "Required value", detail);
}

StatusCause FieldForbidden(std::string field, std::string_view detail) {
  return MakeCause("FieldValueForbidden", std::move(field), "Forbidden", detail);
}

StatusCause FieldTooLong(std::string field, int64_t max_bytes) {
  std::string detail =
      "may not be more than " + std::to_string(max_bytes) + (max_bytes == 1 ? " byte" : " bytes");
  return MakeCause("FieldValueTooLong", std::move(field), "Too long", detail);
}

StatusCause FieldDuplicate(std::string field, const json::value& value) {
  return MakeCause("FieldValueDuplicate", std::move(field),
                   "Duplicate value: " + FormatBadValue(value), "");
}

StatusCause FieldNotSupported(std::string field, const json::value& value,
                              const std::vector<std::string>& supported) {
  std::string detail;
  for (const std::string& s : supported) {
    detail += (detail.empty() ? "supported values: " : ", ") + QuoteGo(s);
  }
  return MakeCause("FieldValueNotSupported", std::move(field),
                   "Unsupported value: " + FormatBadValue(value), detail);
}

StatusCause FieldTypeInvalid(std::string field, const json::value& value,
                             std::string_view expected_type) {
  return MakeCause("FieldValueTypeInvalid", std::move(field),
                   "Invalid value: " + FormatBadValue(value),
                   "must be of type " + std::string(expected_type));
}

std::string AggregateCauses(const std::vector<StatusCause>& causes) {
  std::vector<std::string> messages;
  std::set<std::string> seen;
  for (const StatusCause& cause : causes) {
    std::string msg = cause.field + ": " + cause.message;
    if (seen.insert(msg).second) messages.push_back(std::move(msg));
  }
  if (messages.size() == 1) return messages[0];
  std::string out = "[";
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) out += ", ";
    out += messages[i];
  }
  return out + "]";
}

std::string FormatInvalidMessage(std::string_view qualified_kind, std::string_view name,
                                 const std::vector<StatusCause>& causes) {
  std::string out = std::string(qualified_kind) + " " + QuoteGo(name) + " is invalid";
  if (!causes.empty()) out += ": " + AggregateCauses(causes);
  return out;
}

Status InvalidStatus(std::string_view qualified_kind, std::string_view name,
                     std::vector<StatusCause> causes) {
  std::string message = FormatInvalidMessage(qualified_kind, name, causes);
  return Status::Invalid(std::move(message), std::move(causes));
}

}  // namespace flotilla::api
