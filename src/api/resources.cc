#include "api/resources.h"

#include <algorithm>
#include <limits>
#include <string>

#include "api/conditions.h"

namespace flotilla::api {
namespace {

using Int128 = __int128;
constexpr Int128 kInt128Max = std::numeric_limits<Int128>::max();

// A quantity's exact value: digits * 10^exp10 * 2^exp2.
struct Exact {
  Int128 digits = 0;
  int exp10 = 0;
  int exp2 = 0;
};

bool ParseSuffix(std::string_view s, Exact& q) {
  static constexpr std::pair<std::string_view, int> kBinary[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  static constexpr std::pair<std::string_view, int> kDecimal[] = {
      {"", 0},  {"n", -9}, {"u", -6}, {"m", -3}, {"k", 3},
      {"M", 6}, {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  for (auto [suffix, exp] : kBinary) {
    if (s == suffix) return q.exp2 += exp, true;
  }
  for (auto [suffix, exp] : kDecimal) {
    if (s == suffix) return q.exp10 += exp, true;
  }
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E')) return false;
  std::string_view e = s.substr(1);
  bool negative = e[0] == '-';
  if (e[0] == '-' || e[0] == '+') e.remove_prefix(1);
  if (e.empty() || e.size() > 3 || !std::all_of(e.begin(), e.end(), ::isdigit)) return false;
  int exp = std::stoi(std::string(e));
  q.exp10 += negative ? -exp : exp;
  return true;
}

// digits * scale * 2^exp2 * 10^exp10 rounded up, saturating at int64.
int64_t Evaluate(Exact q, int64_t scale) {
  constexpr Int128 kMax = std::numeric_limits<int64_t>::max();
  Int128 v = q.digits * scale;
  for (int i = 0; i < q.exp2; ++i) {
    if (v > kMax) return static_cast<int64_t>(kMax);
    v *= 2;
  }
  for (; q.exp10 > 0; --q.exp10) {
    if (v > kMax) return static_cast<int64_t>(kMax);
    v *= 10;
  }
  for (; q.exp10 < 0 && v != 0; ++q.exp10) v = v / 10 + (v % 10 != 0 ? 1 : 0);
  return static_cast<int64_t>(std::min(v, kMax));
}

int64_t Get(const json::object* m, std::string_view key, int64_t scale) {
  if (m == nullptr) return 0;
  const json::value* v = m->if_contains(key);
  return v ? QuantityValue(*v, scale).value_or(0) : 0;
}

// A container's request for one resource: its request, else its limit.
int64_t Request(const json::object& c, std::string_view key, int64_t scale) {
  const json::value* requests = Find(c, "resources.requests");
  const json::value* limits = Find(c, "resources.limits");
  const json::object* req = requests && requests->is_object() ? &requests->get_object() : nullptr;
  const json::object* lim = limits && limits->is_object() ? &limits->get_object() : nullptr;
  if (req != nullptr && req->contains(key)) return Get(req, key, scale);
  return Get(lim, key, scale);
}

// What a pod sum counts of each container.
enum class Count { kRequests, kNonZeroRequests, kLimits };

// A container's limit for one resource; 0 without one.
int64_t Limit(const json::object& c, std::string_view key, int64_t scale) {
  const json::value* limits = Find(c, "resources.limits");
  return Get(limits && limits->is_object() ? &limits->get_object() : nullptr, key, scale);
}

Resources ContainerResources(const json::object& c, Count count) {
  auto of = count == Count::kLimits ? Limit : Request;
  Resources r;
  r.milli_cpu = of(c, "cpu", 1000);
  r.memory = of(c, "memory", 1);
  r.ephemeral_storage = of(c, "ephemeral-storage", 1);
  if (count == Count::kNonZeroRequests && r.milli_cpu == 0) r.milli_cpu = 100;
  if (count == Count::kNonZeroRequests && r.memory == 0) r.memory = 200 << 20;
  return r;
}

void Max(Resources& into, const Resources& o) {
  into.milli_cpu = std::max(into.milli_cpu, o.milli_cpu);
  into.memory = std::max(into.memory, o.memory);
  into.ephemeral_storage = std::max(into.ephemeral_storage, o.ephemeral_storage);
}

std::vector<const json::object*> Objects(const json::object& spec, std::string_view key) {
  std::vector<const json::object*> out;
  if (const json::array* a = GetArray(spec, key)) {
    for (const json::value& v : *a) {
      if (v.is_object()) out.push_back(&v.get_object());
    }
  }
  return out;
}

Resources Sum(const json::object& pod, Count count) {
  Resources sum;
  const json::value* spec_value = Find(pod, "spec");
  if (spec_value == nullptr || !spec_value->is_object()) return Resources{.pods = 1};
  const json::object& spec = spec_value->get_object();
  for (const json::object* c : Objects(spec, "containers")) sum += ContainerResources(*c, count);
  // Init containers run one after the other: the pod needs the largest of
  // them on top of the sidecars started before it.
  Resources sidecars;
  Resources init_max;
  for (const json::object* c : Objects(spec, "initContainers")) {
    Resources r = ContainerResources(*c, count);
    if (GetString(*c, "restartPolicy").value_or("") == "Always") {
      sidecars += r;
      sum += r;
      continue;
    }
    r += sidecars;
    Max(init_max, r);
  }
  Max(sum, init_max);
  if (const json::object* overhead = GetObject(spec, "overhead")) {
    sum.milli_cpu += Get(overhead, "cpu", 1000);
    sum.memory += Get(overhead, "memory", 1);
  }
  sum.pods = 1;
  return sum;
}

}  // namespace

std::optional<int64_t> ParseQuantity(std::string_view s, int64_t scale) {
  bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  Exact q;
  size_t i = 0;
  int digits = 0;
  bool seen_point = false;
  for (; i < s.size(); ++i) {
    char ch = s[i];
    if (ch == '.' && !seen_point) {
      seen_point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(ch))) break;
    ++digits;
    if (q.digits > kInt128Max / 100) {
      // Beyond 36 significant digits: drop the rest of the precision.
      if (!seen_point) ++q.exp10;
      continue;
    }
    q.digits = q.digits * 10 + (ch - '0');
    if (seen_point) --q.exp10;
  }
  if (digits == 0 || !ParseSuffix(s.substr(i), q)) return std::nullopt;
  int64_t v = Evaluate(q, scale);
  return negative ? -v : v;
}

std::optional<int64_t> QuantityValue(const json::value& q, int64_t scale) {
  if (q.is_string()) return ParseQuantity(q.get_string(), scale);
  if (q.is_int64()) return ParseQuantity(std::to_string(q.get_int64()), scale);
  if (q.is_uint64()) return ParseQuantity(std::to_string(q.get_uint64()), scale);
  if (q.is_double()) return ParseQuantity(json::serialize(q), scale);
  return std::nullopt;
}

Resources PodRequests(const json::object& pod) { return Sum(pod, Count::kRequests); }

Resources NonZeroPodRequests(const json::object& pod) { return Sum(pod, Count::kNonZeroRequests); }

Resources PodLimits(const json::object& pod) { return Sum(pod, Count::kLimits); }

Resources Allocatable(const json::object& node) {
  Resources r;
  const json::value* a = Find(node, "status.allocatable");
  const json::object* m = a && a->is_object() ? &a->get_object() : nullptr;
  r.milli_cpu = Get(m, "cpu", 1000);
  r.memory = Get(m, "memory", 1);
  r.ephemeral_storage = Get(m, "ephemeral-storage", 1);
  r.pods = Get(m, "pods", 1);
  return r;
}

bool NodeSchedulable(const json::object& node) {
  const json::value* unschedulable = Find(node, "spec.unschedulable");
  if (unschedulable != nullptr && unschedulable->is_bool() && unschedulable->get_bool()) {
    return false;
  }
  return ConditionTrue(node, "Ready");
}

bool PodHoldsNode(const json::object& pod) {
  if (StringAt(pod, "spec.nodeName").empty() ||
      Find(pod, "metadata.deletionTimestamp") != nullptr) {
    return false;
  }
  std::string phase = StringAt(pod, "status.phase");
  return phase != "Succeeded" && phase != "Failed";
}

std::string FormatMilliCpu(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::string FormatBytes(int64_t bytes) {
  static constexpr std::pair<const char*, int> kUnits[] = {{"Ei", 60}, {"Pi", 50}, {"Ti", 40},
                                                           {"Gi", 30}, {"Mi", 20}, {"Ki", 10}};
  for (auto [suffix, shift] : kUnits) {
    int64_t unit = int64_t{1} << shift;
    if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes / unit) + suffix;
  }
  return std::to_string(bytes);
}

}  // namespace flotilla::api
