// PolicyStatuses: what each propagation policy places, told where users
// look (docs/policies.md, "Seeing it"):
// - status.placedObjects of every PropagationPolicy and
//   ClusterPropagationPolicy: the number of federated objects it places
//   now. The reconcilers say which policy places each object after every
//   check (Placed) and when an object went (Gone); the controller
//   "policy-status" writes the counts once every reconciler has
//   checked what it held at start (`known`: until then a count would be
//   short), and on any change after.
// - Events on the policy when the policy recorded on an object changes
//   (Recorded): Normal `Matched` ("places Deployment default/web") on the
//   policy that places it now, Normal `Unmatched` ("no longer places ...")
//   on the one that did. They follow the object's annotations, so a
//   restart repeats none.
// - status.failures of every OverridePolicy and ClusterOverridePolicy: the
//   member copies its overriders cannot apply to now ({object, cluster,
//   message}, at most kMaxFailures), told by the reconcilers after each
//   check (Overridden); a Warning Event `ApplyOverridePolicyFailed` on the
//   policy when a copy starts failing (or fails otherwise).
// Thread-safe.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "api/policy/overrides.h"
#include "api/policy/policy.h"
#include "base/mutex.h"
#include "client/client.h"
#include "runtime/controller_manager.h"
#include "runtime/event_recorder.h"
#include "runtime/shared_informers.h"

namespace flotilla::federation {

class PolicyStatuses {
 public:
  // Adds its controller and handlers; the policies' informers are made
  // through `informers`. `known` says whether every object has been
  // checked once. REQUIRES: before the manager starts.
  PolicyStatuses(client::Client& fed, runtime::SharedInformers& informers,
                 runtime::ControllerManager& manager, runtime::EventRecorder& events,
                 std::function<bool()> known);
  PolicyStatuses(const PolicyStatuses&) = delete;
  PolicyStatuses& operator=(const PolicyStatuses&) = delete;

  // The object `id` (its kind, namespace and name, as the events name it:
  // "Deployment default/web") is placed by `policy` now; null: by none.
  void Placed(const std::string& id, const api::policy::PropagationPolicy* policy);
  // Writes every policy's count again (once every object was checked).
  void EnqueueAll();
  // An override policy's overriders that cannot apply to one copy.
  struct Failure {
    std::shared_ptr<const api::policy::OverridePolicy> policy;
    std::string message;
  };
  static constexpr size_t kMaxFailures = 100;
  // The copies of object `id` that the override policies could not
  // change in its last check, by cluster (none: every override applied).
  void Overridden(const std::string& id, const std::map<std::string, Failure>& failures);
  // The object `id` went.
  void Gone(const std::string& id);
  // The policy recorded on object `id` changed from the one `before` (the
  // object's annotations before the change) names to `now` (null: none).
  void Recorded(const std::string& id, const json::object& before,
                const api::policy::PropagationPolicy* now);

 private:
  // A policy's key in the work queue and the counts: "cpp/NAME" or
  // "pp/NAMESPACE/NAME".
  static std::string KeyOf(const api::policy::PropagationPolicy& p);
  // "cop/NAME" or "op/NAMESPACE/NAME".
  static std::string KeyOf(const api::policy::OverridePolicy& p);
  // A failure as the override policy's status and Events hold it.
  struct Failed {
    std::string policy;  // its key
    std::string message;
    friend bool operator==(const Failed&, const Failed&) = default;
  };
  StatusOr<runtime::Result> WriteFailures(const std::string& key, const json::object& obj);
  // The policy of `key` in the caches; null when there is none.
  runtime::ObjectPtr Find(const std::string& key) const;
  StatusOr<runtime::Result> Reconcile(const std::string& key);
  void Event(const std::string& key, std::string_view type, std::string_view reason,
             const std::string& message);
  StatusOr<runtime::Result> WriteStatus(const std::string& key, const json::object& updated);

  client::Client& fed_;
  // PropagationPolicies, ClusterPropagationPolicies, OverridePolicies,
  // ClusterOverridePolicies (the order of the keys' prefixes).
  std::array<runtime::Informer*, 4> informers_{};
  runtime::EventRecorder& events_;
  std::function<bool()> known_;
  runtime::Controller* controller_ = nullptr;
  mutable Mutex mu_;
  std::map<std::string, std::string> placed_by_ GUARDED_BY(mu_);  // object -> policy key
  std::map<std::string, int64_t> counts_ GUARDED_BY(mu_);         // policy key -> objects
  // object -> cluster -> what failed there
  std::map<std::string, std::map<std::string, Failed>> failures_ GUARDED_BY(mu_);
};

}  // namespace flotilla::federation
