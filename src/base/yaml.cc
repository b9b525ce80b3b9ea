// YAML to JSON through yaml-cpp (yaml.h).
#include "base/yaml.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <vector>

#include "base/utf8.h"

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

StatusOr<json::value> Scalar(const std::string& tag, const std::string& s) {
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

// Builds the JSON value of one document from the parser's events. An event
// handler cannot fail, so the first error is kept and later events are
// ignored. Aliases are expanded as copies, within a budget of nodes (a few
// aliases can otherwise stand for more values than memory holds).
class JsonBuilder : public YAML::EventHandler {
 public:
  explicit JsonBuilder(size_t budget) : budget_(budget) {}

  StatusOr<json::value> Take() {
    if (!error_.ok()) return error_;
    return std::move(root_);
  }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Add(mark, json::value(nullptr), anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) return Fail("yaml: unknown anchor (line " + Line(mark) + ")");
    if (!Spend(it->second.second)) return;
    Add(mark, it->second.first, 0, it->second.second);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (!error_.ok()) return;
    auto v = Scalar(tag, value);
    if (!v.ok()) return Fail(v.status().message());
    Add(mark, std::move(*v), anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, json::array(), anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, json::object(), anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct OpenValue {
    json::value value;
    YAML::anchor_t anchor;
    size_t nodes_at_start;
    std::optional<std::string> key;  // a map's key awaiting its value
  };

  static std::string Line(const YAML::Mark& mark) { return std::to_string(mark.line + 1); }

  void Fail(std::string message) {
    if (error_.ok()) error_ = Status::BadRequest(std::move(message));
  }

  bool Spend(size_t nodes) {
    nodes_ += nodes;
    if (nodes_ <= budget_) return true;
    Fail("yaml: document contains excessive aliasing");
    return false;
  }

  // Places a finished value in its parent (or as the root), as the key of
  // a map where one is due; `nodes` is how many values it holds.
  void Add(const YAML::Mark& mark, json::value v, YAML::anchor_t anchor, size_t nodes = 1) {
    if (!error_.ok()) return;
    if (anchor != 0) anchors_[anchor] = {v, nodes};
    if (stack_.empty()) {
      root_ = std::move(v);
      return;
    }
    OpenValue& parent = stack_.back();
    if (parent.value.is_array()) {
      parent.value.as_array().push_back(std::move(v));
    } else if (!parent.key) {
      if (v.is_object() || v.is_array()) {
        return Fail("yaml: a mapping key must be a scalar (line " + Line(mark) + ")");
      }
      // As sigs.k8s.io/yaml turns keys into JSON's strings: 1 -> "1".
      parent.key = v.is_string() ? std::string(v.as_string()) : json::serialize(v);
    } else {
      parent.value.as_object()[*parent.key] = std::move(v);
      parent.key.reset();
    }
  }

  void Open(const YAML::Mark&, json::value container, YAML::anchor_t anchor) {
    if (!error_.ok() || !Spend(1)) return;
    stack_.push_back({std::move(container), anchor, nodes_, std::nullopt});
  }

  void Close() {
    if (!error_.ok() || stack_.empty()) return;
    OpenValue done = std::move(stack_.back());
    stack_.pop_back();
    Add(YAML::Mark(), std::move(done.value), done.anchor, nodes_ - done.nodes_at_start + 1);
  }

  const size_t budget_;
  size_t nodes_ = 0;
  Status error_;
  json::value root_;
  std::vector<OpenValue> stack_;
  std::map<YAML::anchor_t, std::pair<json::value, size_t>> anchors_;
};

// Counts the events of a document without keeping them: whether a second
// document follows.
class Ignore : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

StatusOr<json::value> ParseYaml(std::string_view text) {
  // JSON is YAML, and what clients send (kubectl's applies are JSON):
  // taken by the JSON parser, ten times faster, when it reads it.
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    auto as_json = ParseJson(text);
    if (as_json.ok()) return as_json;
  }
  // JSON strings are UTF-8; so must every byte of the document be (Go's
  // YAML decoder refuses the rest too).
  for (size_t i = 0; i < text.size();) {
    size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      return Status::BadRequest("yaml: invalid UTF-8 at byte " + std::to_string(i));
    }
    i += n;
  }
  try {
    // One document, read by events: yaml-cpp's LoadAll can loop for ever
    // on some malformed input, and its nodes would expand aliases without
    // bound. A second document is refused, not ignored.
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    JsonBuilder builder(text.size() + 1024);
    if (!parser.HandleNextDocument(builder)) return json::value(nullptr);
    Ignore rest;
    if (parser.HandleNextDocument(rest)) {
      return Status::BadRequest("yaml: expected one document, got more");
    }
    return builder.Take();
  } catch (const YAML::Exception& e) {
    return Status::BadRequest(std::string("yaml: ") + e.what());
  }
}

}  // namespace flotilla
