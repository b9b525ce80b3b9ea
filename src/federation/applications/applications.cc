// Where coupled applications run (applications.h).
#include "federation/applications/applications.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "api/annotations.h"
#include "api/labels.h"
#include "base/mutex.h"
#include "federation/common/cluster_selector.h"
#include "federation/common/deletion.h"
#include "federation/common/member_copy.h"
#include "federation/common/names.h"
#include "federation/common/placer.h"
#include "federation/common/reconciler.h"
#include "planner/planner.h"

namespace flotilla::federation {
namespace {

constexpr char kComponent[] = "federation-applications";

api::Resources Times(const api::Resources& r, int64_t n) {
  return {.milli_cpu = r.milli_cpu * n,
          .memory = r.memory * n,
          .ephemeral_storage = r.ephemeral_storage * n,
          .pods = r.pods * n};
}

// a - b, each resource at least 0.
api::Resources ClampedMinus(const api::Resources& a, const api::Resources& b) {
  return {.milli_cpu = std::max<int64_t>(0, a.milli_cpu - b.milli_cpu),
          .memory = std::max<int64_t>(0, a.memory - b.memory),
          .ephemeral_storage = std::max<int64_t>(0, a.ephemeral_storage - b.ephemeral_storage),
          .pods = std::max<int64_t>(0, a.pods - b.pods)};
}

void Subtract(api::Resources& a, const api::Resources& b) {
  a.milli_cpu -= b.milli_cpu;
  a.memory -= b.memory;
  a.ephemeral_storage -= b.ephemeral_storage;
  a.pods -= b.pods;
}

// `have` covers `need` in cpu, memory and pods.
bool Covers(const api::Resources& have, const api::Resources& need) {
  return have.milli_cpu >= need.milli_cpu && have.memory >= need.memory && have.pods >= need.pods;
}

std::string Describe(const api::Resources& r) {
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1fGi", static_cast<double>(r.memory) / (1 << 30));
  return std::to_string(r.milli_cpu) + "m cpu, " + memory + " memory, " + std::to_string(r.pods) +
         " pods";
}

// When the scheduler last found no node for `pod` (its PodScheduled=False
// condition's lastTransitionTime); "" when it is bound or has no verdict.
std::string UnschedulableSince(const json::object& pod) {
  const json::object* cond = StringAt(pod, "spec.nodeName").empty() ? NotScheduled(pod) : nullptr;
  return cond ? std::string(GetString(*cond, "lastTransitionTime").value_or("")) : "";
}

std::string AnnotationOfAny(const std::vector<runtime::ObjectPtr>& objs, std::string_view key) {
  for (const runtime::ObjectPtr& o : objs) {
    std::string v = api::AnnotationAt(*o, key);
    if (!v.empty()) return v;
  }
  return "";
}

int MinuteOfDay(TimePoint t) {
  auto minutes = std::chrono::duration_cast<std::chrono::minutes>(t.time_since_epoch()).count();
  return static_cast<int>(((minutes % 1440) + 1440) % 1440);
}

}  // namespace

StatusOr<std::pair<int, int>> ParseMigrationWindow(std::string_view text) {
  int h1, m1, h2, m2;
  char tail;
  std::string s(text);
  if (s.size() != 11 ||
      std::sscanf(s.c_str(), "%2d:%2d-%2d:%2d%c", &h1, &m1, &h2, &m2, &tail) != 4 || s[2] != ':' ||
      s[5] != '-' || s[8] != ':' || h1 > 23 || h2 > 23 || m1 > 59 || m2 > 59 || h1 < 0 || h2 < 0 ||
      m1 < 0 || m2 < 0) {
    return Status::Invalid("must be a daily window \"HH:MM-HH:MM\" in UTC, e.g. \"02:00-04:00\"");
  }
  if (h1 * 60 + m1 == h2 * 60 + m2) {
    return Status::Invalid("the window's start and end must differ");
  }
  return std::pair{h1 * 60 + m1, h2 * 60 + m2};
}

TimePoint NextWindowOpen(std::pair<int, int> window, TimePoint now) {
  auto [start, end] = window;
  int m = MinuteOfDay(now);
  bool open = start < end ? (m >= start && m < end) : (m >= start || m < end);
  if (open) return now;
  TimePoint minute = std::chrono::time_point_cast<std::chrono::minutes>(now);
  if (minute > now) minute -= std::chrono::minutes(1);
  return minute + std::chrono::minutes(((start - m) + 1440) % 1440);
}

// One workload of an application.
struct Applications::Workload {
  const Kind* kind = nullptr;
  std::string key;
  runtime::ObjectPtr obj;
  int64_t replicas = 0;
  api::Resources request;  // one pod's
  api::LabelSelector pods = api::LabelSelector::Nothing();
  std::optional<ClusterSelector> selector;    // nullopt: invalid, admits nothing
  std::optional<planner::Preferences> prefs;  // nullopt: invalid, admits nothing
};

// One ready cluster as an application sees it.
struct Applications::Cluster {
  bool admitted = true;  // by every workload's selector and preferences
  bool cordoned = false;
  bool draining = false;
  bool avoided = false;  // anti-affinity
  int64_t weight = 0;
  api::Resources free;    // allocatable - requested - others' reservations
  api::Resources own;     // what the application's bound pods request there
  int64_t placed = 0;     // replicas of the application's copies there
  bool stuck = false;     // a pod of it waited too long for a node there
  bool available = true;  // every workload has all its replicas available there
};

// What this process remembers of an application.
struct Applications::App {
  struct Move {
    std::string from, to;
    TimePoint started;
    bool manual = false;
  };
  std::string home;
  std::optional<Move> move;
  std::map<std::string, TimePoint> refused;        // destination -> not tried before
  std::map<std::string, api::Resources> reserved;  // cluster -> reserved there
  bool placed = false;
  std::string reason, message;
  std::optional<TimePoint> next_check;
};

Applications::Applications(FederationContext& ctx, ApplicationOptions options)
    : ctx_(ctx), options_(options) {
  ctx.members().AddHandler(kNodes, [](const std::string&) { return runtime::EventHandler{}; });
}

Applications::~Applications() = default;

void Applications::AddKind(const client::ResourceRef& resource, const std::string& kind,
                           std::string preferences_annotation,
                           std::function<void(const std::string& key)> enqueue) {
  ctx_.informers().For(resource);
  kinds_.push_back({resource, kind, std::move(preferences_annotation), std::move(enqueue)});
}

bool Applications::Coupled(const json::object& obj) {
  if (api::LabelAt(obj, api::kApplicationLabel).empty()) return false;
  std::string c = api::AnnotationAt(obj, api::kLocationAffinityAnnotation);
  return c == api::kPreferentiallyCoupled || c == api::kStrictlyCoupled;
}

std::vector<Applications::Workload> Applications::WorkloadsOf(const std::string& ns,
                                                              const std::string& app) const {
  std::vector<Workload> out;
  for (const Kind& kind : kinds_) {
    runtime::Informer* informer = ctx_.informers().Find(kind.resource);
    if (informer == nullptr) continue;
    for (const runtime::ObjectPtr& obj : informer->lister().ByLabel(api::kApplicationLabel, app)) {
      if (StringAt(*obj, "metadata.namespace") != ns || IsBeingDeleted(*obj) ||
          !api::LabelAt(*obj, api::kShadowOfLabel).empty()) {
        continue;
      }
      Workload w{.kind = &kind, .key = runtime::ObjectKey(*obj), .obj = obj};
      w.replicas = IntAt(*obj, "spec.replicas", 1);
      const json::value* tmpl_spec = Find(*obj, "spec.template.spec");
      if (tmpl_spec != nullptr && tmpl_spec->is_object()) {
        w.request = api::PodRequests(json::object{{"spec", *tmpl_spec}});
      } else {
        w.request.pods = 1;
      }
      auto pods = api::LabelSelector::FromJson(Find(*obj, "spec.selector"), "spec.selector");
      if (pods.ok()) w.pods = *std::move(pods);
      auto selector = ClusterSelector::Of(*obj);
      if (selector.ok()) w.selector = *std::move(selector);
      auto prefs = PreferencesOf(*obj, kind.preferences_annotation);
      if (prefs.ok()) w.prefs = *std::move(prefs);
      out.push_back(std::move(w));
    }
  }
  return out;
}

std::map<std::string, Applications::Cluster> Applications::ClustersFor(
    const std::string& app_key, const std::vector<Workload>& workloads, TimePoint now,
    std::vector<std::string>& unknown) const {
  std::map<std::string, Cluster> out;
  const std::string ns = StringAt(*workloads.front().obj, "metadata.namespace");
  for (const std::string& name : ctx_.members().Clusters()) {
    runtime::ObjectPtr cluster_obj = ctx_.cluster_objects().cache().Get(name);
    if (cluster_obj == nullptr) continue;  // being unjoined
    auto nodes = ctx_.members().Get(name, kNodes.resource);
    auto pods = ctx_.members().Get(name, kPods.resource);
    bool synced = nodes != nullptr && pods != nullptr && nodes->HasSynced() && pods->HasSynced();
    std::vector<std::shared_ptr<runtime::Informer>> copies;
    for (const Workload& w : workloads) {
      copies.push_back(ctx_.members().Get(name, w.kind->resource.resource));
      synced = synced && copies.back() != nullptr && copies.back()->HasSynced();
    }
    if (!synced) {
      unknown.push_back(name);
      continue;
    }
    Cluster c{.cordoned = IsCordoned(*cluster_obj), .draining = IsDraining(*cluster_obj)};
    for (const runtime::ObjectPtr& node : nodes->cache().List()) {
      if (api::NodeSchedulable(*node)) c.free += api::Allocatable(*node);
    }
    for (const runtime::ObjectPtr& pod : pods->cache().List()) {
      if (api::PodHoldsNode(*pod)) Subtract(c.free, api::PodRequests(*pod));
    }
    for (const auto& [other, app] : apps_) {
      if (other == app_key) continue;
      if (auto r = app.reserved.find(name); r != app.reserved.end()) Subtract(c.free, r->second);
    }
    for (size_t i = 0; i < workloads.size(); ++i) {
      const Workload& w = workloads[i];
      bool admits = w.selector && w.selector->Matches(*cluster_obj) && w.prefs;
      const planner::ClusterPreferences* p = admits ? w.prefs->For(name) : nullptr;
      admits = p != nullptr && (p->weight > 0 || p->min_replicas > 0) &&
               (!p->max_replicas || *p->max_replicas >= w.replicas);
      c.admitted = c.admitted && admits;
      if (p != nullptr) c.weight += p->weight;
      for (const runtime::ObjectPtr& pod : pods->lister().List(ns, w.pods)) {
        if (api::PodHoldsNode(*pod)) c.own += api::PodRequests(*pod);
        TimePoint since;
        if (!IsBeingDeleted(*pod) && ParseRfc3339(UnschedulableSince(*pod), &since) &&
            now - since >= options_.unschedulable_threshold) {
          c.stuck = true;
        }
      }
      runtime::ObjectPtr copy = copies[i]->lister().Get(ns, StringAt(*w.obj, "metadata.name"));
      bool managed = copy != nullptr && IsManaged(*copy) && !IsBeingDeleted(*copy);
      int64_t placed = managed ? IntAt(*copy, "spec.replicas") : 0;
      c.placed += placed;
      c.available =
          c.available && managed && placed == w.replicas &&
          IntAt(*copy, "status.availableReplicas") >= w.replicas &&
          IntAt(*copy, "status.observedGeneration") >= IntAt(*copy, "metadata.generation");
    }
    out.emplace(name, c);
  }
  return out;
}

std::vector<std::string> Applications::WhereRuns(const std::string& ns,
                                                 const std::string& app) const {
  std::vector<std::string> out;
  if (auto it = apps_.find(ns + "/" + app); it != apps_.end()) {
    if (!it->second.home.empty()) out.push_back(it->second.home);
    if (it->second.move) out.push_back(it->second.move->to);
  }
  for (const Workload& w : WorkloadsOf(ns, app)) {
    for (const std::string& cluster : ctx_.members().Clusters()) {
      auto copies = ctx_.members().Get(cluster, w.kind->resource.resource);
      runtime::ObjectPtr copy =
          copies ? copies->lister().Get(ns, StringAt(*w.obj, "metadata.name")) : nullptr;
      if (copy != nullptr && IsManaged(*copy) && IntAt(*copy, "spec.replicas") > 0) {
        out.push_back(cluster);
      }
    }
  }
  return out;
}

std::optional<CoupledPlacement> Applications::Place(const json::object& obj, TimePoint now) {
  if (!Coupled(obj)) return std::nullopt;
  const std::string ns = StringAt(obj, "metadata.namespace");
  const std::string app_name = api::LabelAt(obj, api::kApplicationLabel);
  const std::string app_key = ns + "/" + app_name;
  MutexLock lock(mu_);
  // Applications that are gone, or no longer coupled, reserve nothing.
  std::erase_if(apps_, [&](const auto& entry) {
    if (entry.first == app_key) return false;
    size_t slash = entry.first.find('/');
    std::vector<Workload> left =
        WorkloadsOf(entry.first.substr(0, slash), entry.first.substr(slash + 1));
    return left.empty() || !Coupled(*left.front().obj);
  });
  std::vector<Workload> workloads = WorkloadsOf(ns, app_name);
  if (workloads.empty()) return std::nullopt;
  std::vector<std::string> unknown;
  std::map<std::string, Cluster> clusters = ClustersFor(app_key, workloads, now, unknown);
  // Anti-affinity: out of the clusters of the application to avoid, and
  // out of their zones.
  std::vector<runtime::ObjectPtr> objs;
  for (const Workload& w : workloads) objs.push_back(w.obj);
  std::string avoid = AnnotationOfAny(objs, api::kAntiAffinityAnnotation);
  if (!avoid.empty() && avoid != app_name) {
    std::vector<std::string> avoided = WhereRuns(ns, avoid);
    std::vector<std::string> zones;
    for (const std::string& name : avoided) {
      runtime::ObjectPtr c = ctx_.cluster_objects().cache().Get(name);
      const json::value* z = c ? Find(*c, "status.zones") : nullptr;
      for (const json::value& zone : z && z->is_array() ? z->get_array() : json::array()) {
        if (zone.is_string()) zones.emplace_back(zone.get_string());
      }
    }
    for (auto& [name, c] : clusters) {
      runtime::ObjectPtr obj = ctx_.cluster_objects().cache().Get(name);
      const json::value* z = obj ? Find(*obj, "status.zones") : nullptr;
      bool shares_zone = false;
      for (const json::value& zone : z && z->is_array() ? z->get_array() : json::array()) {
        shares_zone = shares_zone || (zone.is_string() &&
                                      std::find(zones.begin(), zones.end(),
                                                std::string(zone.get_string())) != zones.end());
      }
      c.avoided = shares_zone || std::find(avoided.begin(), avoided.end(), name) != avoided.end();
    }
  }
  App& app = apps_[app_key];
  if (app.home.empty()) {
    // After a restart: where the copies hold the most replicas.
    int64_t most = 0;
    for (const auto& [name, c] : clusters) {
      if (c.placed > most) most = c.placed, app.home = name;
    }
  }
  auto waiting = [&](const std::string& c) {
    return !c.empty() && std::find(unknown.begin(), unknown.end(), c) != unknown.end();
  };
  // A cluster it runs in has not synced: nothing is decided until it has.
  if (!waiting(app.home) && !(app.move && waiting(app.move->to))) {
    // The other workloads learn of a new decision, or of a new condition
    // without one (a strictly coupled application's home failing): each
    // may have been checked just before, with the old one.
    auto decision = [&] {
      return std::tuple{app.home, app.move ? app.move->to : "", app.placed, app.reason,
                        app.message};
    };
    auto before = decision();
    Decide(app_key, app, workloads, clusters, now);
    if (before != decision()) EnqueueAll(workloads);
  }
  CoupledPlacement out{.placed = app.placed,
                       .reason = app.reason,
                       .message = app.message,
                       .next_check = app.next_check};
  for (const auto& [name, c] : clusters) out.seen.insert(name);
  int64_t replicas = IntAt(obj, "spec.replicas", 1);
  if (!app.home.empty() && app.placed) out.replicas[app.home] = replicas;
  if (app.move) {
    out.replicas[app.move->to] = replicas;
    out.keep = app.move->from;
  }
  return out;
}

void Applications::Decide(const std::string& app_key, App& app,
                          const std::vector<Workload>& workloads,
                          const std::map<std::string, Cluster>& clusters, TimePoint now) {
  std::vector<runtime::ObjectPtr> objs;
  api::Resources demand;
  for (const Workload& w : workloads) {
    objs.push_back(w.obj);
    demand += Times(w.request, w.replicas);
  }
  const bool strict = api::AnnotationAt(*workloads.front().obj, api::kLocationAffinityAnnotation) ==
                      api::kStrictlyCoupled;
  const std::string app_name = app_key.substr(app_key.find('/') + 1);
  const std::string migrate_to = AnnotationOfAny(objs, api::kMigrateToAnnotation);
  std::optional<std::pair<int, int>> window;
  if (auto w = ParseMigrationWindow(AnnotationOfAny(objs, api::kMigrationWindowAnnotation));
      w.ok()) {
    window = *w;
  }
  auto ready = [&](const std::string& name) { return clusters.contains(name); };
  auto fits = [&](const std::string& name) {
    const Cluster& c = clusters.at(name);
    api::Resources room = c.free;
    room += c.own;
    return Covers(room, demand);
  };
  auto set = [&](bool placed, std::string reason, std::string message) {
    app.placed = placed;
    app.reason = std::move(reason);
    app.message = std::move(message);
  };
  const std::string was_reason = app.reason;
  app.next_check.reset();
  std::erase_if(app.refused, [&](const auto& r) { return r.second <= now; });

  // A move in progress.
  if (app.move) {
    App::Move m = *app.move;
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - m.started).count();
    if (!ready(m.from)) {
      app.home = m.to;  // its home failed: nothing left to keep
      app.move.reset();
    } else if (!ready(m.to) || !clusters.at(m.to).admitted) {
      app.move.reset();
      Record(workloads, runtime::kEventTypeWarning, "MigrationRolledBack",
             "cluster " + m.to + " is no longer available; application " + app_name + " stays in " +
                 m.from);
    } else if (clusters.at(m.to).available) {
      app.home = m.to;
      app.move.reset();
      Record(workloads, runtime::kEventTypeNormal, "Migrated",
             "application " + app_name + " moved from " + m.from + " to " + m.to + " in " +
                 std::to_string(seconds) + "s");
    } else if (now - m.started >= options_.migration_timeout) {
      app.move.reset();
      app.refused[m.to] = now + options_.migration_timeout;
      Record(workloads, runtime::kEventTypeWarning, "MigrationRolledBack",
             "application " + app_name + " was not available in " + m.to + " within " +
                 std::to_string(
                     std::chrono::duration_cast<std::chrono::seconds>(options_.migration_timeout)
                         .count()) +
                 "s; it stays in " + m.from);
    } else {
      set(true, "Migrating",
          "moving from " + m.from + " to " + m.to + " (" + std::to_string(seconds) + "s so far)");
      app.next_check = m.started + options_.migration_timeout;
    }
  }

