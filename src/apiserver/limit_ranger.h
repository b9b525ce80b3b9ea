// LimitRanger: kube-apiserver's LimitRanger admission plugin for a server
// that serves pods and v1 LimitRange (the members; docs/member.md,
// "Resource quotas and limit ranges"). A pod created in a namespace gets,
// from each LimitRange of type Container there, the `default` limits and
// `defaultRequest` requests its containers (and init containers) lack,
// with the annotation kubernetes.io/limit-ranger saying what was set
// ("LimitRanger plugin set: cpu request for container app; cpu limit for
// container app"); then each container's requests and limits must stay
// within the range's min and max, else Forbidden as Kubernetes words it
// ("maximum cpu usage per Container is 2, but limit is 4"). Pod and
// PersistentVolumeClaim ranges are kept and not enforced.
//
// Thread-safe (reads the store only).
#pragma once

#include <string_view>

#include "base/json.h"
#include "base/status.h"
#include "storage/store.h"

namespace flotilla::apiserver {

class LimitRanger {
 public:
  explicit LimitRanger(storage::Store& store) : store_(store) {}

  // Defaults and checks `pod`, to be created in `ns`.
  Status AdmitPod(std::string_view ns, json::object& pod);

 private:
  storage::Store& store_;
};

}  // namespace flotilla::apiserver
