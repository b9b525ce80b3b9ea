// The member's stand-in for the PersistentVolume controller, a
// provisioner and the storage addon, and its pvc-protection controller:
//  - at start, the default StorageClass "standard" (provisioner
//    flotilla.io/simulated, Immediate binding, expansion allowed) is
//    created unless it exists, as kind's and minikube's addons do; the API
//    server gives a claim without a class the default one (apiserver/
//    claim_admission.h);
//  - a claim whose class exists is provisioned and bound to a volume
//    "pvc-<uid>" (spec.volumeName, the pv.kubernetes.io/bind-completed
//    and bound-by-controller annotations, the provisioner's annotations),
//    then gets status.phase Bound, its access modes and the requested
//    storage as capacity; under a WaitForFirstConsumer class, only once a
//    scheduled pod uses it (volume.kubernetes.io/selected-node names the
//    pod's node). A claim of no class ("", or none with no default class)
//    or of a class that does not exist stays Pending, with kube's event
//    (no PersistentVolume objects exist to bind it to); a claim created
//    without a class before a default class existed gets the default once
//    there is one (kube's retroactive default class assignment). A bound claim
//    whose request grows gets the new capacity (the API server let it
//    grow only where its class allows expansion);
//  - a claim being deleted keeps the finalizer kubernetes.io/pvc-protection
//    (which the API server puts on every new claim) while a pod of its
//    namespace uses it (api/claims.h), and loses it, so that it goes, once
//    none does.
#pragma once

#include <string>

#include "member/context.h"

namespace flotilla::member {

// The default StorageClass every member starts with.
inline constexpr char kDefaultStorageClass[] = "standard";
inline constexpr char kSimulatedProvisioner[] = "flotilla.io/simulated";

class VolumeBinder : public Component {
 public:
  explicit VolumeBinder(ControllerContext& ctx);

 private:
  StatusOr<runtime::Result> Reconcile(const std::string& key);
  // Provisions and binds an unbound claim when its class lets it; the
  // claim as written (or as it was, when it waits).
  StatusOr<json::object> Bind(json::object claim);
  // Removes the protection finalizer of a claim being deleted that no pod
  // uses.
  StatusOr<runtime::Result> Release(const json::object& claim);
  Status CreateDefaultClass();

  client::Client& client_;
  runtime::EventRecorder& events_;
  runtime::Informer& claims_;
  runtime::Informer& pods_;
  runtime::Informer& classes_;
  runtime::Controller* controller_ = nullptr;
};

}  // namespace flotilla::member
