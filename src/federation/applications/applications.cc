// Where coupled applications run (applications.h).
#include "federation/applications/applications.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <tuple>

#include "api/annotations.h"
#include "api/labels.h"
#include "api/views.h"
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
      if (api::ObjectView(*obj).ns() != ns || api::IsBeingDeleted(*obj) ||
          !api::LabelAt(*obj, api::kShadowOfLabel).empty()) {
        continue;
      }
      Workload w{.kind = &kind, .key = runtime::ObjectKey(*obj), .obj = obj};
      w.replicas = api::WorkloadView(*obj).replicas();
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
  const std::string ns(api::ObjectView(*workloads.front().obj).ns());
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
    Cluster c{.cordoned = api::ClusterView(*cluster_obj).cordoned(),
              .draining = api::ClusterView(*cluster_obj).draining()};
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
        if (!api::IsBeingDeleted(*pod) && ParseRfc3339(UnschedulableSince(*pod), &since) &&
            now - since >= options_.unschedulable_threshold) {
          c.stuck = true;
        }
      }
      runtime::ObjectPtr copy = copies[i]->lister().Get(ns, api::ObjectView(*w.obj).name());
      if (copy == nullptr || !IsManaged(*copy) || api::IsBeingDeleted(*copy)) {
        c.available = false;
        continue;
      }
      api::WorkloadView local(*copy);
      c.placed += local.replicas();
      c.available = c.available && local.replicas() == w.replicas &&
                    local.available_replicas() >= w.replicas && local.Observed();
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
          copies ? copies->lister().Get(ns, api::ObjectView(*w.obj).name()) : nullptr;
      if (copy != nullptr && IsManaged(*copy) && api::WorkloadView(*copy).replicas() > 0) {
        out.push_back(cluster);
      }
    }
  }
  return out;
}

// One decision for one application: where it runs, whether it moves, what
// it reserves. Its steps in order: FollowMove (a move in progress ends,
// rolls back or goes on), then, without a move, ChooseHome (a move asked
// for, the home kept, a strictly coupled home lost, or the best cluster),
// then Reserve.
class Applications::Decision {
 public:
  Decision(Applications& apps, const std::string& app_key, App& app,
           const std::vector<Workload>& workloads, const std::map<std::string, Cluster>& clusters,
           TimePoint now)
      : apps_(apps),
        options_(apps.options_),
        app_key_(app_key),
        app_(app),
        workloads_(workloads),
        clusters_(clusters),
        now_(now),
        app_name_(app_key.substr(app_key.find('/') + 1)),
        was_reason_(app.reason) {
    std::vector<runtime::ObjectPtr> objs;
    for (const Workload& w : workloads) {
      objs.push_back(w.obj);
      demand_ += Times(w.request, w.replicas);
    }
    strict_ = api::AnnotationAt(*workloads.front().obj, api::kLocationAffinityAnnotation) ==
              api::kStrictlyCoupled;
    migrate_to_ = AnnotationOfAny(objs, api::kMigrateToAnnotation);
    if (auto w = ParseMigrationWindow(AnnotationOfAny(objs, api::kMigrationWindowAnnotation));
        w.ok()) {
      window_ = *w;
    }
  }

  void Run() {
    app_.next_check.reset();
    std::erase_if(app_.refused, [&](const auto& r) { return r.second <= now_; });
    if (app_.move) FollowMove();
    if (!app_.move) ChooseHome();
    Reserve();
  }

 private:
  bool Ready(const std::string& name) const { return clusters_.contains(name); }
  // Whether `name` has room for the whole application (what its pods there
  // already use counts as room).
  bool Fits(const std::string& name) const {
    const Cluster& c = clusters_.at(name);
    api::Resources room = c.free;
    room += c.own;
    return Covers(room, demand_);
  }
  void Set(bool placed, std::string reason, std::string message) {
    app_.placed = placed;
    app_.reason = std::move(reason);
    app_.message = std::move(message);
  }
  void Record(std::string_view type, const std::string& reason, const std::string& message) {
    apps_.Record(workloads_, type, reason, message);
  }
  static std::string Seconds(Duration d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
  }

