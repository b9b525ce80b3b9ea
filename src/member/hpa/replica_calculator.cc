#include "member/hpa/replica_calculator.h"

#include <cmath>
#include <set>

#include "api/hpa/quantity.h"

namespace flotilla::member::hpa {

using api::hpa::ParseMilli;
namespace {

bool Deleting(const json::object& pod) {
  const json::value* v = Find(pod, "metadata.deletionTimestamp");
  return v != nullptr && !v->is_null();
}

bool ReadyConditionTrue(const json::object& pod) {
  const json::value* conditions = Find(pod, "status.conditions");
  if (conditions == nullptr || !conditions->is_array()) return false;
  for (const json::value& c : conditions->get_array()) {
    if (!c.is_object()) continue;
    if (StringAt(c.get_object(), "type") == "Ready") {
      return StringAt(c.get_object(), "status") == "True";
    }
  }
  return false;
}

struct Groups {
  int64_t ready = 0;
  std::set<std::string> unready, missing, ignored;
};

// groupPods: only cpu samples are judged by readiness.
Groups GroupPods(const std::vector<runtime::ObjectPtr>& pods, const PodMetrics& metrics,
                 std::string_view resource) {
  Groups g;
  for (const runtime::ObjectPtr& pod : pods) {
    std::string name = StringAt(*pod, "metadata.name");
    std::string phase = StringAt(*pod, "status.phase");
    if (Deleting(*pod) || phase == "Failed") {
      g.ignored.insert(name);
    } else if (phase == "Pending" || phase.empty()) {
      g.unready.insert(name);
    } else if (metrics.count(name) == 0) {
      g.missing.insert(name);
    } else if (resource == "cpu" && !ReadyConditionTrue(*pod)) {
      g.unready.insert(name);
    } else {
      ++g.ready;
    }
  }
  return g;
}

// calculatePodRequests: the sum of the containers' requests of `resource`.
StatusOr<std::map<std::string, int64_t>> PodRequests(const std::vector<runtime::ObjectPtr>& pods,
                                                     std::string_view resource) {
  std::map<std::string, int64_t> out;
  for (const runtime::ObjectPtr& pod : pods) {
    std::string name = StringAt(*pod, "metadata.name");
    int64_t sum = 0;
    const json::value* containers = Find(*pod, "spec.containers");
    for (const json::value& c :
         containers && containers->is_array() ? containers->get_array() : json::array()) {
      const json::value* q = c.is_object() ? Find(c.get_object(), "resources.requests") : nullptr;
      const json::value* request =
          q && q->is_object() ? q->get_object().if_contains(resource) : nullptr;
      std::optional<int64_t> milli = request ? ParseMilli(*request) : std::nullopt;
      if (!milli) {
        std::string container = c.is_object() ? StringAt(c.get_object(), "name") : "";
        return Status::Invalid("missing request for " + std::string(resource) + " in container " +
                               container + " of Pod " + name);
      }
      sum += *milli;
    }
    out[name] = sum;
  }
  return out;
}

struct Ratio {
  double ratio = 0;
  std::optional<int64_t> utilization;
  int64_t average = 0;
};

// GetResourceUtilizationRatio, or GetMetricUsageRatio without requests.
StatusOr<Ratio> UsageRatio(const PodMetrics& metrics, const ResourceTarget& target,
                           const std::map<std::string, int64_t>& requests) {
  int64_t usage = 0, requested = 0, entries = 0;
  for (const auto& [pod, value] : metrics) {
    auto request = requests.find(pod);
    if (target.utilization && request == requests.end()) continue;
    usage += value;
    requested += target.utilization ? request->second : 0;
    ++entries;
  }
  if (entries == 0 || (target.utilization && requested == 0)) {
    return Status::Invalid("no metrics returned matched known pods");
  }
  Ratio r;
  r.average = usage / entries;
  if (target.utilization) {
    r.utilization = usage * 100 / requested;
    r.ratio = static_cast<double>(*r.utilization) / static_cast<double>(*target.utilization);
  } else {
    r.ratio = static_cast<double>(r.average) / static_cast<double>(*target.average_milli);
  }
  return r;
}

bool WithinTolerance(double ratio) { return std::abs(1.0 - ratio) <= kTolerance; }

int64_t Ceil(double v) { return static_cast<int64_t>(std::ceil(v)); }

}  // namespace

bool IsPodReady(const json::object& pod) {
  return !Deleting(pod) && StringAt(pod, "status.phase") == "Running" && ReadyConditionTrue(pod);
}

PodMetrics SimulatedMetrics(const std::vector<runtime::ObjectPtr>& pods, std::string_view resource,
                            int64_t demand_milli) {
  PodMetrics out;
  if (resource != "cpu" && resource != "memory") return out;
  std::vector<std::string> ready;
  for (const runtime::ObjectPtr& pod : pods) {
    if (Deleting(*pod) || StringAt(*pod, "status.phase") != "Running") continue;
    std::string name = StringAt(*pod, "metadata.name");
    out[name] = 0;
    if (IsPodReady(*pod)) ready.push_back(name);
  }
  if (resource != "cpu" || ready.empty()) return out;
  int64_t n = static_cast<int64_t>(ready.size());
  int64_t demand = std::max<int64_t>(demand_milli, 0);
  for (int64_t i = 0; i < n; ++i) out[ready[i]] = demand / n + (i < demand % n ? 1 : 0);
  return out;
}

StatusOr<ResourceProposal> ResourceReplicas(int64_t current_replicas, const ResourceTarget& target,
                                            std::string_view resource, const PodMetrics& metrics,
                                            const std::vector<runtime::ObjectPtr>& pods) {
  if (metrics.empty()) {
    return Status::Invalid("unable to get metrics for resource " + std::string(resource) +
                           ": no metrics returned from resource metrics API");
  }
  if (pods.empty()) {
    return Status::Invalid("no pods returned by selector while calculating replica count");
  }
  Groups groups = GroupPods(pods, metrics, resource);
  PodMetrics samples = metrics;
  for (const auto* set : {&groups.ignored, &groups.unready}) {
    for (const std::string& pod : *set) samples.erase(pod);
  }
  std::map<std::string, int64_t> requests;
  if (target.utilization) {
    FLOTILLA_ASSIGN_OR_RETURN(requests, PodRequests(pods, resource));
  }
  if (samples.empty()) {
    return Status::Invalid("did not receive metrics for targeted pods (pods might be unready)");
  }
  FLOTILLA_ASSIGN_OR_RETURN(Ratio first, UsageRatio(samples, target, requests));
  ResourceProposal out{current_replicas, first.utilization, first.average};
  bool scale_up_with_unready = !groups.unready.empty() && first.ratio > 1.0;
  if (!scale_up_with_unready && groups.missing.empty()) {
    if (!WithinTolerance(first.ratio)) out.replicas = Ceil(first.ratio * groups.ready);
    return out;
  }
  // Pods without samples count as using their request (or the target) on a
  // scale-down and nothing on a scale-up; unready ones nothing on a
  // scale-up. (The simulated metrics report every Running pod, so no pod
  // goes missing here; the rule is kept for the calculation's sake.)
  for (const std::string& pod : groups.missing) {
    int64_t full = target.utilization
                       ? requests[pod] * std::max<int64_t>(100, *target.utilization) / 100
                       : target.average_milli.value_or(0);
    if (first.ratio < 1.0) samples[pod] = full;
    if (first.ratio > 1.0) samples[pod] = 0;
  }
  if (scale_up_with_unready) {
    for (const std::string& pod : groups.unready) samples[pod] = 0;
  }
  FLOTILLA_ASSIGN_OR_RETURN(Ratio second, UsageRatio(samples, target, requests));
  bool flips =
      (first.ratio < 1.0 && second.ratio > 1.0) || (first.ratio > 1.0 && second.ratio < 1.0);
  if (WithinTolerance(second.ratio) || flips) return out;
  int64_t proposal = Ceil(second.ratio * static_cast<double>(samples.size()));
  if ((second.ratio < 1.0 && proposal > current_replicas) ||
      (second.ratio > 1.0 && proposal < current_replicas)) {
    return out;
  }
  out.replicas = proposal;
  return out;
}

}  // namespace flotilla::member::hpa
