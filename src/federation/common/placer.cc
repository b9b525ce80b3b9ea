// Where federated workloads' replicas go (placer.h).
#include "federation/common/placer.h"

#include <algorithm>

#include "api/annotations.h"
#include "api/views.h"
#include "base/mutex.h"
#include "federation/common/deletion.h"

namespace flotilla::federation {
namespace {

std::string Describe(const planner::ReplicaCounts& counts) {
  std::string out;
  for (const auto& [cluster, n] : counts) {
    if (!out.empty()) out += ", ";
    out += cluster + "=" + std::to_string(n);
  }
  return out.empty() ? "none" : out;
}

}  // namespace

const json::object* NotScheduled(const json::object& pod) {
  const json::value* conds = Find(pod, "status.conditions");
  if (conds == nullptr || !conds->is_array()) return nullptr;
  for (const json::value& c : conds->get_array()) {
    if (!c.is_object()) continue;
    const json::object& cond = c.get_object();
    if (GetString(cond, "type") == "PodScheduled" && GetString(cond, "status") == "False") {
      return &cond;
    }
  }
  return nullptr;
}

// What a full cluster can run, and when to look for more room there.
struct LearnedCapacity {
  int64_t replicas = 0;
  TimePoint probe_at;
  Duration backoff;
};

// What the placer remembers of one workload between checks.
struct ReplicaPlacer::Workload {
  // cluster -> pod uid -> since when it waits to be scheduled
  std::map<std::string, std::map<std::string, TimePoint>> pending_since;
  // cluster -> since when some of its pods are not even created ([E5])
  std::map<std::string, TimePoint> missing_since;
  // cluster -> when the create it rejected is tried again ([E1])
  std::map<std::string, TimePoint> create_retry_at;
  // cluster -> the capacity learned there ([I4]) and when to probe it
  std::map<std::string, LearnedCapacity> capacity;
  // The last placement, offline clusters included, for the moved count.
  std::optional<planner::ReplicaCounts> last_plan;
};

int64_t PlacementResult::ReplicasFor(const std::string& cluster) const {
  auto it = targets.replicas.find(cluster);
  return it == targets.replicas.end() ? 0 : it->second;
}

ReplicaPlacer::ReplicaPlacer(PlacerOptions options, metrics::Registry& registry,
                             const std::string& kind)
    : options_(options),
      kind_(kind),
      moved_(registry.Counter("flotilla_federation_replicas_moved_total",
                              "Replicas of federated workloads moved from one cluster to another.",
                              {"kind"})),
      changes_(registry.Counter("flotilla_federation_placement_changes_total",
                                "Placements of federated workloads that changed.", {"kind"})) {
  moved_.Add({kind_}, 0);
  changes_.Add({kind_}, 0);
}

ReplicaPlacer::~ReplicaPlacer() = default;

ReplicaPlacer::Workload& ReplicaPlacer::WorkloadFor(const std::string& key) {
  MutexLock lock(mu_);
  std::unique_ptr<Workload>& w = workloads_[key];
  if (!w) w = std::make_unique<Workload>();
  return *w;
}

void ReplicaPlacer::Forget(const std::string& key) {
  MutexLock lock(mu_);
  workloads_.erase(key);
}

PlacementResult ReplicaPlacer::Place(const std::string& key, int64_t replicas,
                                     const planner::Preferences& prefs,
                                     const std::vector<WorkloadInCluster>& clusters,
                                     const LastCheck& last, TimePoint now) {
  Workload& w = WorkloadFor(key);
  PlacementResult out;
  if (!w.last_plan) {
    // A control plane that restarted goes on with what it had learned. The
    // breakdown's estimate is also what a cordon, a drain (decided again
    // from the Cluster) and a refused create (0; retried at once) showed.
    Duration first = options_.capacity_probe_interval;
    for (const WorkloadInCluster& c : clusters) {
      auto n = last.capacity.find(c.cluster);
      if (n == last.capacity.end() || n->second <= 0 || c.cordoned || c.draining) continue;
      w.capacity.try_emplace(c.cluster, LearnedCapacity{n->second, now + first, first});
    }
  }
  for (const WorkloadInCluster& c : clusters) {
    out.views.push_back(View(c, w, last, now, &out.next_check));
  }
  // Clusters that left: their memory goes.
  auto left = [&](const auto& entry) {
    return std::none_of(clusters.begin(), clusters.end(),
                        [&](const WorkloadInCluster& c) { return c.cluster == entry.first; });
  };
  std::erase_if(w.missing_since, left);
  std::erase_if(w.create_retry_at, left);
  std::erase_if(w.pending_since, left);
  std::erase_if(w.capacity, left);
  out.targets = ComputeTargets(replicas, out.views, key, prefs);
  return out;
}

void ReplicaPlacer::CreateFailed(const std::string& key, const std::vector<std::string>& failed,
                                 int64_t replicas, const planner::Preferences& prefs,
                                 PlacementResult& result, TimePoint now) {
  Workload& w = WorkloadFor(key);
  for (ClusterView& v : result.views) {
    if (std::find(failed.begin(), failed.end(), v.name) == failed.end()) continue;
    v.create_failed = true;
    w.create_retry_at[v.name] = now + options_.create_retry;
    if (!result.next_check || now + options_.create_retry < *result.next_check) {
      result.next_check = now + options_.create_retry;
    }
  }
  result.targets = ComputeTargets(replicas, result.views, key, prefs);
}

std::optional<std::string> ReplicaPlacer::Settle(const std::string& key,
                                                 const PlacementResult& result, bool count) {
  Workload& w = WorkloadFor(key);
  planner::ReplicaCounts after, current;
  for (const ClusterView& v : result.views) {
    int64_t now = result.ReplicasFor(v.name);
    if (now != 0 || v.current != 0) after[v.name] = now;
    if (v.current != 0 || now != 0) current[v.name] = v.current;
  }
  // Before: the last placement this process made (offline clusters
  // included), else what the federation had placed when it started.
  planner::ReplicaCounts before = w.last_plan ? *w.last_plan : current;
  int64_t added = 0, removed = 0;
  for (const auto& [name, was] : before) {
    auto now = after.find(name);
    removed += std::max<int64_t>(0, was - (now == after.end() ? 0 : now->second));
  }
  for (const auto& [name, now] : after) {
    auto was = before.find(name);
    added += std::max<int64_t>(0, now - (was == before.end() ? 0 : was->second));
  }
  if (w.last_plan && count) {
    moved_.Add({kind_}, static_cast<double>(std::min(added, removed)));
  }
  w.last_plan = after;
  std::erase_if(before, [](const auto& e) { return e.second == 0; });
  std::erase_if(after, [](const auto& e) { return e.second == 0; });
  if (before == after) return std::nullopt;
  if (count) changes_.Add({kind_});
  return "Replicas per cluster: " + Describe(after) + " (were " + Describe(before) + ")";
}

ClusterView ReplicaPlacer::View(const WorkloadInCluster& c, Workload& w, const LastCheck& last,
                                TimePoint now, std::optional<TimePoint>* next_check) const {
  auto sooner = [&](TimePoint t) {
    if (!*next_check || t < **next_check) *next_check = t;
  };
  ClusterView v{.name = c.cluster, .cordoned = c.cordoned, .draining = c.draining};
  if (auto retry = w.create_retry_at.find(c.cluster); retry != w.create_retry_at.end()) {
    if (now < retry->second) {
      v.create_failed = true;
      sooner(retry->second);
    } else {
      w.create_retry_at.erase(retry);
    }
  }
  if (c.local != nullptr) v.placed = api::WorkloadView(*c.local).replicas();
  // What the federation placed there: this process's last plan (the
  // caches may not show its writes yet), else what the last check recorded
  // on the object (a restarted control plane), else the local spec.
  v.current = v.placed;
  std::optional<int64_t> mine;
  if (w.last_plan) {
    auto it = w.last_plan->find(c.cluster);
    if (it != w.last_plan->end()) mine = it->second;
  }
  if (mine) {
    v.current = *mine;
  } else if (auto planned = last.planned.find(c.cluster); planned != last.planned.end()) {
    v.current = planned->second;
  }
  if (c.local == nullptr) {
    w.pending_since.erase(c.cluster);
    w.missing_since.erase(c.cluster);
    // Nothing there to probe with (a federated HPA took the cluster out):
    // when the probe is due the estimate expires instead.
    if (auto it = w.capacity.find(c.cluster);
        it != w.capacity.end() && now >= it->second.probe_at) {
      w.capacity.erase(it);
    }
    Learned(c.cluster, w, /*waited_too_long=*/false, now, v, sooner);
    return v;
  }
  std::map<std::string, TimePoint>& before = w.pending_since[c.cluster];
  std::map<std::string, TimePoint> pending;
  int64_t live = 0;
  bool waited_too_long = false;
  auto waited = [&](TimePoint since) {
    if (now - since >= options_.unschedulable_threshold) {
      waited_too_long = true;
    } else {
      sooner(since + options_.unschedulable_threshold);
    }
  };
  for (const runtime::ObjectPtr& pod : c.outgoing_pods) {
    if (!api::IsBeingDeleted(*pod)) ++live;
  }
  for (const runtime::ObjectPtr& pod : c.pods) {
    if (api::IsBeingDeleted(*pod)) continue;
    ++live;
    if (!StringAt(*pod, "spec.nodeName").empty()) {
      ++v.scheduled;
      continue;
    }
    std::string uid(api::ObjectView(*pod).uid());
    auto seen = before.find(uid);
    TimePoint since = seen != before.end() ? seen->second : now;
    // The member's own record (the scheduler's verdict) survives a restart
    // of the federation.
    TimePoint changed;
    const json::object* cond = NotScheduled(*pod);
    if (cond != nullptr &&
        ParseRfc3339(std::string(GetString(*cond, "lastTransitionTime").value_or("")), &changed) &&
        changed < since) {
      since = changed;
    }
    pending[uid] = since;
    ++v.pending;
    ++v.unscheduled;
    waited(since);
  }
  before = std::move(pending);
  int64_t missing = std::max<int64_t>(0, v.placed - live);
  if (missing > 0) {
    v.pending += missing;
    waited(w.missing_since.try_emplace(c.cluster, now).first->second);
  } else {
    w.missing_since.erase(c.cluster);
  }
  Learned(c.cluster, w, waited_too_long, now, v, sooner);
  return v;
}

void ReplicaPlacer::Learned(const std::string& cluster, Workload& w, bool waited_too_long,
                            TimePoint now, ClusterView& v,
                            const std::function<void(TimePoint)>& sooner) const {
  auto it = w.capacity.find(cluster);
  if (waited_too_long) {
    // Full: it runs what a node took. A probe that found no room waits
    // twice as long for the next.
    if (it == w.capacity.end()) {
      Duration first = options_.capacity_probe_interval;
      it = w.capacity.emplace(cluster, LearnedCapacity{.probe_at = now + first, .backoff = first})
               .first;
    } else if (now >= it->second.probe_at) {
      Duration most = std::max<Duration>(std::chrono::hours(1), options_.capacity_probe_interval);
      it->second.backoff = std::min(it->second.backoff * 2, most);
      it->second.probe_at = now + it->second.backoff;
    }
    it->second.replicas = v.scheduled;
  } else if (it != w.capacity.end() && v.pending == 0 && v.scheduled > it->second.replicas) {
    // A node took more than it could run before (a probe's pods): room
    // appeared, the cluster is unbounded again.
    w.capacity.erase(it);
    it = w.capacity.end();
  }
  if (it == w.capacity.end()) return;
  v.full = true;
  v.capacity = it->second.replicas;
  v.probing = now >= it->second.probe_at;
  if (!v.probing) sooner(it->second.probe_at);
}

StatusOr<planner::Preferences> PreferencesOf(const json::object& obj, std::string_view key) {
  std::string text = api::AnnotationAt(obj, key);
  if (text.empty()) return planner::Preferences::Default();
  return planner::ParsePreferences(text);
}

namespace {

// cluster -> `field` of the breakdown in annotation `key`.
std::map<std::string, int64_t> BreakdownCounts(const json::object& obj, std::string_view key,
                                               std::string_view field) {
  std::map<std::string, int64_t> out;
  auto breakdown = ParseJsonObject(api::AnnotationAt(obj, key));
  const json::value* clusters = breakdown.ok() ? Find(*breakdown, "clusters") : nullptr;
  if (clusters == nullptr || !clusters->is_object()) return out;
  for (const auto& [name, c] : clusters->get_object()) {
    const json::value* n = c.is_object() ? c.get_object().if_contains(field) : nullptr;
    if (n != nullptr && (n->is_int64() || n->is_uint64())) out[name] = n->to_number<int64_t>();
  }
  return out;
}

}  // namespace

std::map<std::string, int64_t> LastPlanned(const json::object& obj, std::string_view key) {
  return BreakdownCounts(obj, key, "planned");
}

std::map<std::string, int64_t> EstimatedCapacities(const json::object& obj, std::string_view key) {
  return BreakdownCounts(obj, key, "estimatedCapacity");
}

LastCheck LastCheckOf(const json::object& obj, std::string_view key) {
  return {.planned = LastPlanned(obj, key), .capacity = EstimatedCapacities(obj, key)};
}

std::vector<runtime::ObjectPtr> PodsOf(const runtime::Lister& pods, const json::object& owner) {
  return pods.ByOwner(api::ObjectView(owner).uid());
}

}  // namespace flotilla::federation