  // A move in progress: done once the destination has every replica
  // available; rolled back when the destination goes or the timeout passes
  // (the destination is then refused for a timeout); else it goes on.
  void FollowMove() {
    App::Move m = *app_.move;
    std::string elapsed = Seconds(now_ - m.started);
    if (!Ready(m.from)) {
      app_.home = m.to;  // its home failed: nothing left to keep
      app_.move.reset();
    } else if (!Ready(m.to) || !clusters_.at(m.to).admitted) {
      app_.move.reset();
      Record(runtime::kEventTypeWarning, "MigrationRolledBack",
             "cluster " + m.to + " is no longer available; application " + app_name_ +
                 " stays in " + m.from);
    } else if (clusters_.at(m.to).available) {
      app_.home = m.to;
      app_.move.reset();
      Record(
          runtime::kEventTypeNormal, "Migrated",
          "application " + app_name_ + " moved from " + m.from + " to " + m.to + " in " + elapsed);
    } else if (now_ - m.started >= options_.migration_timeout) {
      app_.move.reset();
      app_.refused[m.to] = now_ + options_.migration_timeout;
      Record(runtime::kEventTypeWarning, "MigrationRolledBack",
             "application " + app_name_ + " was not available in " + m.to + " within " +
                 Seconds(options_.migration_timeout) + "; it stays in " + m.from);
    } else {
      Set(true, "Migrating", "moving from " + m.from + " to " + m.to + " (" + elapsed + " so far)");
      app_.next_check = m.started + options_.migration_timeout;
    }
  }

  void ChooseHome() {
    const bool home_ready = !app_.home.empty() && Ready(app_.home);
    if (!migrate_to_.empty() && migrate_to_ != app_.home) {
      MoveAsked(home_ready);
    } else if (home_ready &&
               ((strict_ && !clusters_.at(app_.home).draining) || MustLeave().empty())) {
      Set(true, "Placed", "application " + app_name_ + " runs in cluster " + app_.home);
    } else if (strict_ && !app_.home.empty()) {
      Set(false, "ManualMigrationRequired",
          "cluster " + app_.home + " of strictly coupled application " + app_name_ +
              " is not available; move it with kubectl flotilla migrate " + app_name_ + " --to " +
              "CLUSTER");
      if (was_reason_ != "ManualMigrationRequired") {
        Record(runtime::kEventTypeWarning, "ManualMigrationRequired", app_.message);
      }
    } else {
      MoveToTheBest(home_ready);
    }
  }

  // The migrate-to annotation names another cluster.
  void MoveAsked(bool home_ready) {
    if (!Ready(migrate_to_) || !clusters_.at(migrate_to_).admitted) {
      Set(home_ready, "MigrationImpossible",
          "cluster " + migrate_to_ + " is not ready or not admitted by the workloads");
    } else if (!Fits(migrate_to_)) {
      Set(home_ready, "NoClusterWithRoom",
          "cluster " + migrate_to_ + " has no room for " + Describe(demand_));
      app_.next_check = now_ + options_.recheck_delay;
    } else if (home_ready) {
      StartMove(migrate_to_, true, "asked for");
    } else {
      Place(migrate_to_, "asked for");
    }
  }

  // No home, a home that failed, or a preferentially coupled application
  // that must leave its home: the best cluster with room, moved to
  // make-before-break (within the migration window, if it has one).
  void MoveToTheBest(bool home_ready) {
    std::string why = home_ready ? MustLeave() : "cluster " + app_.home + " is not available";
    std::string dest = Best(app_.home);
    if (dest.empty()) {
      Set(home_ready, "NoClusterWithRoom",
          (home_ready ? "stays in " + app_.home + " although " + why + ": " : std::string()) +
              "no cluster has room for " + Describe(demand_));
      app_.next_check = now_ + options_.recheck_delay;
    } else if (!home_ready) {
      Place(dest, why);
    } else if (window_ && !clusters_.at(app_.home).draining &&
               NextWindowOpen(*window_, now_) > now_) {
      Set(true, "MigrationWindowClosed",
          "stays in " + app_.home + " until its migration window opens: " + why);
      app_.next_check = NextWindowOpen(*window_, now_);
    } else {
      StartMove(dest, false, why);
    }
  }

  // The best cluster to move to (not `except`), "" when none has room: the
  // highest weight, then the planner's tie-break.
  std::string Best(const std::string& except) const {
    std::string chosen;
    for (const auto& [name, c] : clusters_) {
      if (name == except || !c.admitted || c.cordoned || c.avoided || app_.refused.contains(name) ||
          !Fits(name)) {
        continue;
      }
      if (chosen.empty()) {
        chosen = name;
        continue;
      }
      const Cluster& b = clusters_.at(chosen);
      if (c.weight > b.weight ||
          (c.weight == b.weight &&
           planner::TieBreakHash(name, app_key_) < planner::TieBreakHash(chosen, app_key_))) {
        chosen = name;
      }
    }
    return chosen;
  }