  if (!app.move) {
    const bool home_ready = !app.home.empty() && ready(app.home);
    // The best cluster to move to (not `except`), "" when none has room.
    auto best = [&](const std::string& except) {
      std::string chosen;
      for (const auto& [name, c] : clusters) {
        if (name == except || !c.admitted || c.cordoned || c.avoided ||
            app.refused.contains(name) || !fits(name)) {
          continue;
        }
        if (chosen.empty()) {
          chosen = name;
          continue;
        }
        const Cluster& b = clusters.at(chosen);
        if (c.weight > b.weight ||
            (c.weight == b.weight &&
             planner::TieBreakHash(name, app_key) < planner::TieBreakHash(chosen, app_key))) {
          chosen = name;
        }
      }
      return chosen;
    };
    auto start_move = [&](const std::string& to, bool manual, const std::string& why) {
      app.move = App::Move{.from = app.home, .to = to, .started = now, .manual = manual};
      app.next_check = now + options_.migration_timeout;
      set(true, "Migrating", "moving from " + app.home + " to " + to + ": " + why);
      Record(workloads, runtime::kEventTypeNormal, "MigrationStarted",
             "moving application " + app_name + " from " + app.home + " to " + to + ": " + why);
    };
    auto place = [&](const std::string& to, const std::string& why) {
      std::string from = app.home;
      app.home = to;
      set(true, "Placed", "application " + app_name + " runs in cluster " + to);
      Record(workloads, runtime::kEventTypeNormal, "ApplicationPlaced",
             "application " + app_name + " placed in cluster " + to +
                 (from.empty() ? "" : " (" + why + ")"));
    };
    // Why a preferentially coupled application must leave its ready home;
    // "" when it need not.
    auto must_leave = [&]() -> std::string {
      const Cluster& h = clusters.at(app.home);
      if (h.draining) return app.home + " is draining";
      if (!h.admitted) return "its cluster selector or preferences no longer admit " + app.home;
      if (h.avoided) return "it must stay away from where its anti-affinity runs";
      if (!fits(app.home)) {
        return app.home + " has no room left for it (" + Describe(demand) + " needed)";
      }
      if (h.stuck) return "its pods waited too long for a node in " + app.home;
      return "";
    };
    if (!migrate_to.empty() && migrate_to != app.home) {
      if (!ready(migrate_to) || !clusters.at(migrate_to).admitted) {
        set(home_ready, "MigrationImpossible",
            "cluster " + migrate_to + " is not ready or not admitted by the workloads");
      } else if (!fits(migrate_to)) {
        set(home_ready, "NoClusterWithRoom",
            "cluster " + migrate_to + " has no room for " + Describe(demand));
        app.next_check = now + options_.recheck_delay;
      } else if (home_ready) {
        start_move(migrate_to, true, "asked for");
      } else {
        place(migrate_to, "asked for");
      }
    } else if (home_ready &&
               ((strict && !clusters.at(app.home).draining) || must_leave().empty())) {
      set(true, "Placed", "application " + app_name + " runs in cluster " + app.home);
    } else if (strict && !app.home.empty()) {
      set(false, "ManualMigrationRequired",
          "cluster " + app.home + " of strictly coupled application " + app_name +
              " is not available; move it with kubectl flotilla migrate " + app_name + " --to " +
              "CLUSTER");
      if (was_reason != "ManualMigrationRequired") {
        Record(workloads, runtime::kEventTypeWarning, "ManualMigrationRequired", app.message);
      }
    } else {
      std::string why = home_ready ? must_leave() : "cluster " + app.home + " is not available";
      std::string dest = best(app.home);
      if (dest.empty()) {
        set(home_ready, "NoClusterWithRoom",
            (home_ready ? "stays in " + app.home + " although " + why + ": " : std::string()) +
                "no cluster has room for " + Describe(demand));
        app.next_check = now + options_.recheck_delay;
      } else if (!home_ready) {
        place(dest, why);
      } else if (window && !clusters.at(app.home).draining && NextWindowOpen(*window, now) > now) {
        set(true, "MigrationWindowClosed",
            "stays in " + app.home + " until its migration window opens: " + why);
        app.next_check = NextWindowOpen(*window, now);
      } else {
        start_move(dest, false, why);
      }
    }
  }

  // What the application holds: what it needs where it runs, less what its
  // bound pods already use there.
  app.reserved.clear();
  for (const std::string& c : {app.home, app.move ? app.move->to : std::string()}) {
    if (!c.empty() && ready(c) && app.placed)
      app.reserved[c] = ClampedMinus(demand, clusters.at(c).own);
  }
}

std::pair<std::string, std::string> Applications::HomeOf(const std::string& ns,
                                                         const std::string& app) {
  MutexLock lock(mu_);
  auto it = apps_.find(ns + "/" + app);
  if (it == apps_.end()) return {};
  return {it->second.home, it->second.move ? it->second.move->to : ""};
}

void Applications::Record(const std::vector<Workload>& workloads, std::string_view type,
                          const std::string& reason, const std::string& message) {
  for (const Workload& w : workloads) {
    ctx_.Events(kComponent)
        .Event(Typed(w.kind->resource, w.kind->kind, *w.obj), type, reason, message);
  }
}

void Applications::EnqueueAll(const std::vector<Workload>& workloads) const {
  for (const Workload& w : workloads) w.kind->enqueue(w.key);
}

}  // namespace flotilla::federation
