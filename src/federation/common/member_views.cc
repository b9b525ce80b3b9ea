#include "federation/common/member_views.h"

#include <initializer_list>
#include <string_view>

namespace flotilla::federation {
namespace {

// The fields of `from` named in `keys`, as they are.
json::object Pick(const json::object& from, std::initializer_list<std::string_view> keys) {
  json::object out;
  out.reserve(keys.size());
  for (std::string_view key : keys) {
    if (const json::value* v = from.if_contains(key)) out.emplace(key, *v);
  }
  return out;
}

json::array Containers(const json::array& containers) {
  json::array out;
  out.reserve(containers.size());
  for (const json::value& c : containers) {
    if (c.is_object()) out.push_back(Pick(c.get_object(), {"name", "resources", "restartPolicy"}));
  }
  return out;
}

}  // namespace

json::object MemberPodView(const json::object& pod) {
  json::object out = Pick(pod, {"apiVersion", "kind"});
  if (const json::object* meta = GetObject(pod, "metadata")) {
    out["metadata"] = Pick(*meta, {"name", "namespace", "uid", "resourceVersion", "labels",
                                   "ownerReferences", "deletionTimestamp"});
  }
  if (const json::object* spec = GetObject(pod, "spec")) {
    json::object s = Pick(*spec, {"nodeName", "overhead"});
    for (const char* key : {"containers", "initContainers"}) {
      if (const json::array* c = GetArray(*spec, key)) s[key] = Containers(*c);
    }
    out["spec"] = std::move(s);
  }
  if (const json::object* status = GetObject(pod, "status")) {
    json::object s = Pick(*status, {"phase"});
    if (const json::array* conditions = GetArray(*status, "conditions")) {
      json::array kept;
      for (const json::value& c : *conditions) {
        if (c.is_object() && GetString(c.get_object(), "type") == "PodScheduled") kept.push_back(c);
      }
      if (!kept.empty()) s["conditions"] = std::move(kept);
    }
    out["status"] = std::move(s);
  }
  return out;
}

json::object MemberNodeView(const json::object& node) {
  json::object out = Pick(node, {"apiVersion", "kind"});
  if (const json::object* meta = GetObject(node, "metadata")) {
    out["metadata"] =
        Pick(*meta, {"name", "uid", "resourceVersion", "labels", "deletionTimestamp"});
  }
  if (const json::object* spec = GetObject(node, "spec")) {
    out["spec"] = Pick(*spec, {"unschedulable", "taints"});
  }
  if (const json::object* status = GetObject(node, "status")) {
    json::object s = Pick(*status, {"allocatable", "capacity"});
    if (const json::array* conditions = GetArray(*status, "conditions")) {
      json::array kept;
      kept.reserve(conditions->size());
      for (const json::value& c : *conditions) {
        if (c.is_object()) kept.push_back(Pick(c.get_object(), {"type", "status"}));
      }
      s["conditions"] = std::move(kept);
    }
    out["status"] = std::move(s);
  }
  return out;
}

}  // namespace flotilla::federation
