// kube-apiserver's admission plugins for PersistentVolumeClaims on a server
// that serves them beside storage.k8s.io/v1 StorageClass (the members;
// docs/member.md, "Volumes"):
//  - DefaultStorageClass: a claim created without a class
//    (spec.storageClassName absent, no beta annotation) gets the name of
//    the default class (annotation storageclass.kubernetes.io/
//    is-default-class "true"; of several, the newest, then the first by
//    name); with no default class it keeps none;
//  - PersistentVolumeClaimResize: a claim's storage request may grow only
//    when its class exists and allows volume expansion; else Forbidden, as
//    Kubernetes words it.
// Thread-safe (reads the store only).
#pragma once

#include "base/json.h"
#include "base/status.h"
#include "storage/store.h"

namespace flotilla::apiserver {

class ClaimAdmission {
 public:
  explicit ClaimAdmission(storage::Store& store) : store_(store) {}

  // Gives `claim`, being created, the default class when it names none.
  Status AdmitCreate(json::object& claim);
  // Refuses growing `claim` (from `old`) where its class does not allow it.
  Status AdmitUpdate(const json::object& claim, const json::object& old);

 private:
  storage::Store& store_;
};

}  // namespace flotilla::apiserver
