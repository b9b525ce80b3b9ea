#include "federation/job/shares.h"

#include <algorithm>

namespace flotilla::federation::job {
namespace {

int64_t IntOf(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_int64() ? v->get_int64() : 0;
}

void PutInt(json::object& o, std::string_view key, int64_t n) {
  if (n != 0) o[key] = n;
}

}  // namespace

Ledger ParseLedger(const json::object& job) {
  Ledger out;
  const json::value* annotations = Find(job, "metadata.annotations");
  if (annotations == nullptr || !annotations->is_object()) return out;
  const json::value* text = annotations->get_object().if_contains(kSharesAnnotation);
  if (text == nullptr || !text->is_string()) return out;
  StatusOr<json::object> parsed = ParseJsonObject(text->get_string());
  if (!parsed.ok()) return out;
  for (const auto& [cluster, value] : *parsed) {
    if (!value.is_object()) continue;
    const json::object& o = value.get_object();
    Share s;
    if (const json::value* c = o.if_contains("completions"); c != nullptr && c->is_int64()) {
      s.completions = c->get_int64();
    }
    s.parallelism = IntOf(o, "parallelism");
    s.succeeded = IntOf(o, "succeeded");
    s.failed = IntOf(o, "failed");
    s.done = IntOf(o, "done");
    s.failed_done = IntOf(o, "failedDone");
    s.queued = IntOf(o, "queued");
    if (const json::value* r = o.if_contains("retired"); r != nullptr && r->is_string()) {
      s.retired = r->get_string();
    }
    const json::value* lost = o.if_contains("lost");
    s.lost = lost != nullptr && lost->is_bool() && lost->get_bool();
    const json::value* failed = o.if_contains("failedJob");
    s.failed_job = failed != nullptr && failed->is_bool() && failed->get_bool();
    out[std::string(cluster)] = std::move(s);
  }
  return out;
}

std::string SerializeLedger(const Ledger& ledger) {
  json::object out;
  for (const auto& [cluster, s] : ledger) {
    json::object o;
    if (s.completions) o["completions"] = *s.completions;
    o["parallelism"] = s.parallelism;
    PutInt(o, "succeeded", s.succeeded);
    PutInt(o, "failed", s.failed);
    PutInt(o, "done", s.done);
    PutInt(o, "failedDone", s.failed_done);
    PutInt(o, "queued", s.queued);
    if (!s.retired.empty()) o["retired"] = s.retired;
    if (s.lost) o["lost"] = true;
    if (s.failed_job) o["failedJob"] = true;
    out[cluster] = std::move(o);
  }
  return json::serialize(out);
}

std::string BreakdownAnnotation(const Ledger& ledger) {
  json::object clusters;
  for (const auto& [cluster, s] : ledger) {
    int64_t planned = s.done + s.queued + (s.completions ? *s.completions : s.parallelism);
    clusters[cluster] = json::object{{"planned", s.lost ? s.done : planned},
                                     {"ready", s.done + s.succeeded},
                                     {"reachable", !s.lost}};
  }
  return json::serialize(json::object{{"clusters", std::move(clusters)}});
}

Ledger Divide(std::optional<int64_t> completions, int64_t parallelism,
              const planner::ReplicaCounts& plan) {
  Ledger out;
  for (const auto& [cluster, n] : plan) {
    if (n <= 0) continue;
    Share s;
    if (completions) {
      s.completions = n;
      // Its share of parallelism, rounded up, at least 1, at most n.
      int64_t p = *completions > 0 ? (parallelism * n + *completions - 1) / *completions : 0;
      s.parallelism = std::clamp<int64_t>(p, 1, n);
    } else {
      s.parallelism = n;
    }
    out[cluster] = std::move(s);
  }
  return out;
}

int64_t CloseLost(Share& share) {
  if (share.lost) return 0;
  int64_t owed = 0;
  if (share.completions) {
    owed = std::max<int64_t>(0, *share.completions - share.succeeded) + share.queued;
    share.completions = 0;
  }
  share.done += share.succeeded;
  share.failed_done += share.failed;
  share.succeeded = 0;
  share.failed = 0;
  share.queued = 0;
  share.parallelism = 0;
  share.lost = true;
  return owed;
}

int64_t Succeeded(const Ledger& ledger) {
  int64_t n = 0;
  for (const auto& [cluster, s] : ledger) n += s.done + s.succeeded;
  return n;
}

int64_t Failed(const Ledger& ledger) {
  int64_t n = 0;
  for (const auto& [cluster, s] : ledger) n += s.failed_done + s.failed;
  return n;
}

int64_t Queued(const Ledger& ledger) {
  int64_t n = 0;
  for (const auto& [cluster, s] : ledger) n += s.queued;
  return n;
}

}  // namespace flotilla::federation::job
