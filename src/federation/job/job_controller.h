// The federated Job controller (docs/federation.md, "Jobs"): a batch/v1
// Job created on the federation runs as member Jobs of the same name, its
// work divided among the clusters, and its status is theirs summed.
//
// - Division (shares.h): spec.completions is divided by the planner over
//   the ready clusters the placement admits (an even spread, the
//   federation.kubernetes.io/replica-preferences annotation, or the
//   division of the propagation policy that places it); each cluster's
//   copy runs its share of completions and its share of parallelism,
//   rounded up. A work queue Job (no completions) has its parallelism
//   divided. An Indexed Job runs whole in one cluster (its indexes mean
//   what JOB_COMPLETION_INDEX says). A Duplicated policy runs the whole Job
//   in every cluster. Shares are fixed when the copies are created (a
//   member Job's completions cannot change): a cluster that joins later
//   gets nothing of a running Job.
// - A lost cluster (its Cluster not Ready, or no longer admitted) owes what
//   it had not completed: those completions are divided over the ready
//   clusters, queued behind each one's copy, and run by a new copy once the
//   current one completes; what the lost cluster completed is counted and
//   never runs again. A copy found in a lost cluster when it comes back is
//   deleted. An Indexed Job moves whole (and runs again from the start).
// - Status: active, ready, terminating, succeeded and failed summed (the
//   finished copies' counts kept), startTime the earliest, completedIndexes
//   of an Indexed Job's copy. SuccessCriteriaMet and Complete once every
//   completion succeeded and every copy completed; Failed (with
//   FailureTarget) as soon as one copy failed, naming its cluster, and
//   every other copy is suspended. spec.suspend on the federation suspends
//   every copy (Suspended condition).
// - The ledger of shares is in the annotation federation.kubernetes.io/
//   job-shares (shares.h), written with the status.
//
// Thread-safe; time runs on the context's clock.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "federation/common/placer.h"
#include "federation/common/reconciler.h"

namespace flotilla::federation::job {

class JobController : public Strategy {
 public:
  static constexpr char kName[] = "job";

  // Registers the reconciler with `ctx`, which must outlive it.
  JobController(FederationContext& ctx, const WorkloadOptions& options);

  const client::ResourceRef& resource() const override;
  std::string kind() const override { return "Job"; }
  std::string_view PreferencesAnnotation() const override;
  std::optional<Demand> DemandOf(const json::object& obj) const override;
  Status Plan(Check& check) override;
  bool UpToDate(const Copy& c) const override;
  json::object Updated(const Copy& c) const override;
  std::string Detail(const Copy& c) const override;
  StatusOr<runtime::Result> Finish(Check& check) override;

 private:
  struct State;
  // Whether the ready or not cluster counts as lost for `check`'s Job.
  bool Lost(const Check& check, const std::string& cluster) const;

  FederationContext& ctx_;
  std::optional<Reconciler> reconciler_;
};

}  // namespace flotilla::federation::job
