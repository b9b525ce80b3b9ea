// Label selectors: a lexer and recursive-descent parser that accept exactly
// what apimachinery's labels.Parse accepts, with its error messages, and
// matching. The metav1.LabelSelector conversion is in label_selector_json.cc.
#include "api/labels.h"

#include <algorithm>
#include <charconv>

#include "api/validation.h"

namespace flotilla::api {
namespace {

enum class Token {
  kEnd,
  kClosedPar,
  kComma,
  kDoesNotExist,
  kDoubleEquals,
  kEquals,
  kGreaterThan,
  kIdentifier,
  kIn,
  kLessThan,
  kNotEquals,
  kNotIn,
  kOpenPar,
};

struct Item {
  Token token;
  std::string literal;
};

bool IsWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool IsSpecial(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

std::optional<Token> LiteralToken(std::string_view s) {
  static constexpr std::pair<std::string_view, Token> kTokens[] = {
      {")", Token::kClosedPar},     {",", Token::kComma},    {"!", Token::kDoesNotExist},
      {"==", Token::kDoubleEquals}, {"=", Token::kEquals},   {">", Token::kGreaterThan},
      {"in", Token::kIn},           {"<", Token::kLessThan}, {"!=", Token::kNotEquals},
      {"notin", Token::kNotIn},     {"(", Token::kOpenPar},
  };
  for (const auto& [literal, token] : kTokens) {
    if (literal == s) return token;
  }
  return std::nullopt;
}

// Splits the selector into tokens; always ends with kEnd.
std::vector<Item> Lex(std::string_view s) {
  std::vector<Item> items;
  size_t pos = 0;
  while (true) {
    while (pos < s.size() && IsWhitespace(s[pos])) ++pos;
    if (pos == s.size()) break;
    if (IsSpecial(s[pos])) {
      // The longest run of special characters that is a token; every single
      // special character is one, so this always makes progress.
      size_t len = 1;
      while (pos + len < s.size() && IsSpecial(s[pos + len]) &&
             LiteralToken(s.substr(pos, len + 1))) {
        ++len;
      }
      std::string literal(s.substr(pos, len));
      items.push_back({*LiteralToken(literal), literal});
      pos += len;
      continue;
    }
    size_t start = pos;
    while (pos < s.size() && !IsSpecial(s[pos]) && !IsWhitespace(s[pos])) ++pos;
    std::string literal(s.substr(start, pos - start));
    Token token = Token::kIdentifier;
    if (literal == "in") token = Token::kIn;
    if (literal == "notin") token = Token::kNotIn;
    items.push_back({token, std::move(literal)});
  }
  items.push_back({Token::kEnd, ""});
  return items;
}

// strconv.ParseInt(s, 10, 64): an optional sign, then decimal digits.
std::optional<int64_t> ParseGoInt(std::string_view s) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-') s.remove_prefix(1);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string Quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

json::value StringArray(const std::vector<std::string>& values) {
  json::array out;
  for (const std::string& v : values) out.emplace_back(v);
  return out;
}

// labels.NewRequirement's checks; field paths are relative ("key",
// "values[0]") because the string syntax has no enclosing object.
std::vector<StatusCause> CheckRequirement(const LabelRequirement& r) {
  std::vector<StatusCause> errs;
  for (std::string& msg : IsQualifiedName(r.key)) {
    errs.push_back(FieldInvalid("key", json::string(r.key), msg));
  }
  using Op = SelectorOperator;
  bool integer = r.op == Op::kGreaterThan || r.op == Op::kLessThan;
  if (integer && r.values.size() != 1) {
    errs.push_back(FieldInvalid("values", StringArray(r.values),
                                "for 'Gt', 'Lt' operators, exactly one value is required"));
  }
  for (size_t i = 0; i < r.values.size(); ++i) {
    std::string path = "values[" + std::to_string(i) + "]";
    if (integer && !ParseGoInt(r.values[i])) {
      errs.push_back(FieldInvalid(path, json::string(r.values[i]),
                                  "for 'Gt', 'Lt' operators, the value must be an integer"));
    }
  }
  for (size_t i = 0; i < r.values.size(); ++i) {
    std::string path = "values[" + std::to_string(i) + "][" + r.key + "]";
    for (std::string& msg : IsValidLabelValue(r.values[i])) {
      errs.push_back(FieldInvalid(path, json::string(r.values[i]), msg));
    }
  }
  return errs;
}

// The parser of labels.Parse. In a value position the keywords "in" and
// "notin" are ordinary identifiers.
class Parser {
 public:
  explicit Parser(std::string_view text) : items_(Lex(text)) {}

  StatusOr<std::vector<LabelRequirement>> Parse() {
    std::vector<LabelRequirement> out;
    while (true) {
      auto [token, literal] = Peek();
      if (token == Token::kEnd) return out;
      if (token != Token::kIdentifier && token != Token::kDoesNotExist) {
        return Error("found " + Quoted(literal) + ", expected: !, identifier, or 'end of string'");
      }
      StatusOr<LabelRequirement> r = ParseRequirement();
      if (!r.ok()) return Error("unable to parse requirement: " + r.status().message());
      out.push_back(std::move(r).value());
      auto [next, next_literal] = Next();
      if (next == Token::kEnd) return out;
      if (next != Token::kComma) {
        return Error("found " + Quoted(next_literal) + ", expected: ',' or 'end of string'");
      }
      auto [after, after_literal] = Peek();
      if (after != Token::kIdentifier && after != Token::kDoesNotExist) {
        return Error("found " + Quoted(after_literal) + ", expected: identifier after ','");
      }
    }
  }

 private:
  static Status Error(std::string message) { return Status::BadRequest(std::move(message)); }

  // Tokens as seen in a value position.
  std::pair<Token, std::string> Peek() const { return AsValue(items_[pos_]); }
  std::pair<Token, std::string> Next() { return AsValue(items_[pos_++]); }
  static std::pair<Token, std::string> AsValue(const Item& item) {
    bool keyword = item.token == Token::kIn || item.token == Token::kNotIn;
    return {keyword ? Token::kIdentifier : item.token, item.literal};
  }

  StatusOr<LabelRequirement> ParseRequirement() {
    LabelRequirement r;
    auto [token, literal] = Next();
    bool negated = token == Token::kDoesNotExist;
    if (negated) std::tie(token, literal) = Next();
    if (token != Token::kIdentifier)
      return Error("found " + Quoted(literal) + ", expected: identifier");
    if (std::vector<std::string> msgs = IsQualifiedName(literal); !msgs.empty()) {
      return Error(AggregateCauses({FieldInvalid("<nil>", json::string(literal), Join(msgs))}));
    }
    r.key = literal;
    Token ahead = Peek().first;
    if (negated || ahead == Token::kEnd || ahead == Token::kComma) {
      r.op = negated ? SelectorOperator::kDoesNotExist : SelectorOperator::kExists;
      return Validated(std::move(r));
    }
    FLOTILLA_RETURN_IF_ERROR(ParseOperator(r.op));
    if (r.op == SelectorOperator::kIn || r.op == SelectorOperator::kNotIn) {
      FLOTILLA_RETURN_IF_ERROR(ParseValues(r.values));
    } else {
      FLOTILLA_RETURN_IF_ERROR(ParseExactValue(r.values));
    }
    return Validated(std::move(r));
  }

  static std::string Join(const std::vector<std::string>& msgs) {
    std::string out;
    for (const std::string& m : msgs) out += (out.empty() ? "" : "; ") + m;
    return out;
  }

  static StatusOr<LabelRequirement> Validated(LabelRequirement r) {
    std::vector<StatusCause> errs = CheckRequirement(r);
    if (!errs.empty()) return Error(AggregateCauses(errs));
    return r;
  }

  Status ParseOperator(SelectorOperator& op) {
    const Item& item = items_[pos_++];  // keywords are operators here
    switch (item.token) {
      case Token::kIn:
        op = SelectorOperator::kIn;
        break;
      case Token::kNotIn:
        op = SelectorOperator::kNotIn;
        break;
      case Token::kEquals:
        op = SelectorOperator::kEquals;
        break;
      case Token::kDoubleEquals:
        op = SelectorOperator::kDoubleEquals;
        break;
      case Token::kNotEquals:
        op = SelectorOperator::kNotEquals;
        break;
      case Token::kGreaterThan:
        op = SelectorOperator::kGreaterThan;
        break;
      case Token::kLessThan:
        op = SelectorOperator::kLessThan;
        break;
      default:
        return Error("found " + Quoted(item.literal) + ", expected: in, notin, =, ==, !=, gt, lt");
    }
    return Status::Ok();
  }

  // "(a,b,,c)": values are de-duplicated and sorted, as a Go string set.
  Status ParseValues(std::vector<std::string>& values) {
    auto [token, literal] = Next();
    if (token != Token::kOpenPar) return Error("found " + Quoted(literal) + " expected: '('");
    std::tie(token, literal) = Peek();
    if (token == Token::kClosedPar) {
      Next();
      values = {""};
      return Status::Ok();
    }
    if (token != Token::kIdentifier && token != Token::kComma) {
      return Error("found " + Quoted(literal) + ", expected: ',', ')' or identifier");
    }
    FLOTILLA_RETURN_IF_ERROR(ParseIdentifierList(values));
    if (Next().first != Token::kClosedPar) {
      return Error("found " + Quoted(literal) + ", expected: ')'");
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return Status::Ok();
  }

  Status ParseIdentifierList(std::vector<std::string>& values) {
    while (true) {
      auto [token, literal] = Next();
      if (token == Token::kIdentifier) {
        values.push_back(literal);
        auto [ahead, ahead_literal] = Peek();
        if (ahead == Token::kComma) continue;
        if (ahead == Token::kClosedPar) return Status::Ok();
        return Error("found " + Quoted(ahead_literal) + ", expected: ',' or ')'");
      }
      if (token != Token::kComma) {
        return Error("found " + Quoted(literal) + ", expected: ',', or identifier");
      }
      if (values.empty()) values.push_back("");  // "(,"
      Token ahead = Peek().first;
      if (ahead == Token::kClosedPar) {
        values.push_back("");  // ",)"
        return Status::Ok();
      }
      if (ahead == Token::kComma) {
        Next();
        values.push_back("");  // ",,"
      }
    }
  }

  Status ParseExactValue(std::vector<std::string>& values) {
    Token ahead = Peek().first;
    if (ahead == Token::kEnd || ahead == Token::kComma) {
      values = {""};
      return Status::Ok();
    }
    auto [token, literal] = Next();
    if (token != Token::kIdentifier)
      return Error("found " + Quoted(literal) + ", expected: identifier");
    values = {literal};
    return Status::Ok();
  }

  std::vector<Item> items_;
  size_t pos_ = 0;
};

bool HasValue(const LabelRequirement& r, std::string_view v) {
  return std::find(r.values.begin(), r.values.end(), v) != r.values.end();
}

}  // namespace

bool LabelRequirement::Matches(const json::object* labels) const {
  const json::value* v = labels == nullptr ? nullptr : labels->if_contains(key);
  std::optional<std::string_view> value;
  if (v != nullptr && v->is_string()) value = v->get_string();
  switch (op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kEquals:
    case SelectorOperator::kDoubleEquals:
      return value && HasValue(*this, *value);
    case SelectorOperator::kNotIn:
    case SelectorOperator::kNotEquals:
      return !value || !HasValue(*this, *value);
    case SelectorOperator::kExists:
      return value.has_value();
    case SelectorOperator::kDoesNotExist:
      return !value;
    case SelectorOperator::kGreaterThan:
    case SelectorOperator::kLessThan: {
      if (!value || values.size() != 1) return false;
      std::optional<int64_t> have = ParseGoInt(*value);
      std::optional<int64_t> want = ParseGoInt(values[0]);
      if (!have || !want) return false;
      return op == SelectorOperator::kGreaterThan ? *have > *want : *have < *want;
    }
  }
  return false;
}

std::string LabelRequirement::ToString() const {
  std::string out = op == SelectorOperator::kDoesNotExist ? "!" + key : key;
  switch (op) {
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      return out;
    case SelectorOperator::kEquals:
      out += "=";
      break;
    case SelectorOperator::kDoubleEquals:
      out += "==";
      break;
    case SelectorOperator::kNotEquals:
      out += "!=";
      break;
    case SelectorOperator::kIn:
      out += " in (";
      break;
    case SelectorOperator::kNotIn:
      out += " notin (";
      break;
    case SelectorOperator::kGreaterThan:
      out += ">";
      break;
    case SelectorOperator::kLessThan:
      out += "<";
      break;
  }
  std::vector<std::string> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) out += (i > 0 ? "," : "") + sorted[i];
  if (op == SelectorOperator::kIn || op == SelectorOperator::kNotIn) out += ")";
  return out;
}

void LabelSelector::SortRequirements(std::vector<LabelRequirement>& reqs) {
  std::stable_sort(
      reqs.begin(), reqs.end(),
      [](const LabelRequirement& a, const LabelRequirement& b) { return a.key < b.key; });
}

StatusOr<LabelSelector> LabelSelector::Parse(std::string_view text) {
  FLOTILLA_ASSIGN_OR_RETURN(std::vector<LabelRequirement> reqs, Parser(text).Parse());
  SortRequirements(reqs);
  LabelSelector selector(false);
  selector.requirements_ = std::move(reqs);
  return selector;
}

bool LabelSelector::Matches(const json::object* labels) const {
  if (nothing_) return false;
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [labels](const LabelRequirement& r) { return r.Matches(labels); });
}

bool LabelSelector::MatchesObject(const json::object& obj) const {
  const json::object* meta = GetObject(obj, "metadata");
  return Matches(meta == nullptr ? nullptr : GetObject(*meta, "labels"));
}

std::string LabelSelector::ToString() const {
  std::string out;
  for (const LabelRequirement& r : requirements_) out += (out.empty() ? "" : ",") + r.ToString();
  return out;
}

std::optional<std::string> LabelSelector::RequiresExactMatch(std::string_view key) const {
  for (const LabelRequirement& r : requirements_) {
    if (r.key != key) continue;
    bool exact = r.op == SelectorOperator::kEquals || r.op == SelectorOperator::kDoubleEquals ||
                 r.op == SelectorOperator::kIn;
    if (exact && r.values.size() == 1) return r.values[0];
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace flotilla::api
