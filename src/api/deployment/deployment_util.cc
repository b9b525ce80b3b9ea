#include "api/deployment/deployment_util.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <span>
#include <sstream>

#include "api/conditions.h"
#include "api/hash.h"

namespace flotilla::api::deployment {
namespace {

// Drops null, {} and [] members, recursively: the JSON image of Go's
// omitempty, so that templates compare as their Go structs would.
json::value Normalized(const json::value& v) {
  if (v.is_object()) {
    json::object out;
    for (const auto& [k, val] : v.get_object()) {
      json::value n = Normalized(val);
      if (n.is_null() || (n.is_object() && n.get_object().empty()) ||
          (n.is_array() && n.get_array().empty())) {
        continue;
      }
      out[k] = std::move(n);
    }
    return out;
  }
  if (v.is_array()) {
    json::array out;
    for (const json::value& e : v.get_array()) out.push_back(Normalized(e));
    return out;
  }
  return v;
}

json::object& Annotations(json::object& obj) {
  return EnsureObject(EnsureObject(obj, "metadata"), "annotations");
}

bool SkipCopy(std::string_view key) {
  return key == "kubectl.kubernetes.io/last-applied-configuration" || key == kRevisionAnnotation ||
         key == kRevisionHistoryAnnotation || key == kDesiredReplicasAnnotation ||
         key == kMaxReplicasAnnotation || key == "deprecated.deployment.rollback.to";
}

std::optional<int64_t> ParseInt(std::string_view s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  std::string text(s);
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return v;
}

TimePoint TimeAt(const json::object& obj, std::string_view key) {
  TimePoint t{};
  auto s = GetString(obj, key);
  if (s) ParseRfc3339(std::string(*s), &t);
  return t;
}

}  // namespace

std::string ComputeHash(const json::object& pod_template, std::optional<int64_t> collision_count) {
  uint32_t h = 2166136261u;
  auto write = [&h](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= 16777619u;
    }
  };
  std::string text = CanonicalJson(Normalized(pod_template));
  write(text.data(), text.size());
  if (collision_count) {
    unsigned char bytes[8] = {};
    uint32_t c = static_cast<uint32_t>(*collision_count);
    for (int i = 0; i < 4; ++i) bytes[i] = static_cast<unsigned char>(c >> (8 * i));
    write(bytes, sizeof(bytes));
  }
  return SafeEncodeString(std::to_string(h));
}

namespace {

// EqualIgnoreHash without building the normalized copies: `a` and `b`
// compare as Normalized would leave them, the key path.back() ignored in the
// object at the rest of `path` (which shrinks as the walk goes down it).
using KeyPath = std::span<const std::string_view>;

KeyPath Below(KeyPath path, std::string_view key) {
  return path.size() > 1 && path.front() == key ? path.subspan(1) : KeyPath();
}

bool Ignored(KeyPath path, std::string_view key) { return path.size() == 1 && path[0] == key; }

// Whether Normalized drops `v` as an object's member.
bool NormalizesAway(const json::value& v, KeyPath path) {
  if (v.is_null()) return true;
  if (v.is_array()) return v.get_array().empty();
  if (!v.is_object()) return false;
  for (const auto& [key, member] : v.get_object()) {
    if (!Ignored(path, key) && !NormalizesAway(member, Below(path, key))) return false;
  }
  return true;
}

bool NormalizedEqual(const json::value& a, const json::value& b, KeyPath path);

bool NormalizedObjectsEqual(const json::object& a, const json::object& b, KeyPath path) {
  for (const auto& [key, va] : a) {
    if (Ignored(path, key)) continue;
    KeyPath below = Below(path, key);
    const json::value* vb = b.if_contains(key);
    bool gone_a = NormalizesAway(va, below);
    bool gone_b = vb == nullptr || NormalizesAway(*vb, below);
    if (gone_a || gone_b) {
      if (gone_a != gone_b) return false;
      continue;
    }
    if (!NormalizedEqual(va, *vb, below)) return false;
  }
  for (const auto& [key, vb] : b) {
    if (!Ignored(path, key) && !a.contains(key) && !NormalizesAway(vb, Below(path, key))) {
      return false;
    }
  }
  return true;
}

bool NormalizedEqual(const json::value& a, const json::value& b, KeyPath path) {
  if (a.is_object() && b.is_object()) {
    return NormalizedObjectsEqual(a.get_object(), b.get_object(), path);
  }
  if (a.is_array() && b.is_array()) {
    const json::array& x = a.get_array();
    const json::array& y = b.get_array();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!NormalizedEqual(x[i], y[i], KeyPath())) return false;
    }
    return true;
  }
  if (a.is_object() || b.is_object() || a.is_array() || b.is_array()) return false;
  return a == b;
}

