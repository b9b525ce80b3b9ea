// JSON patch (RFC 6902) with JSON pointers (RFC 6901). Messages follow the
// evanphx/json-patch library kube-apiserver uses; unlike kube-apiserver we
// return them in the 422 instead of a generic "the server rejected our
// request due to an error in our request".
#include <optional>

#include "api/patch.h"

namespace flotilla::api {
namespace {

constexpr size_t kMaxOperations = 10000;

Status OpError(std::string message) { return Status::Invalid(std::move(message)); }

Status Missing(std::string message) { return OpError(std::move(message) + ": missing value"); }

// Splits a JSON pointer into unescaped reference tokens; "" is the root.
StatusOr<std::vector<std::string>> ParsePointer(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer[0] != '/') {
    return OpError("invalid JSON pointer \"" + std::string(pointer) + "\": must start with '/'");
  }
  std::string token;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(token));
      token.clear();
    } else if (pointer[i] != '~') {
      token += pointer[i];
    } else if (i + 1 < pointer.size() && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
      token += pointer[++i] == '0' ? '~' : '/';
    } else {
      return OpError("invalid JSON pointer \"" + std::string(pointer) +
                     "\": '~' must be followed by '0' or '1'");
    }
  }
  return tokens;
}

// An array index token: digits without leading zeros.
std::optional<size_t> ParseIndex(std::string_view token) {
  if (token.empty() || token.size() > 18 || (token.size() > 1 && token[0] == '0')) {
    return std::nullopt;
  }
  size_t n = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  return n;
}

Status InvalidIndex(std::string_view token) {
  return OpError("Unable to access invalid index: " + std::string(token) +
                 ": invalid index referenced");
}

