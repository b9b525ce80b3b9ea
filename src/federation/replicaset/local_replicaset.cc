// The desired local ReplicaSet (local_replicaset.h).
#include "federation/replicaset/local_replicaset.h"

#include <string_view>

#include "federation/common/member_copy.h"

namespace flotilla::federation::replicaset {
namespace {

json::object ObjectAt(const json::object& obj, std::string_view key) {
  const json::object* o = GetObject(obj, key);
  return o == nullptr ? json::object() : *o;
}

}  // namespace

json::object DesiredLocal(const json::object& frs, int64_t replicas) {
  json::object spec = ObjectAt(frs, "spec");
  spec["replicas"] = replicas;
  return json::object{{"apiVersion", "apps/v1"},
                      {"kind", "ReplicaSet"},
                      {"metadata", MemberMetadata(frs)},
                      {"spec", std::move(spec)}};
}
bool NeedsUpdate(const json::object& existing, const json::object& desired) {
  json::object have = ObjectAt(existing, "metadata");
  json::object want = ObjectAt(desired, "metadata");
  return ObjectAt(have, "labels") != ObjectAt(want, "labels") ||
         ObjectAt(have, "annotations") != ObjectAt(want, "annotations") ||
         ObjectAt(existing, "spec") != ObjectAt(desired, "spec");
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

}  // namespace flotilla::federation::replicaset