constexpr std::string_view kHashLabelPath[] = {"metadata", "labels", kHashLabel};

}  // namespace

bool EqualIgnoreHash(const json::object& a, const json::object& b) {
  return NormalizedObjectsEqual(a, b, kHashLabelPath);
}

int64_t ScaledValue(const json::value* v, int64_t total, bool round_up) {
  if (v == nullptr) return 0;
  if (v->is_int64()) return v->get_int64();
  if (!v->is_string()) return 0;
  std::string_view s = v->get_string();
  if (s.empty() || s.back() != '%') return 0;  // validation rejects these
  std::optional<int64_t> percent = ParseInt(s.substr(0, s.size() - 1));
  if (!percent) return 0;
  double value = static_cast<double>(*percent) * static_cast<double>(total) / 100.0;
  return static_cast<int64_t>(round_up ? std::ceil(value) : std::floor(value));
}

bool IsRollingUpdate(const json::object& d) {
  return StringAt(d, "spec.strategy.type") == "RollingUpdate";
}

int64_t Replicas(const json::object& obj) { return IntAt(obj, "spec.replicas", 1); }

namespace {
std::pair<int64_t, int64_t> Fenceposts(const json::object& d) {
  int64_t desired = Replicas(d);
  int64_t surge = ScaledValue(Find(d, "spec.strategy.rollingUpdate.maxSurge"), desired, true);
  int64_t unavailable =
      ScaledValue(Find(d, "spec.strategy.rollingUpdate.maxUnavailable"), desired, false);
  if (surge == 0 && unavailable == 0) unavailable = 1;
  return {surge, unavailable};
}
}  // namespace

int64_t MaxSurge(const json::object& d) { return IsRollingUpdate(d) ? Fenceposts(d).first : 0; }

int64_t MaxUnavailable(const json::object& d) {
  if (!IsRollingUpdate(d) || Replicas(d) == 0) return 0;
  return std::min(Fenceposts(d).second, Replicas(d));
}

std::optional<int64_t> IntAnnotation(const json::object& obj, std::string_view key) {
  const json::object* meta = GetObject(obj, "metadata");
  const json::object* annotations = meta ? GetObject(*meta, "annotations") : nullptr;
  if (annotations == nullptr) return std::nullopt;
  auto v = GetString(*annotations, key);
  return v ? ParseInt(*v) : std::nullopt;
}

int64_t Revision(const json::object& obj) {
  return IntAnnotation(obj, kRevisionAnnotation).value_or(0);
}

bool SetReplicasAnnotations(json::object& rs, int64_t desired, int64_t max) {
  if (!ReplicasAnnotationsNeedUpdate(rs, desired, max)) return false;
  json::object& a = Annotations(rs);
  a[kDesiredReplicasAnnotation] = std::to_string(desired);
  a[kMaxReplicasAnnotation] = std::to_string(max);
  return true;
}

bool ReplicasAnnotationsNeedUpdate(const json::object& rs, int64_t desired, int64_t max) {
  return IntAnnotation(rs, kDesiredReplicasAnnotation) != desired ||
         IntAnnotation(rs, kMaxReplicasAnnotation) != max;
}

