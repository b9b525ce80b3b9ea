// The member's stand-in for the PersistentVolume controller and a
// provisioner: every PersistentVolumeClaim is bound at once to a volume
// "pvc-<uid>" (spec.volumeName, the pv.kubernetes.io/bind-completed and
// bound-by-controller annotations), then gets status.phase Bound, its
// access modes and the requested storage as capacity. No PersistentVolume
// objects exist; nothing else in the member needs them.
#pragma once

#include "member/context.h"

namespace flotilla::member {

class VolumeBinder : public Component {
 public:
  explicit VolumeBinder(ControllerContext& ctx);

 private:
  StatusOr<runtime::Result> Reconcile(const std::string& key);

  client::Client& client_;
  runtime::Informer& claims_;
};

}  // namespace flotilla::member
