#include "member/scheduler/filters.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>

#include "api/claims.h"
#include "member/object_util.h"

namespace flotilla::member::scheduler {
namespace {

constexpr std::string_view kUnschedulableTaint = "node.kubernetes.io/unschedulable";

struct Taint {
  std::string key, value, effect;
};

// v1 Toleration.ToleratesTaint.
bool Tolerates(const json::object& t, const Taint& taint) {
  std::string effect = StringAt(t, "effect");
  if (!effect.empty() && effect != taint.effect) return false;
  std::string key = StringAt(t, "key");
  std::string op = StringAt(t, "operator");
  if (!key.empty() && key != taint.key) return false;
  if (op == "Exists") return true;
  if (key.empty()) return false;  // an empty key needs Exists
  return (op.empty() || op == "Equal") && StringAt(t, "value") == taint.value;
}

bool Tolerated(const json::object& pod, const Taint& taint) {
  for (const json::object* t : ObjectsAt(pod, "spec.tolerations")) {
    if (Tolerates(*t, taint)) return true;
  }
  return false;
}

// spec.taints, plus the not-ready/unreachable taint of a node that is not
// Ready.
std::vector<Taint> Taints(const json::object& node) {
  std::vector<Taint> out;
  for (const json::object* t : ObjectsAt(node, "spec.taints")) {
    out.push_back({StringAt(*t, "key"), StringAt(*t, "value"), StringAt(*t, "effect")});
  }
  std::string ready = "Unknown";
  for (const json::object* c : ObjectsAt(node, "status.conditions")) {
    if (StringAt(*c, "type") == "Ready") ready = StringAt(*c, "status");
  }
  if (ready != "True") {
    std::string key =
        ready == "False" ? "node.kubernetes.io/not-ready" : "node.kubernetes.io/unreachable";
    bool present = std::any_of(out.begin(), out.end(), [&](const Taint& t) {
      return t.key == key && t.effect == "NoSchedule";
    });
    if (!present) out.push_back({key, "", "NoSchedule"});
  }
  return out;
}

std::optional<std::string> Label(const json::object& node, const std::string& key) {
  const json::value* labels = Find(node, "metadata.labels");
  if (labels == nullptr || !labels->is_object()) return std::nullopt;
  const json::value* v = labels->get_object().if_contains(key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return std::string(v->get_string());
}

std::vector<std::string> Values(const json::object& requirement) {
  std::vector<std::string> out;
  if (const json::array* a = GetArray(requirement, "values")) {
    for (const json::value& v : *a) {
      if (v.is_string()) out.emplace_back(v.get_string());
    }
  }
  return out;
}

std::optional<int64_t> ParseInt(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0') return std::nullopt;
  return v;
}

// One NodeSelectorRequirement against a value (nullopt: label absent).
bool Matches(const json::object& req, const std::optional<std::string>& value) {
  std::string op = StringAt(req, "operator");
  std::vector<std::string> values = Values(req);
  bool in = value && std::find(values.begin(), values.end(), *value) != values.end();
  if (op == "In") return in;
  if (op == "NotIn") return !in;
  if (op == "Exists") return value.has_value();
  if (op == "DoesNotExist") return !value.has_value();
  if ((op == "Gt" || op == "Lt") && value && values.size() == 1) {
    std::optional<int64_t> have = ParseInt(*value);
    std::optional<int64_t> want = ParseInt(values[0]);
    if (!have || !want) return false;
    return op == "Gt" ? *have > *want : *have < *want;
  }
  return false;
}

bool TermMatches(const json::object& term, const json::object& node) {
  std::vector<const json::object*> exprs = ObjectsAt(term, "matchExpressions");
  std::vector<const json::object*> fields = ObjectsAt(term, "matchFields");
  if (exprs.empty() && fields.empty()) return false;
  for (const json::object* e : exprs) {
    if (!Matches(*e, Label(node, StringAt(*e, "key")))) return false;
  }
  for (const json::object* f : fields) {
    std::optional<std::string> value;
    if (StringAt(*f, "key") == "metadata.name") value = StringAt(node, "metadata.name");
    if (!Matches(*f, value)) return false;
  }
  return true;
}

bool AffinityMatches(const json::object& pod, const json::object& node) {
  const json::value* selector = Find(pod, "spec.nodeSelector");
  if (selector && selector->is_object()) {
    for (const auto& [key, want] : selector->get_object()) {
      std::optional<std::string> have = Label(node, std::string(key));
      if (!have || !want.is_string() || *have != want.get_string()) return false;
    }
  }
  const json::value* required =
      Find(pod, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution");
  if (required == nullptr || !required->is_object()) return true;
  for (const json::object* term : ObjectsAt(required->get_object(), "nodeSelectorTerms")) {
    if (TermMatches(*term, node)) return true;
  }
  return false;
}

void CheckFit(const Resources& request, const Resources& free, const Resources& used,
              NodeVerdict& v) {
  if (used.pods + 1 > free.pods) v.reasons.push_back("Too many pods");
  if (request.milli_cpu > 0 && request.milli_cpu > free.milli_cpu - used.milli_cpu)
    v.reasons.push_back("Insufficient cpu");
  if (request.memory > 0 && request.memory > free.memory - used.memory)
    v.reasons.push_back("Insufficient memory");
  if (request.ephemeral_storage > 0 &&
      request.ephemeral_storage > free.ephemeral_storage - used.ephemeral_storage)
    v.reasons.push_back("Insufficient ephemeral-storage");
}

int64_t LeastAllocated(int64_t requested, int64_t capacity) {
  if (capacity <= 0 || requested > capacity) return 0;
  return (capacity - requested) * 100 / capacity;
}

double Fraction(int64_t requested, int64_t capacity) {
  if (capacity <= 0) return 1;
  return std::min(1.0, static_cast<double>(requested) / static_cast<double>(capacity));
}

// "2 Insufficient cpu, 1 node(s) were unschedulable" sorted as strings.
std::string Histogram(const std::map<std::string, int>& counts) {
  std::vector<std::string> parts;
  for (const auto& [reason, n] : counts) parts.push_back(std::to_string(n) + " " + reason);
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

NodeVerdict Filter(const json::object& pod, const Resources& request, const json::object& node,
                   const NodeUsage& usage) {
  NodeVerdict v;
  const json::value* u = Find(node, "spec.unschedulable");
  bool unschedulable = u != nullptr && u->is_bool() && u->get_bool();
  if (unschedulable && !Tolerated(pod, {std::string(kUnschedulableTaint), "", "NoSchedule"})) {
    return {{"node(s) were unschedulable"}, true};
  }
  for (const Taint& t : Taints(node)) {
    if (t.effect != "NoSchedule" && t.effect != "NoExecute") continue;
    if (!Tolerated(pod, t)) {
      return {{"node(s) had untolerated taint {" + t.key + ": " + t.value + "}"}, true};
    }
  }
  if (!AffinityMatches(pod, node)) {
    return {{"node(s) didn't match Pod's node affinity/selector"}, true};
  }
  CheckFit(request, Allocatable(node), usage.requested, v);
  return v;
}

DaemonPlacement PlaceDaemonPod(const json::object& pod, const json::object& node) {
  bool fits = AffinityMatches(pod, node);
  DaemonPlacement out{.should_run = fits, .should_continue = fits};
  for (const Taint& t : Taints(node)) {
    if (t.effect != "NoSchedule" && t.effect != "NoExecute") continue;
    if (Tolerated(pod, t)) continue;
    out.should_run = false;
    if (t.effect == "NoExecute") out.should_continue = false;
  }
  return out;
}

int64_t Score(const Resources& non_zero_request, const json::object& node, const NodeUsage& usage) {
  Resources capacity = Allocatable(node);
  int64_t cpu = usage.non_zero_requested.milli_cpu + non_zero_request.milli_cpu;
  int64_t memory = usage.non_zero_requested.memory + non_zero_request.memory;
  int64_t least =
      (LeastAllocated(cpu, capacity.milli_cpu) + LeastAllocated(memory, capacity.memory)) / 2;
  double spread =
      std::abs(Fraction(cpu, capacity.milli_cpu) - Fraction(memory, capacity.memory)) / 2;
  int64_t balanced = static_cast<int64_t>((1 - spread) * 100);
  return least + balanced;
}

std::string FitErrorMessage(const json::object& pod, const std::vector<NodeVerdict>& verdicts,
                            const std::string& pre_filter) {
  if (verdicts.empty()) return "no nodes available to schedule pods";
  std::string head = "0/" + std::to_string(verdicts.size()) + " nodes are available:";
  std::map<std::string, int> reasons;
  std::map<std::string, int> preemption;
  for (const NodeVerdict& v : verdicts) {
    for (const std::string& r : v.reasons) ++reasons[r];
    ++preemption[v.unresolvable || !pre_filter.empty()
                     ? "Preemption is not helpful for scheduling"
                     : "No preemption victims found for incoming pod"];
  }
  std::string post;
  if (StringAt(pod, "spec.preemptionPolicy") == "Never") {
    post = "preemption: not eligible due to preemptionPolicy=Never.";
  } else {
    post = "preemption: " + head + " " + Histogram(preemption) + ".";
  }
  return head + " " + (pre_filter.empty() ? Histogram(reasons) : pre_filter) + ". " + post + ".";
}

std::string ClaimsPreFilter(const json::object& pod, const Lookup& claims,
                            const Lookup& storage_classes) {
  bool unbound_immediate = false;
  for (const json::object* volume : ObjectsAt(pod, "spec.volumes")) {
    const json::value* name_value = Find(*volume, "persistentVolumeClaim.claimName");
    if (name_value == nullptr || !name_value->is_string()) continue;
    std::string name(name_value->get_string());
    std::shared_ptr<const json::object> claim = claims(name);
    if (claim == nullptr) return "persistentvolumeclaim \"" + name + "\" not found";
    if (!StringAt(*claim, "metadata.deletionTimestamp").empty()) {
      return "persistentvolumeclaim \"" + name + "\" is being deleted";
    }
    if (!StringAt(*claim, "spec.volumeName").empty()) continue;
    std::string class_name = api::ClaimClass(*claim).value_or("");
    if (class_name.empty()) {
      unbound_immediate = true;
      continue;
    }
    std::shared_ptr<const json::object> cls = storage_classes(class_name);
    if (cls == nullptr) return "storageclass.storage.k8s.io \"" + class_name + "\" not found";
    if (StringAt(*cls, "volumeBindingMode") != "WaitForFirstConsumer") unbound_immediate = true;
  }
  return unbound_immediate ? "pod has unbound immediate PersistentVolumeClaims" : "";
}

size_t FeasibleNodesToFind(size_t all) {
  constexpr size_t kMinFeasibleNodes = 100;
  constexpr size_t kMinPercentage = 5;
  if (all < kMinFeasibleNodes) return all;
  size_t percentage = 50 - std::min<size_t>(50, all / 125);
  percentage = std::max(percentage, kMinPercentage);
  return std::max(kMinFeasibleNodes, all * percentage / 100);
}

}  // namespace flotilla::member::scheduler