// The value at `tokens` below `root`, or null when any step is missing.
json::value* Resolve(json::value& root, const std::vector<std::string>& tokens, size_t count) {
  json::value* cur = &root;
  for (size_t i = 0; i < count; ++i) {
    if (cur->is_object()) {
      cur = cur->get_object().if_contains(tokens[i]);
    } else if (cur->is_array()) {
      std::optional<size_t> idx = ParseIndex(tokens[i]);
      json::array& arr = cur->get_array();
      cur = idx && *idx < arr.size() ? &arr[*idx] : nullptr;
    } else {
      cur = nullptr;
    }
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

// One operation with its pointers parsed.
struct Operation {
  std::string op;
  std::string path, from;
  std::vector<std::string> path_tokens, from_tokens;
  const json::value* value = nullptr;
};

class Patcher {
 public:
  explicit Patcher(json::value doc) : doc_(std::move(doc)) {}

  Status Apply(const Operation& op) {
    if (op.op == "add") return Add(op.path, op.path_tokens, *op.value, "add");
    if (op.op == "remove") return Remove(op);
    if (op.op == "replace") return Replace(op);
    if (op.op == "move") return Move(op);
    if (op.op == "copy") return Copy(op);
    if (op.op == "test") return Test(op);
    return OpError("Unexpected kind: " + op.op);
  }

  json::value Release() { return std::move(doc_); }

 private:
  // The container holding the last token of `tokens`.
  json::value* Parent(const std::vector<std::string>& tokens) {
    return Resolve(doc_, tokens, tokens.size() - 1);
  }

  Status Add(const std::string& path, const std::vector<std::string>& tokens,
             const json::value& value, std::string_view op) {
    if (tokens.empty()) {
      doc_ = value;
      return Status::Ok();
    }
    json::value* parent = Parent(tokens);
    std::string what = op == "add" ? "path" : "destination path";
    if (parent == nullptr || !(parent->is_object() || parent->is_array())) {
      return Missing(std::string(op) + " operation does not apply: doc is missing " + what +
                     ": \"" + path + "\"");
    }
    const std::string& key = tokens.back();
    if (parent->is_object()) {
      parent->get_object()[key] = value;
      return Status::Ok();
    }
    json::array& arr = parent->get_array();
    if (key == "-") {
      arr.push_back(value);
      return Status::Ok();
    }
    std::optional<size_t> idx = ParseIndex(key);
    if (!idx || *idx > arr.size()) return InvalidIndex(key);
    arr.insert(arr.begin() + static_cast<std::ptrdiff_t>(*idx), value);
    return Status::Ok();
  }

  Status Remove(const Operation& op) {
    if (op.path_tokens.empty())
      return OpError("remove operation does not apply: cannot remove the document root");
    json::value* parent = Parent(op.path_tokens);
    const std::string& key = op.path_tokens.back();
    if (parent != nullptr && parent->is_object() && parent->get_object().erase(key) == 1) {
      return Status::Ok();
    }
    if (parent != nullptr && parent->is_array()) {
      json::array& arr = parent->get_array();
      std::optional<size_t> idx = ParseIndex(key);
      if (!idx || *idx >= arr.size()) return InvalidIndex(key);
      arr.erase(arr.begin() + static_cast<std::ptrdiff_t>(*idx));
      return Status::Ok();
    }
    return Missing("remove operation does not apply: doc is missing path: \"" + op.path + "\"");
  }

  Status Replace(const Operation& op) {
    json::value* target = Resolve(doc_, op.path_tokens, op.path_tokens.size());
    if (target == nullptr) {
      json::value* parent = op.path_tokens.empty() ? nullptr : Parent(op.path_tokens);
      if (parent != nullptr && parent->is_array()) return InvalidIndex(op.path_tokens.back());
      return Missing("replace operation does not apply: doc is missing key: " + op.path);
    }
    *target = *op.value;
    return Status::Ok();
  }

  Status Move(const Operation& op) {
    json::value* source = Resolve(doc_, op.from_tokens, op.from_tokens.size());
    if (source == nullptr) {
      return Missing("move operation does not apply: doc is missing from path: " + op.from);
    }
    if (op.path.starts_with(op.from + "/") || (op.from.empty() && !op.path.empty())) {
      return OpError("move operation does not apply: \"from\" location \"" + op.from +
                     "\" is a proper prefix of \"path\" location \"" + op.path + "\"");
    }
    if (op.from == op.path) return Status::Ok();
    json::value value = std::move(*source);
    Operation remove{"remove", op.from, "", op.from_tokens, {}, nullptr};
    FLOTILLA_RETURN_IF_ERROR(Remove(remove));
    return Add(op.path, op.path_tokens, value, "move");
  }

  Status Copy(const Operation& op) {
    const json::value* source = Resolve(doc_, op.from_tokens, op.from_tokens.size());
    if (source == nullptr) {
      return Missing("copy operation does not apply: doc is missing from path: \"" + op.from +
                     "\"");
    }
    json::value value = *source;  // copied first: copying into its own child is well defined
    return Add(op.path, op.path_tokens, value, "copy");
  }

  Status Test(const Operation& op) {
    const json::value* actual = Resolve(doc_, op.path_tokens, op.path_tokens.size());
    if (actual == nullptr && !op.path_tokens.empty()) {
      const json::value* parent = Parent(op.path_tokens);
      if (parent == nullptr) {
        return Missing("test operation does not apply: is missing path: " + op.path);
      }
      // evanphx/json-patch: testing an absent member for null succeeds.
      if (op.value->is_null()) return Status::Ok();
    }
    if (actual != nullptr && JsonEqual(*actual, *op.value)) return Status::Ok();
    return OpError("testing value " + op.path + " failed: test failed");
  }

  json::value doc_;
};

// Reads a string member that the operation needs.
StatusOr<std::string> Member(const json::object& op, std::string_view name, std::string_view kind) {
  const json::value* v = op.if_contains(name);
  if (v == nullptr || !v->is_string()) {
    return OpError(std::string(kind) + " operation does not apply: missing \"" + std::string(name) +
                   "\" string");
  }
  return std::string(v->get_string());
}

StatusOr<Operation> DecodeOperation(const json::object& raw) {
  Operation op;
  const json::value* kind = raw.if_contains("op");
  if (kind == nullptr || !kind->is_string()) {
    return OpError("Unexpected kind: " + (kind ? json::serialize(*kind) : std::string("unknown")));
  }
  op.op = kind->get_string();
  FLOTILLA_ASSIGN_OR_RETURN(op.path, Member(raw, "path", op.op));
  FLOTILLA_ASSIGN_OR_RETURN(op.path_tokens, ParsePointer(op.path));
  if (op.op == "move" || op.op == "copy") {
    FLOTILLA_ASSIGN_OR_RETURN(op.from, Member(raw, "from", op.op));
    FLOTILLA_ASSIGN_OR_RETURN(op.from_tokens, ParsePointer(op.from));
  }
  if (op.op == "add" || op.op == "replace" || op.op == "test") {
    op.value = raw.if_contains("value");
    if (op.value == nullptr) {
      return OpError(op.op + " operation does not apply: missing \"value\"");
    }
  }
  return op;
}

}  // namespace

StatusOr<json::value> JsonPatch(json::value original, const json::value& patch) {
  if (!patch.is_array()) {
    return Status::BadRequest("json patch must be a JSON array of operations, got " +
                              std::string(JsonTypeName(patch)));
  }
  const json::array& ops = patch.get_array();
  if (ops.size() > kMaxOperations) {
    return Status(Reason::kRequestEntityTooLarge,
                  "Request entity too large: The allowed maximum operations in a JSON patch is " +
                      std::to_string(kMaxOperations) + ", got " + std::to_string(ops.size()));
  }
  for (const json::value& op : ops) {
    if (!op.is_object()) {
      return Status::BadRequest("json patch operation must be a JSON object, got " +
                                std::string(JsonTypeName(op)));
    }
  }
  Patcher patcher(std::move(original));
  for (const json::value& raw : ops) {
    FLOTILLA_ASSIGN_OR_RETURN(Operation op, DecodeOperation(raw.get_object()));
    FLOTILLA_RETURN_IF_ERROR(patcher.Apply(op));
  }
  return patcher.Release();
}

}  // namespace flotilla::api
