#include "api/kinds/util.h"

#include <algorithm>
#include <map>

#include "api/kinds/kinds.h"
#include "api/labels.h"
#include "api/validation.h"

namespace flotilla::api::kinds {
namespace {

bool IsZero(const json::value* v) {
  if (v == nullptr) return true;
  switch (v->kind()) {
    case json::kind::null:
      return true;
    case json::kind::string:
      return v->get_string().empty();
    case json::kind::int64:
      return v->get_int64() == 0;
    case json::kind::uint64:
      return v->get_uint64() == 0;
    case json::kind::double_:
      return v->get_double() == 0;
    case json::kind::bool_:
      return !v->get_bool();
    case json::kind::object:
      return v->get_object().empty();
    case json::kind::array:
      return v->get_array().empty();
  }
  return false;
}

bool IsNumber(const json::value& v) { return v.is_int64() || v.is_uint64() || v.is_double(); }

}  // namespace

const json::object& EmptyObject() {
  static const json::object kEmpty;
  return kEmpty;
}

const json::object& ObjectOr(const json::object& o, std::string_view key) {
  const json::object* v = GetObject(o, key);
  return v ? *v : EmptyObject();
}

const json::object* ObjectAt(const json::object& o, std::string_view path) {
  const json::value* v = Find(o, path);
  return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

const json::array* ArrayAt(const json::object& o, std::string_view path) {
  const json::value* v = Find(o, path);
  return v != nullptr && v->is_array() ? &v->get_array() : nullptr;
}

std::optional<int64_t> IntAt(const json::object& o, std::string_view path) {
  size_t dot = path.rfind('.');
  if (dot == std::string_view::npos) return GetInt(o, path);
  const json::object* parent = ObjectAt(o, path.substr(0, dot));
  return parent == nullptr ? std::nullopt : GetInt(*parent, path.substr(dot + 1));
}

int64_t IntOr(const json::object& o, std::string_view path, int64_t fallback) {
  return IntAt(o, path).value_or(fallback);
}

std::vector<const json::object*> ObjectsAt(const json::object& o, std::string_view path) {
  std::vector<const json::object*> out;
  if (const json::array* a = ArrayAt(o, path)) {
    for (const json::value& v : *a) {
      if (v.is_object()) out.push_back(&v.get_object());
    }
  }
  return out;
}

json::object* MutableObject(json::object& o, std::string_view key) {
  json::value* v = o.if_contains(key);
  return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

json::array* MutableArray(json::object& o, std::string_view key) {
  json::value* v = o.if_contains(key);
  return v != nullptr && v->is_array() ? &v->get_array() : nullptr;
}

void SetIfUnset(json::object& o, std::string_view key, json::value v) {
  json::value* cur = o.if_contains(key);
  if (cur == nullptr || cur->is_null()) o[key] = std::move(v);
}

void SetIfEmpty(json::object& o, std::string_view key, std::string_view v) {
  json::value* cur = o.if_contains(key);
  if (cur == nullptr || cur->is_null() || (cur->is_string() && cur->get_string().empty())) {
    o[key] = v;
  }
}

void ForEachObject(json::object& o, std::string_view key,
                   const std::function<void(json::object&)>& fn) {
  json::array* a = MutableArray(o, key);
  if (a == nullptr) return;
  for (json::value& v : *a) {
    if (v.is_object()) fn(v.get_object());
  }
}

bool SemanticEqual(const json::value* a, const json::value* b) {
  if (IsZero(a) && IsZero(b)) return true;
  if (a == nullptr || b == nullptr) return false;
  if (IsNumber(*a) && IsNumber(*b)) return a->to_number<double>() == b->to_number<double>();
  if (a->kind() != b->kind()) return false;
  if (a->is_object()) {
    const json::object& ao = a->get_object();
    const json::object& bo = b->get_object();
    for (const auto& [k, v] : ao) {
      if (!SemanticEqual(&v, bo.if_contains(k))) return false;
    }
    for (const auto& [k, v] : bo) {
      if (!ao.contains(k) && !IsZero(&v)) return false;
    }
    return true;
  }
  if (a->is_array()) {
    const json::array& aa = a->get_array();
    const json::array& ba = b->get_array();
    if (aa.size() != ba.size()) return false;
    for (size_t i = 0; i < aa.size(); ++i) {
      if (!SemanticEqual(&aa[i], &ba[i])) return false;
    }
    return true;
  }
  return *a == *b;
}

std::string Child(std::string_view path, std::string_view name) {
  if (path.empty()) return std::string(name);
  return std::string(path) + "." + std::string(name);
}

std::string Index(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

std::string Key(std::string_view path, std::string_view key) {
  return std::string(path) + "[" + std::string(key) + "]";
}

std::vector<std::string> IsValidPortName(std::string_view port) {
  std::vector<std::string> errs;
  if (port.size() > 15) errs.push_back("must be no more than 15 characters");
  bool charset = !port.empty();
  bool letter = false;
  for (char c : port) {
    bool lower = c >= 'a' && c <= 'z';
    letter = letter || lower;
    if (!lower && !(c >= '0' && c <= '9') && c != '-') charset = false;
  }
  if (!charset)
    errs.push_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!letter) errs.push_back("must contain at least one letter (a-z)");
  if (port.find("--") != std::string_view::npos)
    errs.push_back("must not contain consecutive hyphens");
  if (!port.empty() && (port.front() == '-' || port.back() == '-')) {
    errs.push_back("must not begin or end with a hyphen");
  }
  return errs;
}

StatusCause InvalidRepr(std::string field, std::string_view repr, std::string_view detail) {
  std::string message = "Invalid value: " + std::string(repr);
  if (!detail.empty()) message += ": " + std::string(detail);
  return StatusCause{"FieldValueInvalid", std::move(message), std::move(field)};
}

void CheckNonnegative(const json::object& o, std::string_view key, const std::string& path,
                      Causes& out) {
  std::optional<int64_t> v = GetInt(o, key);
  if (v && *v < 0) {
    out.push_back(FieldInvalid(Child(path, key), *v, "must be greater than or equal to 0"));
  }
}

std::string GoStringMap(const json::value* m) {
  if (m == nullptr || !m->is_object()) return "map[string]string(nil)";
  std::map<std::string, std::string> sorted;
  for (const auto& [k, v] : m->get_object()) {
    sorted[std::string(k)] = v.is_string() ? std::string(v.get_string()) : json::serialize(v);
  }
  std::string out = "map[string]string{";
  bool first = true;
  for (const auto& [k, v] : sorted) {
    if (!first) out += ", ";
    first = false;
    out += QuoteGo(k) + ":" + QuoteGo(v);
  }
  return out + "}";
}

std::string GoStringSlice(const json::value* a) {
  if (a == nullptr || !a->is_array()) return "[]string(nil)";
  std::string out = "[]string{";
  bool first = true;
  for (const json::value& v : a->get_array()) {
    if (!first) out += ", ";
    first = false;
    out += QuoteGo(v.is_string() ? std::string_view(v.get_string()) : std::string_view());
  }
  return out + "}";
}

std::string GoLabelSelector(const json::value* selector) {
  if (selector == nullptr || !selector->is_object()) return QuoteGo("null");
  const json::object& sel = selector->get_object();
  std::string exprs = "[]v1.LabelSelectorRequirement(nil)";
  if (const json::array* list = GetArray(sel, "matchExpressions")) {
    exprs = "[]v1.LabelSelectorRequirement{";
    for (size_t i = 0; i < list->size(); ++i) {
      const json::object& e = (*list)[i].is_object() ? (*list)[i].get_object() : EmptyObject();
      if (i > 0) exprs += ", ";
      exprs += "v1.LabelSelectorRequirement{Key:" + QuoteGo(StringAt(e, "key")) +
               ", Operator:" + QuoteGo(StringAt(e, "operator")) +
               ", Values:" + GoStringSlice(e.if_contains("values")) + "}";
    }
    exprs += "}";
  }
  return "v1.LabelSelector{MatchLabels:" + GoStringMap(sel.if_contains("matchLabels")) +
         ", MatchExpressions:" + exprs + "}";
}

TableColumn NameColumn() {
  return TableColumn{"Name",
                     "string",
                     "name",
                     "Name must be unique within a namespace. Is required when creating "
                     "resources, although some resources may allow a client to request the "
                     "generation of an appropriate name automatically. Name is primarily "
                     "intended for creation idempotence and configuration definition. Cannot be "
                     "updated. More info: "
                     "https://kubernetes.io/docs/concepts/overview/working-with-objects/"
                     "names#names",
                     0,
                     [](const json::object& obj, TimePoint) -> json::value {
                       return json::string(StringAt(obj, "metadata.name"));
                     }};
}

TableColumn AgeColumn() {
  return TableColumn{
      "Age",
      "string",
      "",
      "CreationTimestamp is a timestamp representing the server time when this "
      "object was created. It is not guaranteed to be set in happens-before order "
      "across separate operations. Clients may not set this value. It is "
      "represented in RFC3339 form and is in UTC.\n\nPopulated by the system. "
      "Read-only. Null for lists. More info: "
      "https://git.k8s.io/community/contributors/devel/sig-architecture/"
      "api-conventions.md#metadata",
      0,
      [](const json::object& obj, TimePoint now) -> json::value {
        return json::string(TimestampSince(Find(obj, "metadata.creationTimestamp"), now));
      }};
}

Cell StringCell(std::string path) {
  return [path = std::move(path)](const json::object& obj, TimePoint) -> json::value {
    return json::string(StringAt(obj, path));
  };
}

Cell IntCell(std::string path) {
  return [path = std::move(path)](const json::object& obj, TimePoint) -> json::value {
    return IntOr(obj, path, 0);
  };
}

TableColumn Column(std::string name, std::string type, std::string description, int priority,
                   Cell cell) {
  return TableColumn{std::move(name),        std::move(type), "",
                     std::move(description), priority,        std::move(cell)};
}

std::string TimestampSince(const json::value* rfc3339, TimePoint now) {
  TimePoint t;
  if (rfc3339 == nullptr || !rfc3339->is_string() ||
      !ParseRfc3339(std::string(rfc3339->get_string()), &t)) {
    return "<unknown>";
  }
  return HumanDuration(now - t);
}

std::string FormatLabels(const json::object* labels) {
  if (labels == nullptr || labels->empty()) return "<none>";
  std::map<std::string, std::string> sorted;
  for (const auto& [k, v] : *labels) {
    sorted[std::string(k)] = v.is_string() ? std::string(v.get_string()) : "";
  }
  std::string out;
  for (const auto& [k, v] : sorted) {
    if (!out.empty()) out += ",";
    out += k + "=" + v;
  }
  return out;
}

std::string FormatLabelSelector(const json::value* selector) {
  StatusOr<LabelSelector> parsed = LabelSelector::FromJson(selector, "selector");
  if (!parsed.ok()) return "<error>";
  std::string s = parsed->ToString();
  return s.empty() ? "<none>" : s;
}

std::pair<std::string, std::string> ContainerCells(const json::object* pod_spec) {
  std::string names;
  std::string images;
  if (pod_spec == nullptr) return {names, images};
  std::vector<const json::object*> containers = ObjectsAt(*pod_spec, "containers");
  for (size_t i = 0; i < containers.size(); ++i) {
    if (i > 0) {
      names += ",";
      images += ",";
    }
    names += StringAt(*containers[i], "name");
    images += StringAt(*containers[i], "image");
  }
  return {names, images};
}

std::string QuantityString(const json::value* q) {
  if (q == nullptr || q->is_null()) return "<nil>";
  if (q->is_string()) return std::string(q->get_string());
  if (q->is_int64()) return std::to_string(q->get_int64());
  if (q->is_uint64()) return std::to_string(q->get_uint64());
  return json::serialize(*q);
}

TableColumn ContainersColumn(std::string pod_spec_path) {
  return Column(
      "Containers", "string", "Names of each container in the template.", 1,
      [path = std::move(pod_spec_path)](const json::object& obj, TimePoint) -> json::value {
        return json::string(ContainerCells(ObjectAt(obj, path)).first);
      });
}

TableColumn ImagesColumn(std::string pod_spec_path) {
  return Column(
      "Images", "string", "Images referenced by each container in the template.", 1,
      [path = std::move(pod_spec_path)](const json::object& obj, TimePoint) -> json::value {
        return json::string(ContainerCells(ObjectAt(obj, path)).second);
      });
}

}  // namespace flotilla::api::kinds
