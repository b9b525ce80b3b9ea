// Conditions and topology of a Cluster's status (cluster_status.h).
#include "federation/cluster/cluster_status.h"

#include <map>
#include <set>
#include <string_view>

namespace flotilla::federation::cluster {
namespace {

const json::object* FindCondition(const json::array* conditions, const std::string& type) {
  if (conditions == nullptr) return nullptr;
  for (const json::value& c : *conditions) {
    if (!c.is_object()) continue;
    if (GetString(c.get_object(), "type").value_or("") == type) return &c.get_object();
  }
  return nullptr;
}

// A label by its current key, else its legacy one; "" when neither is set.
std::string TopologyLabel(const json::object& node, const std::string& what) {
  const json::value* labels = Find(node, "metadata.labels");
  if (labels == nullptr || !labels->is_object()) return "";
  for (std::string key :
       {"topology.kubernetes.io/" + what, "failure-domain.beta.kubernetes.io/" + what}) {
    auto value = GetString(labels->get_object(), key);
    if (value && !value->empty()) return std::string(*value);
  }
  return "";
}

}  // namespace

json::object MakeCondition(const json::array* old, const std::string& type,
                           const std::string& status, const std::string& reason,
                           const std::string& message, TimePoint now) {
  std::string at = FormatRfc3339(now);
  std::string transition = at;
  if (const json::object* prev = FindCondition(old, type)) {
    auto prev_time = GetString(*prev, "lastTransitionTime");
    if (GetString(*prev, "status").value_or("") == status && prev_time) {
      transition = std::string(*prev_time);
    }
  }
  return json::object{{"type", type},        {"status", status},
                      {"lastProbeTime", at}, {"lastTransitionTime", transition},
                      {"reason", reason},    {"message", message}};
}

std::string ConditionStatus(const json::array* conditions, const std::string& type) {
  const json::object* c = FindCondition(conditions, type);
  return c == nullptr ? "" : std::string(GetString(*c, "status").value_or(""));
}

Topology TopologyOfNodes(const std::vector<runtime::ObjectPtr>& nodes) {
  std::set<std::string> zones;
  std::map<std::string, int> regions;
  for (const runtime::ObjectPtr& node : nodes) {
    std::string zone = TopologyLabel(*node, "zone");
    if (!zone.empty()) zones.insert(zone);
    std::string region = TopologyLabel(*node, "region");
    if (!region.empty()) ++regions[region];
  }
  Topology out;
  out.zones.assign(zones.begin(), zones.end());
  int best = 0;
  for (const auto& [region, count] : regions) {
    if (count > best) out.region = region, best = count;
  }
  return out;
}

namespace {

// Whether statuses `a` and `b` are the same once their conditions'
// lastProbeTime is left out, and their federatedObjects when `count_too`
// and both have one.
bool SameBut(const json::value* a, const json::value* b, bool count_too) {
  constexpr std::string_view kCount = "federatedObjects";
  auto has_count = [&](const json::value* status) {
    return status != nullptr && status->is_object() && status->get_object().contains(kCount);
  };
  count_too = count_too && has_count(a) && has_count(b);
  auto without = [&](const json::value* status) {
    json::value out = status != nullptr ? *status : json::value();
    if (!out.is_object()) return out;
    if (count_too) out.get_object().erase(kCount);
    json::value* conditions = out.get_object().if_contains("conditions");
    if (conditions == nullptr || !conditions->is_array()) return out;
    for (json::value& c : conditions->get_array()) {
      if (c.is_object()) c.get_object().erase("lastProbeTime");
    }
    return out;
  };
  return without(a) == without(b);
}

}  // namespace

bool SameButProbeTimes(const json::value* a, const json::value* b) {
  return SameBut(a, b, /*count_too=*/false);
}

bool SameButProbeTimesAndCount(const json::value* a, const json::value* b) {
  return SameBut(a, b, /*count_too=*/true);
}

ResourceSummary SummarizeResources(const std::vector<runtime::ObjectPtr>& nodes,
                                   const std::vector<runtime::ObjectPtr>& pods) {
  ResourceSummary out;
  for (const runtime::ObjectPtr& node : nodes) {
    ++out.nodes;
    if (!api::NodeSchedulable(*node)) continue;
    ++out.ready_nodes;
    out.allocatable += api::Allocatable(*node);
  }
  for (const runtime::ObjectPtr& pod : pods) {
    if (api::PodHoldsNode(*pod)) out.allocated += api::PodRequests(*pod);
  }
  return out;
}

void SetResourceSummary(json::object& status, const ResourceSummary& summary) {
  auto quantities = [](const api::Resources& r) {
    return json::object{{"cpu", api::FormatMilliCpu(r.milli_cpu)},
                        {"memory", api::FormatBytes(r.memory)},
                        {"pods", std::to_string(r.pods)}};
  };
  status["nodeSummary"] =
      json::object{{"totalNum", summary.nodes}, {"readyNum", summary.ready_nodes}};
  status["resourceSummary"] = json::object{{"allocatable", quantities(summary.allocatable)},
                                           {"allocated", quantities(summary.allocated)}};
}

}  // namespace flotilla::federation::cluster
