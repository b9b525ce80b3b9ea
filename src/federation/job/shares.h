// How a federated Job's work is shared among the member clusters
// (docs/federation.md, "Jobs"): the ledger the federation keeps in the
// Job's annotation federation.kubernetes.io/job-shares, and the pure rules
// that divide, move and count the work. Thread-safe (pure).
//
// A member's Job cannot change its completions (Kubernetes makes them
// immutable), so a cluster's share is fixed when its copy is created. Work
// that moves to a cluster that already runs a copy (the share of a lost
// cluster) is queued there: when that copy completes, its succeeded pods are
// counted in `done` and it is replaced by a copy that runs the queued
// completions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "planner/planner.h"

namespace flotilla::federation::job {

inline constexpr std::string_view kSharesAnnotation = "federation.kubernetes.io/job-shares";

// One cluster's part of the Job.
struct Share {
  // What its current copy runs: completions (nullopt: a work queue, whose
  // copy runs until one of its pods succeeds) and parallelism. Zero
  // completions: nothing more runs there.
  std::optional<int64_t> completions;
  int64_t parallelism = 0;
  // The current copy's counts as last seen (kept while the cluster cannot
  // be reached).
  int64_t succeeded = 0;
  int64_t failed = 0;
  // Counted from the cluster's earlier copies (or before it was lost).
  int64_t done = 0;
  int64_t failed_done = 0;
  // Completions moved here, run by the next copy once the current one
  // completes.
  int64_t queued = 0;
  // The uid of a completed copy already counted in `done`, being replaced.
  std::string retired;
  // The cluster was lost: what it had not done runs elsewhere, and a copy
  // found there when it comes back is deleted.
  bool lost = false;
  // Its copy failed (beyond its backoffLimit or deadline): the Job fails.
  bool failed_job = false;

  bool operator==(const Share&) const = default;
};

using Ledger = std::map<std::string, Share>;

// The ledger in `job`'s annotation; empty when absent or unreadable.
Ledger ParseLedger(const json::object& job);
std::string SerializeLedger(const Ledger& ledger);

// The first division of a Job of `completions` (nullopt: a work queue) and
// `parallelism` by `plan` (cluster -> replicas planned, for completions or,
// for a work queue, for parallelism). Each cluster with completions gets its
// share of parallelism rounded up (at least 1, at most its completions).
Ledger Divide(std::optional<int64_t> completions, int64_t parallelism,
              const planner::ReplicaCounts& plan);

// What the lost cluster still owed (its completions less what it
// succeeded, and what was queued for it), after which its share is closed
// (its succeeded counted in done, lost set). Zero for a work queue's share
// and for a closed one.
int64_t CloseLost(Share& share);

// The per-cluster breakdown `kubectl flotilla status` and the dashboard
// read (api::kJobStatusAnnotation): {"clusters": {"a": {"planned": 4,
// "ready": 2, "reachable": true}}}, "planned" the completions the cluster
// runs or ran (a work queue's: its parallelism), "ready" those that
// succeeded there; a lost cluster keeps what it completed.
std::string BreakdownAnnotation(const Ledger& ledger);

// Total succeeded and failed over the ledger.
int64_t Succeeded(const Ledger& ledger);
int64_t Failed(const Ledger& ledger);

// The completions not yet assigned to a copy anywhere (queued).
int64_t Queued(const Ledger& ledger);

}  // namespace flotilla::federation::job
