// The member's stand-in for the PersistentVolume controller and a
// provisioner, and its pvc-protection controller:
//  - every PersistentVolumeClaim is bound at once to a volume "pvc-<uid>"
//    (spec.volumeName, the pv.kubernetes.io/bind-completed and
//    bound-by-controller annotations), then gets status.phase Bound, its
//    access modes and the requested storage as capacity; a bound claim
//    whose request grows gets the new capacity (an expansion that cannot
//    fail). No PersistentVolume objects exist; nothing else in the member
//    needs them;
//  - a claim being deleted keeps the finalizer kubernetes.io/pvc-protection
//    (which the API server puts on every new claim) while a pod of its
//    namespace uses it (api/claims.h), and loses it, so that it goes, once
//    none does.
#pragma once

#include "member/context.h"

namespace flotilla::member {

class VolumeBinder : public Component {
 public:
  explicit VolumeBinder(ControllerContext& ctx);

 private:
  StatusOr<runtime::Result> Reconcile(const std::string& key);
  // Removes the protection finalizer of a claim being deleted that no pod
  // uses.
  StatusOr<runtime::Result> Release(const json::object& claim);

  client::Client& client_;
  runtime::Informer& claims_;
  runtime::Informer& pods_;
  runtime::Controller* controller_ = nullptr;
};

}  // namespace flotilla::member
