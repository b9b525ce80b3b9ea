// Moving a coupled application by hand (migrate.h).
#include "federation/cluster/migrate.h"

#include <algorithm>
#include <map>
#include <set>

#include "api/annotations.h"
#include "api/federated.h"
#include "api/views.h"
#include "base/json.h"
#include "federation/cluster/join.h"
#include "federation/common/names.h"
#include "runtime/event_recorder.h"

namespace flotilla::federation::cluster {
namespace {

struct Workload {
  const client::ResourceRef* resource;
  std::string kind, name, breakdown_annotation;
  json::object obj;
};

std::string Describe(const Workload& w) { return w.kind + " " + w.name; }

// cluster -> replicas planned there (with `running`: or that its local
// object still has), from the breakdown annotation; clusters with none
// are left out.
std::map<std::string, int64_t> Planned(const Workload& w, bool running = false) {
  std::map<std::string, int64_t> out;
  auto breakdown = ParseJsonObject(api::AnnotationAt(w.obj, w.breakdown_annotation));
  const json::value* clusters = breakdown.ok() ? Find(*breakdown, "clusters") : nullptr;
  if (clusters == nullptr || !clusters->is_object()) return out;
  for (const auto& [name, c] : clusters->get_object()) {
    if (!c.is_object()) continue;
    int64_t n = IntAt(c.get_object(), "planned");
    if (running) {
      // "current" of a ReplicaSet's breakdown, "replicas" of the others'.
      n = std::max({n, IntAt(c.get_object(), "current"), IntAt(c.get_object(), "replicas")});
    }
    if (n > 0) out[name] = n;
  }
  return out;
}

std::string Where(const std::map<std::string, int64_t>& planned) {
  std::string out;
  for (const auto& [c, n] : planned) out += (out.empty() ? "" : ", ") + c + "=" + std::to_string(n);
  return out.empty() ? "nowhere" : out;
}

// "reason: message" of the LocationAffinity condition.
std::pair<std::string, std::string> Affinity(const json::object& obj) {
  const json::value* conds = Find(obj, "status.conditions");
  for (const json::value& c : conds && conds->is_array() ? conds->get_array() : json::array()) {
    if (c.is_object() && GetString(c.get_object(), "type") == "LocationAffinity") {
      return {std::string(GetString(c.get_object(), "reason").value_or("")),
              std::string(GetString(c.get_object(), "message").value_or(""))};
    }
  }
  return {};
}

// The federated Deployments and ReplicaSets (shadows left out) of `ns`
// ("": all) matching `selector`; with `statefulsets`, the StatefulSets too.
StatusOr<std::vector<Workload>> WorkloadsOf(client::Client& fed, const std::string& ns,
                                            const std::string& selector,
                                            bool statefulsets = false) {
  std::vector<Workload> out;
  client::ListOptions list{.label_selector = selector};
  std::vector<std::tuple<const client::ResourceRef*, const char*, const char*>> kinds = {
      {&kDeployments, "Deployment", api::kDeploymentStatusAnnotation},
      {&kReplicaSets, "ReplicaSet", api::kReplicaSetStatusAnnotation}};
  if (statefulsets) {
    kinds.emplace_back(&kStatefulSets, "StatefulSet", api::kStatefulSetStatusAnnotation);
  }
  for (const auto& [resource, kind, breakdown] : kinds) {
    FLOTILLA_ASSIGN_OR_RETURN(client::ObjectList items, fed.List(*resource, ns, list));
    for (json::object& obj : items.items) {
      if (!api::LabelAt(obj, api::kShadowOfLabel).empty()) continue;
      out.push_back(
          {resource, kind, std::string(api::ObjectView(obj).name()), breakdown, std::move(obj)});
    }
  }
  return out;
}

// Sets (or, with an empty `value`, removes) the migrate-to annotation.
Status Annotate(client::Client& fed, const std::string& ns, Workload& w, const std::string& value) {
  for (int attempt = 0;; ++attempt) {
    json::object obj = w.obj;
    json::object& annotations = EnsureObject(EnsureObject(obj, "metadata"), "annotations");
    if (value.empty()) {
      annotations.erase(api::kMigrateToAnnotation);
    } else {
      annotations[api::kMigrateToAnnotation] = value;
    }
    StatusOr<json::object> written = fed.Update(*w.resource, ns, obj);
    if (written.ok()) {
      w.obj = *std::move(written);
      return Status::Ok();
    }
    if (!written.status().Is(Reason::kConflict) || attempt >= 5) return written.status();
    FLOTILLA_ASSIGN_OR_RETURN(w.obj, fed.Get(*w.resource, ns, w.name));
  }
}

bool RolledBack(client::Client& fed, const std::string& ns, const std::vector<Workload>& ws,
                TimePoint since, std::string* message) {
  auto events = fed.List(runtime::kEvents, ns, {});
  if (!events.ok()) return false;
  for (const json::object& e : events->items) {
    if (GetString(e, "reason") != "MigrationRolledBack") continue;
    TimePoint at;
    std::string when(GetString(e, "lastTimestamp").value_or(""));
    if (!ParseRfc3339(when, &at) || at + std::chrono::seconds(1) < since) continue;
    for (const Workload& w : ws) {
      if (StringAt(e, "involvedObject.name") == w.name &&
          StringAt(e, "involvedObject.kind") == w.kind) {
        *message = std::string(GetString(e, "message").value_or(""));
        return true;
      }
    }
  }
  return false;
}

}  // namespace

Status Migrate(client::Client& fed, const MigrateOptions& opts) {
  Clock& clock = opts.clock != nullptr ? *opts.clock : RealClock();
  auto report = [&](const std::string& line) {
    if (opts.report) opts.report(line);
  };
  FLOTILLA_ASSIGN_OR_RETURN(
      std::vector<Workload> workloads,
      WorkloadsOf(fed, opts.ns, std::string(api::kApplicationLabel) + "=" + opts.app));
  if (workloads.empty()) {
    return Status::NotFound("application \"" + opts.app + "\" has no federated Deployment or " +
                            "ReplicaSet in namespace \"" + opts.ns + "\"");
  }
  std::string cls = api::AnnotationAt(workloads.front().obj, api::kLocationAffinityAnnotation);
  if (cls != api::kPreferentiallyCoupled && cls != api::kStrictlyCoupled) {
    return Status::BadRequest("application \"" + opts.app + "\" is " +
                              (cls.empty() ? std::string(api::kStrictlyDecoupled) : cls) +
                              ": its workloads are placed one by one; only a coupled "
                              "application moves whole");
  }
  FLOTILLA_RETURN_IF_ERROR(fed.Get(kClusters, "", opts.to).status());
  std::string list;
  for (const Workload& w : workloads) {
    list += (list.empty() ? "" : ", ") + Describe(w) + " (" + Where(Planned(w)) + ")";
  }
  report("application " + opts.app + " (" + cls + "): " + list);
  if (opts.dry_run) {
    report("would start every workload in " + opts.to +
           ", wait until all are available there, then delete the originals "
           "(DNS then answers from " +
           opts.to + " only) (dry run)");
    return Status::Ok();
  }
  TimePoint started = clock.Now();
  for (Workload& w : workloads) {
    FLOTILLA_RETURN_IF_ERROR(Annotate(fed, opts.ns, w, opts.to));
  }
  report("asked the federation to move it to " + opts.to);
  // Removes the request, whatever the outcome.
  auto finish = [&](Status s) {
    for (Workload& w : workloads) {
      if (auto latest = fed.Get(*w.resource, opts.ns, w.name); latest.ok()) w.obj = *latest;
      Status undone = Annotate(fed, opts.ns, w, "");
      if (s.ok() && !undone.ok()) s = undone;
    }
    return s;
  };
  bool said_started = false;
  while (true) {
    bool moving = false, done = true;
    for (Workload& w : workloads) {
      auto latest = fed.Get(*w.resource, opts.ns, w.name);
      if (!latest.ok()) return finish(latest.status());
      w.obj = *std::move(latest);
      auto [reason, message] = Affinity(w.obj);
      std::map<std::string, int64_t> planned = Planned(w);
      moving = moving || reason == "Migrating";
      done = done && reason == "Placed" && message.ends_with("cluster " + opts.to) &&
             planned.size() == 1 && planned.begin()->first == opts.to;
    }
    if (moving && !said_started) {
      said_started = true;
      report("started in " + opts.to + "; the original runs until every workload is available");
    }
    if (done) {
      if (!said_started) report("started in " + opts.to);
      auto seconds =
          std::chrono::duration_cast<std::chrono::seconds>(clock.Now() - started).count();
      report("available in " + opts.to + "; originals deleted; DNS answers from " + opts.to +
             " only (" + std::to_string(seconds) + "s)");
      return finish(Status::Ok());
    }
    std::string why;
    if (RolledBack(fed, opts.ns, workloads, started, &why)) {
      return finish(Status::Conflict("the federation rolled the move back: " + why));
    }
    if (clock.Now() - started >= opts.timeout) {
      return finish(Status::Timeout("application " + opts.app + " did not finish moving to " +
                                    opts.to + " in time; the move request was withdrawn"));
    }
    clock.SleepUntil(clock.Now() + opts.poll);
  }
}

StatusOr<DrainResult> Drain(client::Client& fed, const DrainOptions& opts) {
  Clock& clock = opts.clock != nullptr ? *opts.clock : RealClock();
  auto report = [&](const std::string& line) {
    if (opts.report) opts.report(line);
  };
  FLOTILLA_ASSIGN_OR_RETURN(bool changed, SetDraining(fed, opts.cluster));
  report("cluster.federation/" + opts.cluster + (changed ? " draining" : " already draining"));
  DrainResult out;
  auto name = [](const Workload& w) {
    return w.kind + " " + std::string(api::ObjectView(w.obj).ns()) + "/" + w.name;
  };
  std::set<std::string> moving, reported;
  TimePoint started = clock.Now();
  while (true) {
    FLOTILLA_ASSIGN_OR_RETURN(std::vector<Workload> all, WorkloadsOf(fed, "", "", true));
    std::set<std::string> now_moving;
    out.left.clear();
    for (const Workload& w : all) {
      auto planned = Planned(w, /*running=*/true);
      auto here = planned.find(opts.cluster);
      if (here == planned.end()) {
        if (moving.contains(name(w)) && reported.insert(name(w)).second) {
          report(name(w) + " moved off");
        }
        continue;
      }
      std::string n = name(w) + " (" + std::to_string(here->second) + " replicas)";
      if (w.kind == "StatefulSet") {
        out.left.push_back(n + ": stateful replicas keep their cluster");
      } else if (!api::AnnotationAt(w.obj, api::kHpaTargetClusterListAnnotation).empty()) {
        out.left.push_back(n + ": scaled by a federated HorizontalPodAutoscaler");
      } else {
        now_moving.insert(name(w));
        moving.insert(name(w));
      }
    }
    if (now_moving.empty()) break;
    if (clock.Now() - started >= opts.timeout) {
      std::string list;
      for (const std::string& m : now_moving) list += (list.empty() ? "" : ", ") + m;
      return Status::Timeout("still in " + opts.cluster + " after the timeout: " + list);
    }
    clock.SleepUntil(clock.Now() + opts.poll);
  }
  for (const std::string& m : moving) {
    if (reported.insert(m).second) report(m + " moved off");
  }
  for (const std::string& l : out.left) report("left: " + l);
  report("cluster.federation/" + opts.cluster + " drained");
  return out;
}

}  // namespace flotilla::federation::cluster
