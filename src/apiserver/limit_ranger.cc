// LimitRanger admission (limit_ranger.h).
#include "apiserver/limit_ranger.h"

#include <string>
#include <tuple>
#include <vector>

#include "api/resources.h"

namespace flotilla::apiserver {
namespace {

json::object& Object(json::object& o, std::string_view key) {
  json::value& v = o[key];
  if (!v.is_object()) v = json::object();
  return v.get_object();
}

const json::object* ObjectIn(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

std::string Text(const json::value& q) {
  return q.is_string() ? std::string(q.get_string()) : json::serialize(q);
}

}  // namespace

Status LimitRanger::AdmitPod(std::string_view ns, json::object& pod) {
  FLOTILLA_ASSIGN_OR_RETURN(storage::ListResult listed,
                            store_.List("/core/limitranges/" + std::string(ns) + "/", {}));
  std::vector<json::object> items;  // the Container items, in name order
  for (const storage::KeyValue& kv : listed.items) {
    StatusOr<json::object> range = ParseJsonObject(kv.value);
    if (!range.ok()) continue;
    const json::value* limits = Find(*range, "spec.limits");
    if (limits == nullptr || !limits->is_array()) continue;
    for (const json::value& item : limits->get_array()) {
      if (item.is_object() && StringAt(item.get_object(), "type") == "Container") {
        items.push_back(item.get_object());
      }
    }
  }
  if (items.empty()) return Status::Ok();
  json::value* spec_value = pod.if_contains("spec");
  if (spec_value == nullptr || !spec_value->is_object()) return Status::Ok();
  json::object& spec = spec_value->get_object();
  std::vector<std::string> set_notes;
  for (std::string_view list : {"initContainers", "containers"}) {
    json::value* containers = spec.if_contains(list);
    if (containers == nullptr || !containers->is_array()) continue;
    for (json::value& c : containers->get_array()) {
      if (!c.is_object()) continue;
      json::object& container = c.get_object();
      std::string name = StringAt(container, "name");
      json::object& resources = Object(container, "resources");
      for (const json::object& item : items) {
        for (const auto& [field, into, word] :
             {std::tuple<std::string_view, std::string_view, std::string_view>{
                  "defaultRequest", "requests", "request"},
              {"default", "limits", "limit"}}) {
          const json::object* defaults = ObjectIn(item, field);
          if (defaults == nullptr || defaults->empty()) continue;
          std::vector<std::string> names;
          json::object& target = Object(resources, into);
          for (const auto& [resource, value] : *defaults) {
            // A request defaults to a limit the container set first.
            if (target.contains(resource)) continue;
            const json::object* limits = ObjectIn(resources, "limits");
            if (into == "requests" && limits != nullptr && limits->contains(resource)) continue;
            target[resource] = value;
            names.emplace_back(resource);
          }
          if (target.empty()) resources.erase(into);
          if (names.empty()) continue;
          std::string joined;
          for (const std::string& n : names) joined += (joined.empty() ? "" : ", ") + n;
          set_notes.push_back(joined + " " + std::string(word) + " for " +
                              (list == "initContainers" ? "init container " : "container ") + name);
        }
      }
      if (resources.empty()) container.erase("resources");
      // min and max.
      for (const json::object& item : items) {
        for (const auto& [bound, is_max] :
             {std::pair<std::string_view, bool>{"min", false}, {"max", true}}) {
          const json::object* limits = ObjectIn(item, bound);
          if (limits == nullptr) continue;
          for (const auto& [resource, q] : *limits) {
            std::optional<int64_t> edge = api::QuantityValue(q, 1000);
            if (!edge) continue;
            for (std::string_view kind : is_max ? std::vector<std::string_view>{"limits"}
                                                : std::vector<std::string_view>{"requests"}) {
              const json::value* have = Find(container, "resources." + std::string(kind));
              const json::value* v = have != nullptr && have->is_object()
                                         ? have->get_object().if_contains(resource)
                                         : nullptr;
              std::string what = is_max ? "limit" : "request";
              std::string head = std::string(is_max ? "maximum " : "minimum ") +
                                 std::string(resource) + " usage per Container is " + Text(q);
              if (v == nullptr) {
                return Status::Forbidden(head + ", but no " + what + " is specified");
              }
              std::optional<int64_t> value = api::QuantityValue(*v, 1000);
              if (value && (is_max ? *value > *edge : *value < *edge)) {
                return Status::Forbidden(head + ", but " + what + " is " + Text(*v));
              }
            }
          }
        }
      }
    }
  }
  if (!set_notes.empty()) {
    std::string note = "LimitRanger plugin set: ";
    for (size_t i = 0; i < set_notes.size(); ++i) note += (i ? "; " : "") + set_notes[i];
    Object(Object(pod, "metadata"), "annotations")["kubernetes.io/limit-ranger"] = note;
  }
  return Status::Ok();
}

}  // namespace flotilla::apiserver
