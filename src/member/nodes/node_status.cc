#include "member/nodes/node_status.h"

#include <cstdio>

#include "api/conditions.h"
#include "member/object_util.h"

namespace flotilla::member::nodes {
namespace {

struct ConditionSpec {
  std::string_view type, status, reason, message;
};

// The kubelet's conditions of a healthy node, in the order it reports them.
constexpr ConditionSpec kConditions[] = {
    {"MemoryPressure", "False", "KubeletHasSufficientMemory",
     "kubelet has sufficient memory available"},
    {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
    {"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
    {"Ready", "True", "KubeletReady", "kubelet is posting ready status"},
};

// 32 hex digits derived from `seed`: stable machine and boot IDs.
std::string Hex128(const std::string& seed) {
  auto fnv = [](const std::string& s, uint64_t h) {
    for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ULL;
    return h;
  };
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx",
                static_cast<unsigned long long>(fnv(seed, 14695981039346656037ULL)),
                static_cast<unsigned long long>(fnv(seed + "#", 14695981039346656037ULL)));
  return buf;
}

std::string Uuid(const std::string& seed) {
  std::string h = Hex128(seed);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20, 12);
}

json::object Resources(const SimulationOptions& options) {
  return {{"cpu", options.node_cpu},
          {"memory", options.node_memory},
          {"pods", std::to_string(options.node_pods)},
          {"ephemeral-storage", "100Gi"},
          {"hugepages-1Gi", "0"},
          {"hugepages-2Mi", "0"}};
}

json::object NodeInfo(const std::string& name) {
  return {{"machineID", Hex128(name + "/machine")},
          {"systemUUID", Uuid(name + "/system")},
          {"bootID", Uuid(name + "/boot")},
          {"kernelVersion", "6.1.0-flotilla"},
          {"osImage", "Flotilla simulated node"},
          {"containerRuntimeVersion", "flotilla://0.1.0"},
          {"kubeletVersion", kKubeletVersion},
          {"kubeProxyVersion", ""},
          {"operatingSystem", "linux"},
          {"architecture", "amd64"}};
}

// The entries of Resources(options) that the map at `path` lacks (all of
// them when it is absent): a node created with only some resources set
// gets the member's template for the others.
json::object MissingResources(const json::object& node, std::string_view path,
                              const SimulationOptions& options) {
  const json::value* have = Find(node, path);
  json::object missing;
  for (const auto& [key, value] : Resources(options)) {
    if (have == nullptr || !have->is_object() || !have->get_object().contains(key)) {
      missing[key] = value;
    }
  }
  return missing;
}

}  // namespace

std::string NodeName(const SimulationOptions& options, int index) {
  return options.cluster_name + "-node-" + std::to_string(index);
}

json::object NewNode(const SimulationOptions& options, int index) {
  std::string name = NodeName(options, index);
  json::object labels = {{"kubernetes.io/hostname", name},
                         {"kubernetes.io/os", "linux"},
                         {"kubernetes.io/arch", "amd64"},
                         {"beta.kubernetes.io/os", "linux"},
                         {"beta.kubernetes.io/arch", "amd64"},
                         {"node.kubernetes.io/instance-type", kInstanceType},
                         {"beta.kubernetes.io/instance-type", kInstanceType}};
  if (!options.zones.empty()) {
    labels["topology.kubernetes.io/zone"] = options.zones[index % options.zones.size()];
  }
  if (!options.region.empty()) labels["topology.kubernetes.io/region"] = options.region;
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", json::object{{"name", name}, {"labels", labels}}},
          {"spec", json::object{}}};
}

json::object MissingLabels(const json::object& node) {
  std::string name = StringAt(node, "metadata.name");
  const json::value* have = Find(node, "metadata.labels");
  json::object missing;
  for (auto [key, value] :
       {std::pair<std::string_view, std::string>{"kubernetes.io/hostname", name},
        {"kubernetes.io/os", "linux"},
        {"kubernetes.io/arch", "amd64"}}) {
    if (have == nullptr || !have->is_object() || !have->get_object().contains(key)) {
      missing[key] = value;
    }
  }
  return missing;
}

bool NeedsRegistration(const json::object& node) {
  for (const ConditionSpec& c : kConditions) {
    if (api::ConditionOf(node, c.type) == nullptr) return true;
  }
  for (std::string_view field : {"status.nodeInfo", "status.addresses"}) {
    if (Find(node, field) == nullptr) return true;
  }
  return !MissingResources(node, "status.capacity", SimulationOptions{}).empty() ||
         !MissingResources(node, "status.allocatable", SimulationOptions{}).empty();
}

json::object RegistrationPatch(const json::object& node, const SimulationOptions& options,
                               const std::string& ip, TimePoint now) {
  std::string name = StringAt(node, "metadata.name");
  std::string time = FormatRfc3339(now);
  json::object status;
  if (json::object r = MissingResources(node, "status.capacity", options); !r.empty()) {
    status["capacity"] = std::move(r);
  }
  if (json::object r = MissingResources(node, "status.allocatable", options); !r.empty()) {
    status["allocatable"] = std::move(r);
  }
  json::array conditions;
  for (const ConditionSpec& c : kConditions) {
    if (api::ConditionOf(node, c.type) != nullptr) continue;
    conditions.push_back(json::object{{"type", c.type},
                                      {"status", c.status},
                                      {"reason", c.reason},
                                      {"message", c.message},
                                      {"lastHeartbeatTime", time},
                                      {"lastTransitionTime", time}});
  }
  if (!conditions.empty()) status["conditions"] = std::move(conditions);
  if (Find(node, "status.nodeInfo") == nullptr) status["nodeInfo"] = NodeInfo(name);
  if (Find(node, "status.addresses") == nullptr) {
    status["addresses"] = json::array{json::object{{"type", "InternalIP"}, {"address", ip}},
                                      json::object{{"type", "Hostname"}, {"address", name}}};
  }
  if (Find(node, "status.daemonEndpoints") == nullptr) {
    status["daemonEndpoints"] = json::object{{"kubeletEndpoint", json::object{{"Port", 10250}}}};
  }
  return {{"status", std::move(status)}};
}

json::object HeartbeatPatch(const json::object& node, TimePoint now) {
  json::array conditions;
  for (const ConditionSpec& c : kConditions) {
    if (api::ConditionOf(node, c.type) == nullptr) continue;
    conditions.push_back(json::object{{"type", c.type}, {"lastHeartbeatTime", FormatRfc3339(now)}});
  }
  return {{"status", json::object{{"conditions", std::move(conditions)}}}};
}

std::optional<TimePoint> LastHeartbeat(const json::object& node) {
  const json::object* ready = api::ConditionOf(node, "Ready");
  TimePoint t;
  if (ready == nullptr || !ParseRfc3339(StringAt(*ready, "lastHeartbeatTime"), &t))
    return std::nullopt;
  return t;
}

}  // namespace flotilla::member::nodes