bool SetNewReplicaSetAnnotations(const json::object& d, json::object& rs,
                                 const std::string& new_revision, bool exists) {
  bool changed = false;
  json::object& a = Annotations(rs);
  if (const json::value* own = Find(d, "metadata.annotations"); own && own->is_object()) {
    for (const auto& [k, v] : own->get_object()) {
      if (SkipCopy(k) || (a.contains(k) && a.at(k) == v)) continue;
      a[k] = v;
      changed = true;
    }
  }
  const json::value* old = a.if_contains(kRevisionAnnotation);
  std::string old_revision = old && old->is_string() ? std::string(old->get_string()) : "";
  std::optional<int64_t> old_int = old_revision.empty() ? 0 : ParseInt(old_revision);
  if (!old_int) return changed;  // an unparsable revision is left alone, as kube does
  int64_t new_int = ParseInt(new_revision).value_or(0);
  if (*old_int < new_int) {
    a[kRevisionAnnotation] = new_revision;
    changed = true;
    if (!old_revision.empty()) {
      // An old ReplicaSet is new again (a rollback): keep its old revisions.
      const json::value* h = a.if_contains(kRevisionHistoryAnnotation);
      std::string history = h && h->is_string() ? std::string(h->get_string()) : "";
      std::vector<std::string> revisions;
      std::stringstream ss(history);
      for (std::string part; std::getline(ss, part, ',');) revisions.push_back(part);
      size_t total = history.size() + old_revision.size() + 1;
      size_t start = 0;
      while (total > kMaxRevisionHistoryChars && start < revisions.size()) {
        total -= revisions[start].size() + 1;
        ++start;
      }
      if (history.empty()) {
        a[kRevisionHistoryAnnotation] = old_revision;
      } else if (total <= kMaxRevisionHistoryChars) {
        std::string joined;
        for (size_t i = start; i < revisions.size(); ++i) joined += revisions[i] + ",";
        a[kRevisionHistoryAnnotation] = joined + old_revision;
      }
    }
  }
  if (!exists && SetReplicasAnnotations(rs, Replicas(d), Replicas(d) + MaxSurge(d))) changed = true;
  return changed;
}

int64_t SpecReplicas(const std::vector<Rs>& rss) {
  int64_t n = 0;
  for (const Rs& rs : rss) n += rs ? IntAt(*rs, "spec.replicas") : 0;
  return n;
}

int64_t StatusSum(const std::vector<Rs>& rss, std::string_view field) {
  int64_t n = 0;
  for (const Rs& rs : rss) n += rs ? IntAt(*rs, "status." + std::string(field)) : 0;
  return n;
}

std::vector<Rs> Active(const std::vector<Rs>& rss) {
  std::vector<Rs> out;
  for (const Rs& rs : rss) {
    if (rs && IntAt(*rs, "spec.replicas") > 0) out.push_back(rs);
  }
  return out;
}

int64_t NewRSNewReplicas(const json::object& d, const std::vector<Rs>& all,
                         const json::object& new_rs) {
  if (!IsRollingUpdate(d)) return Replicas(d);
  int64_t current = IntAt(new_rs, "spec.replicas");
  int64_t max_total = Replicas(d) + MaxSurge(d);
  int64_t pods = SpecReplicas(all);
  if (pods >= max_total) return current;
  int64_t up = std::min(max_total - pods, Replicas(d) - current);
  return current + up;
}

bool IsSaturated(const json::object& d, const Rs& rs) {
  if (!rs) return false;
  int64_t want = Replicas(d);
  return IntAnnotation(*rs, kDesiredReplicasAnnotation) == want &&
         IntAt(*rs, "spec.replicas") == want && IntAt(*rs, "status.availableReplicas") == want;
}

bool CreatedBefore(const Rs& a, const Rs& b) {
  std::string ta = StringAt(*a, "metadata.creationTimestamp");
  std::string tb = StringAt(*b, "metadata.creationTimestamp");
  if (ta != tb) return ta < tb;
  return StringAt(*a, "metadata.name") < StringAt(*b, "metadata.name");
}

Rs FindActiveOrLatest(const Rs& new_rs, std::vector<Rs> old_rss) {
  if (!new_rs && old_rss.empty()) return nullptr;
  std::sort(old_rss.begin(), old_rss.end(),
            [](const Rs& a, const Rs& b) { return CreatedBefore(b, a); });
  std::vector<Rs> all = old_rss;
  all.push_back(new_rs);
  std::vector<Rs> active = Active(all);
  if (active.empty()) return new_rs ? new_rs : old_rss.front();
  if (active.size() == 1) return active.front();
  return nullptr;
}