  // Why a preferentially coupled application must leave its ready home; ""
  // when it need not.
  std::string MustLeave() const {
    const Cluster& h = clusters_.at(app_.home);
    if (h.draining) return app_.home + " is draining";
    if (!h.admitted) return "its cluster selector or preferences no longer admit " + app_.home;
    if (h.avoided) return "it must stay away from where its anti-affinity runs";
    if (!Fits(app_.home)) {
      return app_.home + " has no room left for it (" + Describe(demand_) + " needed)";
    }
    if (h.stuck) return "its pods waited too long for a node in " + app_.home;
    return "";
  }

  void StartMove(const std::string& to, bool manual, const std::string& why) {
    app_.move = App::Move{.from = app_.home, .to = to, .started = now_, .manual = manual};
    app_.next_check = now_ + options_.migration_timeout;
    Set(true, "Migrating", "moving from " + app_.home + " to " + to + ": " + why);
    Record(runtime::kEventTypeNormal, "MigrationStarted",
           "moving application " + app_name_ + " from " + app_.home + " to " + to + ": " + why);
  }

  void Place(const std::string& to, const std::string& why) {
    std::string from = app_.home;
    app_.home = to;
    Set(true, "Placed", "application " + app_name_ + " runs in cluster " + to);
    Record(runtime::kEventTypeNormal, "ApplicationPlaced",
           "application " + app_name_ + " placed in cluster " + to +
               (from.empty() ? "" : " (" + why + ")"));
  }

  // What the application holds: what it needs where it runs, less what its
  // bound pods already use there.
  void Reserve() {
    app_.reserved.clear();
    for (const std::string& c : {app_.home, app_.move ? app_.move->to : std::string()}) {
      if (!c.empty() && Ready(c) && app_.placed) {
        app_.reserved[c] = ClampedMinus(demand_, clusters_.at(c).own);
      }
    }
  }

  Applications& apps_;
  const ApplicationOptions& options_;
  const std::string& app_key_;
  App& app_;
  const std::vector<Workload>& workloads_;
  const std::map<std::string, Cluster>& clusters_;
  const TimePoint now_;
  const std::string app_name_;
  const std::string was_reason_;
  api::Resources demand_;
  bool strict_ = false;
  std::string migrate_to_;
  std::optional<std::pair<int, int>> window_;
};

std::vector<std::string> Applications::ZonesOf(const std::string& name) const {
  runtime::ObjectPtr c = ctx_.cluster_objects().cache().Get(name);
  return c ? StringsAt(*c, "status.zones") : std::vector<std::string>{};
}

void Applications::MarkAvoided(const std::string& ns, const std::string& avoid,
                               std::map<std::string, Cluster>& clusters) const {
  std::vector<std::string> avoided = WhereRuns(ns, avoid);
  std::set<std::string> zones;
  for (const std::string& name : avoided) {
    for (std::string& zone : ZonesOf(name)) zones.insert(std::move(zone));
  }
  for (auto& [name, c] : clusters) {
    std::vector<std::string> mine = ZonesOf(name);
    bool shares_zone = std::any_of(mine.begin(), mine.end(),
                                   [&](const std::string& z) { return zones.contains(z); });
    c.avoided = shares_zone || std::find(avoided.begin(), avoided.end(), name) != avoided.end();
  }
}

std::optional<CoupledPlacement> Applications::Place(const json::object& obj, TimePoint now) {
  if (!Coupled(obj)) return std::nullopt;
  const std::string ns(api::ObjectView(obj).ns());
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
  if (!avoid.empty() && avoid != app_name) MarkAvoided(ns, avoid, clusters);
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
    Decision(*this, app_key, app, workloads, clusters, now).Run();
    if (before != decision()) EnqueueAll(workloads);
  }
  CoupledPlacement out{.placed = app.placed,
                       .reason = app.reason,
                       .message = app.message,
                       .next_check = app.next_check};
  for (const auto& [name, c] : clusters) out.seen.insert(name);
  int64_t replicas = api::WorkloadView(obj).replicas();
  if (!app.home.empty() && app.placed) out.replicas[app.home] = replicas;
  if (app.move) {
    out.replicas[app.move->to] = replicas;
    out.keep = app.move->from;
  }
  return out;
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
