// YAML to JSON through yaml-cpp (yaml.h).
#include "base/yaml.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <regex>

namespace flotilla {
namespace {

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";

bool IsNullWord(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

std::optional<bool> BoolWord(const std::string& s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

std::optional<json::value> Integer(const std::string& s) {
  static const std::regex kDecimal("[-+]?[0-9]+");
  static const std::regex kOctal("0o[0-7]+");
  static const std::regex kHex("0x[0-9a-fA-F]+");
  int base = 10;
  std::string_view digits = s;
  if (std::regex_match(s, kOctal)) {
    base = 8;
    digits.remove_prefix(2);
  } else if (std::regex_match(s, kHex)) {
    base = 16;
    digits.remove_prefix(2);
  } else if (!std::regex_match(s, kDecimal)) {
    return std::nullopt;
  }
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
  int64_t n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n, base);
  if (ec == std::errc() && end == digits.data() + digits.size()) return json::value(n);
  uint64_t u = 0;
  auto [uend, uec] = std::from_chars(digits.data(), digits.data() + digits.size(), u, base);
  if (uec == std::errc() && uend == digits.data() + digits.size()) return json::value(u);
  return std::nullopt;
}

std::optional<json::value> Float(const std::string& s) {
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (!std::regex_match(s, kFloat)) return std::nullopt;
  return json::value(std::strtod(s.c_str(), nullptr));
}

StatusOr<json::value> Scalar(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  std::string tag = node.Tag();
  if (tag == "!" || tag == std::string(kTagPrefix) + "str") return json::value(json::string(s));
  if (tag == "?" || tag.empty()) {
    if (IsNullWord(s)) return json::value(nullptr);
    if (auto b = BoolWord(s)) return json::value(*b);
    if (auto i = Integer(s)) return *i;
    if (auto f = Float(s)) return *f;
    if (s == ".inf" || s == "-.inf" || s == ".nan" || s == ".NaN" || s == ".Inf") {
      return Status::BadRequest("yaml: " + s + " cannot be represented in JSON");
    }
    return json::value(json::string(s));
  }
  std::string_view name = tag;
  if (name.substr(0, kTagPrefix.size()) == kTagPrefix) name.remove_prefix(kTagPrefix.size());
  if (name == "null") return json::value(nullptr);
  if (name == "bool") {
    if (auto b = BoolWord(s)) return json::value(*b);
  } else if (name == "int") {
    if (auto i = Integer(s)) return *i;
  } else if (name == "float") {
    if (auto i = Integer(s)) return *i;
    if (auto f = Float(s)) return *f;
  }
  return Status::BadRequest("yaml: cannot decode \"" + s + "\" as !!" + std::string(name));
}

StatusOr<json::value> FromNode(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return json::value(nullptr);
    case YAML::NodeType::Scalar:
      return Scalar(node);
    case YAML::NodeType::Sequence: {
      json::array out;
      for (const YAML::Node& item : node) {
        FLOTILLA_ASSIGN_OR_RETURN(json::value v, FromNode(item));
        out.push_back(std::move(v));
      }
      return json::value(std::move(out));
    }
    case YAML::NodeType::Map: {
      json::object out;
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          return Status::BadRequest("yaml: a mapping key must be a scalar (line " +
                                    std::to_string(kv.first.Mark().line + 1) + ")");
        }
        FLOTILLA_ASSIGN_OR_RETURN(json::value v, FromNode(kv.second));
        out[kv.first.Scalar()] = std::move(v);
      }
      return json::value(std::move(out));
    }
  }
  return json::value(nullptr);
}

}  // namespace

StatusOr<json::value> ParseYaml(std::string_view text) {
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(std::string(text));
    if (docs.size() > 1) {
      return Status::BadRequest("yaml: expected one document, got " + std::to_string(docs.size()));
    }
    if (docs.empty()) return json::value(nullptr);
    return FromNode(docs[0]);
  } catch (const YAML::Exception& e) {
    return Status::BadRequest(std::string("yaml: ") + e.what());
  }
}

}  // namespace flotilla