int64_t Proportion(const json::object& d, const json::object& rs, int64_t to_add, int64_t added) {
  int64_t replicas = IntAt(rs, "spec.replicas");
  if (replicas == 0 || to_add == 0 || to_add == added) return 0;
  int64_t fraction;
  if (Replicas(d) == 0) {
    fraction = -replicas;
  } else {
    int64_t deployment_replicas = Replicas(d) + MaxSurge(d);
    int64_t annotated =
        IntAnnotation(rs, kMaxReplicasAnnotation).value_or(IntAt(d, "status.replicas"));
    double size = annotated == 0 ? 0.0
                                 : static_cast<double>(replicas * deployment_replicas) /
                                       static_cast<double>(annotated);
    fraction = static_cast<int64_t>(std::round(size)) - replicas;
  }
  int64_t allowed = to_add - added;
  return to_add > 0 ? std::min(fraction, allowed) : std::max(fraction, allowed);
}

const json::object* GetCondition(const json::object& status, std::string_view type) {
  return FindCondition(status, type);
}

json::object NewCondition(std::string_view type, std::string_view status, std::string_view reason,
                          std::string_view message, TimePoint now) {
  std::string t = FormatRfc3339(now);
  return {{"type", type},     {"status", status},  {"lastUpdateTime", t}, {"lastTransitionTime", t},
          {"reason", reason}, {"message", message}};
}

void SetCondition(json::object& status, json::object condition) {
  std::string type(GetString(condition, "type").value_or(""));
  const json::object* current = GetCondition(status, type);
  if (current != nullptr) {
    if (GetString(*current, "status") == GetString(condition, "status")) {
      if (GetString(*current, "reason") == GetString(condition, "reason")) return;
      if (const json::value* t = current->if_contains("lastTransitionTime")) {
        condition["lastTransitionTime"] = *t;
      }
    }
  }
  RemoveCondition(status, type);
  json::array conds;
  if (const json::array* old = GetArray(status, "conditions")) conds = *old;
  conds.push_back(std::move(condition));
  status["conditions"] = std::move(conds);
}

void RemoveCondition(json::object& status, std::string_view type) {
  const json::array* old = GetArray(status, "conditions");
  if (old == nullptr) return;
  json::array kept;
  for (const json::value& c : *old) {
    if (!(c.is_object() && GetString(c.get_object(), "type") == type)) kept.push_back(c);
  }
  status["conditions"] = std::move(kept);
}

bool HasProgressDeadline(const json::object& d) {
  const json::value* v = Find(d, "spec.progressDeadlineSeconds");
  return v != nullptr && v->is_int64() && v->get_int64() != 2147483647;
}

bool DeploymentComplete(const json::object& d, const json::object& status) {
  int64_t want = Replicas(d);
  auto n = [&](std::string_view k) { return GetInt(status, k).value_or(0); };
  return n("updatedReplicas") == want && n("replicas") == want && n("availableReplicas") == want &&
         n("observedGeneration") >= IntAt(d, "metadata.generation");
}

bool DeploymentProgressing(const json::object& d, const json::object& status) {
  const json::object* old = GetObject(d, "status");
  const json::object& o = old ? *old : json::object();
  auto n = [](const json::object& s, std::string_view k) { return GetInt(s, k).value_or(0); };
  int64_t old_old = n(o, "replicas") - n(o, "updatedReplicas");
  int64_t new_old = n(status, "replicas") - n(status, "updatedReplicas");
  return n(status, "updatedReplicas") > n(o, "updatedReplicas") || new_old < old_old ||
         n(status, "readyReplicas") > n(o, "readyReplicas") ||
         n(status, "availableReplicas") > n(o, "availableReplicas");
}

bool DeploymentTimedOut(const json::object& d, const json::object& status, TimePoint now) {
  const json::object* c = GetCondition(status, "Progressing");
  if (c == nullptr) return false;
  std::string reason(GetString(*c, "reason").value_or(""));
  if (reason == kNewRSAvailableReason) return false;
  if (reason == kTimedOutReason) return true;
  int64_t deadline = IntAt(d, "spec.progressDeadlineSeconds", 600);
  return TimeAt(*c, "lastUpdateTime") + std::chrono::seconds(deadline) < now;
}

}  // namespace flotilla::api::deployment
