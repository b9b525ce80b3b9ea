// The desired local workload (local_workload.h).
#include "federation/common/local_workload.h"

#include <string_view>

#include "federation/common/member_copy.h"

namespace flotilla::federation {
namespace {

json::object ObjectAt(const json::object& obj, std::string_view key) {
  const json::object* o = GetObject(obj, key);
  return o == nullptr ? json::object() : *o;
}

}  // namespace

json::object DesiredLocal(const json::object& federated, std::optional<int64_t> replicas) {
  json::object spec = ObjectAt(federated, "spec");
  if (replicas) spec["replicas"] = *replicas;
  return json::object{{"apiVersion", StringAt(federated, "apiVersion")},
                      {"kind", StringAt(federated, "kind")},
                      {"metadata", MemberMetadata(federated)},
                      {"spec", std::move(spec)}};
}

bool NeedsUpdate(const json::object& existing, const json::object& desired) {
  json::object have = ObjectAt(existing, "metadata");
  json::object want = ObjectAt(desired, "metadata");
  return ObjectAt(have, "labels") != ObjectAt(want, "labels") ||
         ObjectAt(have, "annotations") != ObjectAt(want, "annotations") ||
         !JsonContains(ObjectAt(existing, "spec"), ObjectAt(desired, "spec"));
}

json::object Updated(const json::object& existing, const json::object& desired) {
  json::object out = existing;
  json::object& meta = EnsureObject(out, "metadata");
  json::object want = ObjectAt(desired, "metadata");
  meta["labels"] = ObjectAt(want, "labels");
  meta["annotations"] = ObjectAt(want, "annotations");
  out["spec"] = ObjectAt(desired, "spec");
  return out;
}

}  // namespace flotilla::federation
