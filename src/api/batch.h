// The batch/v1 Job's names and facts that the kind, the members' Job
// controller and the federation's share (docs/kinds.md, docs/member.md,
// docs/federation.md "Jobs"). Header only; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "api/conditions.h"
#include "base/json.h"

namespace flotilla::api::batch {

// A Job condition at `now`, as the Job controller writes it.
inline json::object JobCondition(std::string_view type, std::string_view reason,
                                 std::string_view message, std::string_view now,
                                 bool status = true) {
  return {{"type", type},         {"status", status ? "True" : "False"},
          {"lastProbeTime", now}, {"lastTransitionTime", now},
          {"reason", reason},     {"message", message}};
}

inline constexpr std::string_view kNonIndexed = "NonIndexed";
inline constexpr std::string_view kIndexed = "Indexed";

// The labels the Job strategy puts on a Job's pod template (both forms).
inline constexpr std::string_view kJobNameLabel = "batch.kubernetes.io/job-name";
inline constexpr std::string_view kLegacyJobNameLabel = "job-name";
inline constexpr std::string_view kControllerUidLabel = "batch.kubernetes.io/controller-uid";
inline constexpr std::string_view kLegacyControllerUidLabel = "controller-uid";
// An Indexed Job's pods carry their index in this annotation and label.
inline constexpr std::string_view kCompletionIndexAnnotation =
    "batch.kubernetes.io/job-completion-index";

// Job condition types.
inline constexpr std::string_view kComplete = "Complete";
inline constexpr std::string_view kFailed = "Failed";
inline constexpr std::string_view kSuspended = "Suspended";
inline constexpr std::string_view kSuccessCriteriaMet = "SuccessCriteriaMet";
inline constexpr std::string_view kFailureTarget = "FailureTarget";

// The integer at a dotted path of a Job or CronJob; nullopt when unset
// (completions, activeDeadlineSeconds and the like are Go pointers).
inline std::optional<int64_t> OptionalIntAt(const json::object& o, std::string_view path) {
  const json::value* v = Find(o, path);
  if (v == nullptr || !v->is_int64()) return std::nullopt;
  return v->get_int64();
}

// Complete or Failed: the Job runs nothing more.
inline bool Finished(const json::object& job) {
  return ConditionTrue(job, kComplete) || ConditionTrue(job, kFailed);
}

}  // namespace flotilla::api::batch
