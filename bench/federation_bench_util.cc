// The federation benchmark's processes, clients and watcher
// (federation_bench.h).
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "base/mutex.h"
#include "bench/federation_bench.h"
#include "bench/proc_stats.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "federation/cluster/join.h"

namespace flotilla::bench {

std::string FlotillaOfThisBuild() {
  return (std::filesystem::canonical("/proc/self/exe").parent_path().parent_path() / "flotilla")
      .string();
}

double SecondsSince(Steady::time_point start) {
  return std::chrono::duration<double>(Steady::now() - start).count();
}

double RssMiB(pid_t pid, const char* field) { return StatusField(pid, field) / 1024.0; }

StatusOr<Process> StartServer(const std::string& binary, const std::string& dir,
                              const std::vector<std::string>& flags) {
  std::vector<std::string> argv{binary, "server", "--data-dir", dir, "--secure-port", "0"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  Process p{std::make_unique<ChildProcess>(argv, dir + ".log"), {dir + "/kubeconfig"}};
  if (!p.child->started()) return Status::Internal("cannot start " + binary);
  auto ready = p.child->WaitForLine(
      [](const std::string& l) { return l.find("Flotilla API server ready at") == 0; },
      std::chrono::seconds(120));
  if (!ready) return Status::Internal("the server did not get ready; see " + dir + ".log");
  return p;
}

StatusOr<Process> LaunchMembers(const std::string& binary, const std::string& dir,
                                const std::vector<std::string>& args) {
  std::vector<std::string> argv{binary, "member", "--data-dir", dir, "--secure-port", "0"};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p{std::make_unique<ChildProcess>(argv, dir + ".log"), {}};
  if (!p.child->started()) return Status::Internal("cannot start " + binary);
  return p;
}

Status AwaitMembers(Process& p, const std::string& dir, int clusters) {
  static const std::regex kReady(R"(Flotilla member \S+ ready at \S+ \(kubeconfig (\S+)\))");
  for (int i = 0; i < clusters; ++i) {
    std::smatch m;
    auto line =
        p.child->WaitForLine([&](const std::string& l) { return std::regex_search(l, m, kReady); },
                             std::chrono::seconds(300));
    if (!line) return Status::Internal("the members did not get ready; see " + dir + ".log");
    std::regex_search(*line, m, kReady);
    p.kubeconfigs.push_back(m[1]);
  }
  return Status::Ok();
}

StatusOr<Process> StartMembers(const std::string& binary, const std::string& dir,
                               const std::vector<std::string>& args, int clusters) {
  FLOTILLA_ASSIGN_OR_RETURN(Process p, LaunchMembers(binary, dir, args));
  FLOTILLA_RETURN_IF_ERROR(AwaitMembers(p, dir, clusters));
  return p;
}

StatusOr<std::unique_ptr<client::Client>> ClientFor(const std::string& kubeconfig) {
  client::KubeconfigLoadOptions load;
  load.explicit_path = kubeconfig;
  FLOTILLA_ASSIGN_OR_RETURN(client::RestConfig config, client::LoadRestConfig(load));
  client::RestOptions opts;
  opts.qps = 0;
  opts.max_idle_connections = 64;
  return client::NewRestClient(config, opts);
}

std::string ClusterReady(client::Client& fed, const std::string& name) {
  auto c = fed.Get(kClusters, "", name);
  return c.ok() ? ReadyStatus(*c) : "";
}

std::string ReadyStatus(const json::object& cluster) {
  const json::value* conditions = Find(cluster, "status.conditions");
  if (conditions == nullptr || !conditions->is_array()) return "";
  for (const json::value& cond : conditions->get_array()) {
    if (!cond.is_object()) continue;
    if (GetString(cond.get_object(), "type") == "Ready") {
      return std::string(GetString(cond.get_object(), "status").value_or(""));
    }
  }
  return "";
}

Status JoinAndWaitReady(client::Client& fed, const std::map<std::string, std::string>& kubeconfigs,
                        std::chrono::seconds timeout) {
  for (const auto& [name, path] : kubeconfigs) {
    client::KubeconfigLoadOptions load;
    load.explicit_path = path;
    federation::cluster::JoinOptions opts;
    opts.name = name;
    FLOTILLA_ASSIGN_OR_RETURN(opts.member, client::LoadRestConfig(load));
    FLOTILLA_RETURN_IF_ERROR(federation::cluster::Join(fed, opts).status());
  }
  Steady::time_point start = Steady::now();
  for (const auto& [name, path] : kubeconfigs) {
    while (ClusterReady(fed, name) != "True") {
      if (Steady::now() - start > timeout) {
        return Status::Unavailable("cluster " + name + " did not become Ready");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return Status::Ok();
}

Status EnsureNamespace(client::Client& c, const std::string& name) {
  auto created =
      c.Create(kNamespaces, "",
               {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}});
  if (!created.ok() && !created.status().Is(Reason::kAlreadyExists)) return created.status();
  return Status::Ok();
}

std::vector<client::Client*> Fleet::Members() const {
  std::vector<client::Client*> out;
  for (const auto& m : member_clients) out.push_back(m.get());
  return out;
}

StatusOr<Fleet> StartFleet(const std::string& binary, const std::string& dir, int clusters,
                           const std::vector<std::string>& member_args, int timeout_s,
                           const std::vector<std::string>& server_flags) {
  std::filesystem::create_directories(dir);
  Fleet f;
  FLOTILLA_ASSIGN_OR_RETURN(f.server, StartServer(binary, dir + "/server", server_flags));
  std::vector<std::string> args{"--clusters", std::to_string(clusters), "--name", "m"};
  args.insert(args.end(), member_args.begin(), member_args.end());
  FLOTILLA_ASSIGN_OR_RETURN(f.members, StartMembers(binary, dir + "/members", args, clusters));
  FLOTILLA_ASSIGN_OR_RETURN(f.fed, ClientFor(f.server.kubeconfigs[0]));
  std::map<std::string, std::string> joins;
  for (int i = 0; i < clusters; ++i) {
    joins["m-" + std::to_string(i + 1)] = f.members.kubeconfigs[i];
    FLOTILLA_ASSIGN_OR_RETURN(auto m, ClientFor(f.members.kubeconfigs[i]));
    FLOTILLA_RETURN_IF_ERROR(EnsureNamespace(*m, "bench"));
    f.member_clients.push_back(std::move(m));
  }
  FLOTILLA_RETURN_IF_ERROR(EnsureNamespace(*f.fed, "bench"));
  FLOTILLA_RETURN_IF_ERROR(JoinAndWaitReady(*f.fed, joins, std::chrono::seconds(timeout_s)));
  return f;
}

json::object ReplicaSet(const std::string& name, int64_t replicas, const std::string& preferences) {
  json::object labels{{"app", name}};
  json::object container{{"name", "app"}, {"image", "nginx:1.27"}};
  json::object meta{{"name", name}};
  if (!preferences.empty()) {
    meta["annotations"] =
        json::object{{"federation.kubernetes.io/replica-set-preferences", preferences}};
  }
  return {{"apiVersion", "apps/v1"},
          {"kind", "ReplicaSet"},
          {"metadata", meta},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", labels}}},
            {"template",
             {{"metadata", {{"labels", labels}}},
              {"spec",
               {{"terminationGracePeriodSeconds", 0}, {"containers", json::array{container}}}}}}}}};
}

json::object Deployment(const std::string& name, int64_t replicas, const std::string& image) {
  json::object labels{{"app", name}};
  json::object container{{"name", "app"}, {"image", image}};
  json::object d{
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata",
       {{"name", name},
        {"annotations",
         {{"federation.kubernetes.io/deployment-preferences",
           R"({"rebalance":true,"clusters":{"*":{"weight":1}}})"}}}}},
      {"spec",
       {{"replicas", replicas},
        {"selector", {{"matchLabels", labels}}},
        {"strategy",
         {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", 1}, {"maxUnavailable", 0}}}}},
        {"template",
         {{"metadata", {{"labels", labels}}},
          {"spec",
           {{"terminationGracePeriodSeconds", 0}, {"containers", json::array{container}}}}}}}}};
  return d;
}

StatusOr<std::unique_ptr<LocalCopyWatcher>> LocalCopyWatcher::Start(
    const std::vector<client::Client*>& members, const client::ResourceRef& resource) {
  std::unique_ptr<LocalCopyWatcher> w(new LocalCopyWatcher());
  LocalCopyWatcher* self = w.get();
  client::WatchOptions opts;
  opts.label_selector = "federation.kubernetes.io/managed-by=flotilla";
  opts.allow_bookmarks = false;
  for (client::Client* member : members) {
    FLOTILLA_ASSIGN_OR_RETURN(auto watch, member->StartWatch(
                                              resource, "", opts,
                                              [self](const client::WatchEvent& e) {
                                                if (e.type != client::WatchEvent::Type::kAdded)
                                                  return;
                                                auto name = GetString(
                                                    *GetObject(e.object, "metadata"), "name");
                                                if (name) self->Seen(std::string(*name));
                                              },
                                              [self](const Status& s) {
                                                if (s.ok()) return;
                                                MutexLock lock(self->mu_);
                                                ++self->broken_;
                                              }));
    w->watches_.push_back(std::move(watch));
  }
  return w;
}

LocalCopyWatcher::~LocalCopyWatcher() {
  for (auto& w : watches_) w->Stop();
}

void LocalCopyWatcher::Seen(const std::string& name) {
  Steady::time_point now = Steady::now();
  {
    MutexLock lock(mu_);
    Arrivals& a = seen_[name];
    if (a.count == 0) {
      last_new_name_ = now;
      a.at.first = now;
    }
    ++a.count;
    a.at.last = now;
  }
  cv_.NotifyAll();
}

std::optional<LocalCopyWatcher::Arrival> LocalCopyWatcher::WaitFor(
    const std::string& name, int count, std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  bool done = cv_.WaitFor(lock, timeout, [&]() REQUIRES(mu_) {
    auto it = seen_.find(name);
    return it != seen_.end() && it->second.count >= count;
  });
  if (!done) return std::nullopt;
  return seen_[name].at;
}

std::optional<Steady::time_point> LocalCopyWatcher::WaitForNames(
    size_t names, std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  if (!cv_.WaitFor(lock, timeout, [&]() REQUIRES(mu_) { return seen_.size() >= names; }))
    return std::nullopt;
  return last_new_name_;
}

size_t LocalCopyWatcher::names() const {
  MutexLock lock(mu_);
  return seen_.size();
}

int LocalCopyWatcher::broken_watches() const {
  MutexLock lock(mu_);
  return broken_;
}

}  // namespace flotilla::bench
