// `flotilla up`: the main job. Starts a federation API server and N simulated
// member clusters as child processes of this one (each a `flotilla server`
// or `flotilla member` with its own data directory under DIR), joins the
// members to the federation with `flotilla join`, writes DIR/kubeconfig for
// the federation and runs until Ctrl-C, then stops the members and the
// server. A child that dies takes the whole federation down with a message
// naming its log.
//
// With --ha the federation runs on a three-member etcd cluster (EtcdCluster,
// under DIR/etcd) with two servers (DIR/federation and DIR/federation-2, the
// second on a copy of the first's credentials) sharing one DNS address that
// the leading server serves; losing one server is survived.
//
// The members differ as real fleets do: an on-premise cluster and cloud
// clusters in different regions and zones (labels location=on-prem|cloud and
// region), one of them small (one node of 2 CPUs), so that the seeds'
// scenarios (spread, capacity overflow, on-premise first, privacy by cluster
// selector, surviving a cluster loss) can be tried at once (examples/).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "base/child_process.h"
#include "base/io.h"
#include "base/status.h"
#include "cli/commands.h"
#include "cli/signals.h"
#include "storage/etcd_cluster.h"

namespace flotilla::cli {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

struct UpFlags {
  int members = 3;
  std::string dir = "./flotilla-up";
  int port = 6443;
  int dns_port = 10053;
  std::string storage = "sqlite";
  std::string log_level = "info";
  // Three etcd members and two federation servers on them.
  bool ha = false;
  // The members connected by `flotilla agent` (a tunnel each opens to the
  // federation) rather than joined to be dialled.
  bool agents = false;
  // More flags for every federation server (`flotilla server --help`).
  std::vector<std::string> server_args;
};

// What distinguishes one simulated member from another.
struct MemberProfile {
  std::string name;
  std::string labels;  // for `flotilla join --labels`
  std::string region;
  std::string zones;  // comma-separated
  int nodes = 3;
  std::string node_cpu = "4";
  std::string node_memory = "16Gi";
  std::string provider;  // for `flotilla join --provider`
};

std::vector<MemberProfile> Profiles(int n) {
  std::vector<MemberProfile> out;
  for (int i = 0; i < n; ++i) {
    MemberProfile p;
    if (i == 0) {
      p = {"on-prem", "location=on-prem", "on-prem-dc1", "on-prem-dc1-a,on-prem-dc1-b"};
    } else if (i == 1) {
      p = {"cloud-east", "location=cloud", "us-east-1", "us-east-1a,us-east-1b,us-east-1c"};
    } else if (i == 2) {
      // The small one: one node of 2 CPUs, where capacity runs out first.
      p = {"cloud-west", "location=cloud", "us-west-2", "us-west-2a", 1, "2", "8Gi"};
    } else {
      std::string region = "region-" + std::to_string(i + 1);
      p = {"cloud-" + std::to_string(i + 1), "location=cloud", region,
           region + "a," + region + "b"};
    }
    p.labels += ",region=" + p.region;
    // Two cloud providers and the on-premise one, for propagation
    // policies' field selectors (docs/policies.md).
    p.provider = i == 0 ? "on-prem" : i % 2 == 1 ? "aws" : "gcp";
    out.push_back(p);
  }
  return out;
}

// The DNS port a child's lines before its ready line name ("UDP and TCP
// port N"); 0 when they name none.
int DnsPortIn(const std::vector<std::string>& lines) {
  std::smatch m;
  for (const std::string& line : lines) {
    if (std::regex_search(line, m, std::regex(R"(UDP and TCP port (\d+))"))) {
      return std::stoi(m[1].str());
    }
  }
  return 0;
}

std::string SelfPath() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "flotilla" : self.string();
}

bool IsReadyLine(const std::string& line) { return line.find(" ready at https://") != line.npos; }

std::string UrlIn(const std::string& line) {
  std::smatch m;
  return std::regex_search(line, m, std::regex(R"(https://[^ ]+)")) ? m.str() : "";
}

// Runs `flotilla join` and waits for it; its output goes to `log`.
Status Join(const std::string& self, const std::string& fed_kubeconfig, const MemberProfile& p,
            const std::string& member_kubeconfig, const std::string& log) {
  // --rejoin: a directory of an earlier run holds the Clusters already,
  // and the members are back on new ports.
  ChildProcess join({self, "join", p.name, "--kubeconfig", fed_kubeconfig, "--cluster-kubeconfig",
                     member_kubeconfig, "--labels", p.labels, "--provider", p.provider, "--rejoin"},
                    log);
  if (!join.started()) return Status::Internal("cannot run flotilla join");
  join.WaitForLine([](const std::string&) { return false; }, seconds(60));
  int code = join.Stop(seconds(60));
  if (code != 0) {
    return Status::Internal("joining " + p.name + " failed (exit " + std::to_string(code) +
                            "); see " + log);
  }
  return Status::Ok();
}

struct Running {
  std::string name, log;
  std::unique_ptr<ChildProcess> process;
  // One of the --ha servers: the other carries on without it.
  bool redundant = false;
};

// Starts a child and waits for its ready line; nullptr with a message on
// failure.
// `before` gets the lines printed before the ready line.
std::unique_ptr<ChildProcess> StartAndWait(const std::vector<std::string>& argv,
                                           const std::string& log, std::string* url,
                                           std::vector<std::string>* before) {
  auto child = std::make_unique<ChildProcess>(argv, log);
  if (!child->started()) {
    std::cerr << "cannot start " << argv[0] << "\n";
    return nullptr;
  }
  auto ready = child->WaitForLine(IsReadyLine, seconds(120),
                                  [before](const std::string& l) { before->push_back(l); });
  if (!ready) {
    std::cerr << argv[1] << " did not become ready; the end of " << log << ":\n";
    std::ifstream in(log);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    for (size_t i = lines.size() > 20 ? lines.size() - 20 : 0; i < lines.size(); ++i) {
      std::cerr << "  " << lines[i] << "\n";
    }
    return nullptr;
  }
  *url = UrlIn(*ready);
  return child;
}

// `flotilla up`'s run, in its steps: the directory, etcd (--ha), the
// federation server(s), the members (each joined), the kubeconfig, the
// banner, then watching the children until a signal or one of them exits.
// Every child started is stopped on the way out, in reverse order.
class Up {
 public:
  explicit Up(const UpFlags& flags) : flags_(flags), self_(SelfPath()) {}

  int Run() {
    BlockTerminationSignals();
    if (!PrepareDir() || !StartEtcd() || !StartFederation() || !StartMembers() ||
        !WriteKubeconfig()) {
      StopAll();
      return 1;
    }
    PrintBanner();
    return Supervise();
  }

 private:
  bool PrepareDir() {
    std::error_code ec;
    dir_ = fs::absolute(flags_.dir, ec);
    fs::create_directories(dir_ / "members", ec);
    if (ec) {
      std::cerr << "cannot create " << dir_.string() << ": " << ec.message() << "\n";
      return false;
    }
    fed_dir_ = (dir_ / "federation").string();
    fed_kubeconfig_ = fed_dir_ + "/kubeconfig";
    second_dir_ = (dir_ / "federation-2").string();
    log_dir_ = dir_.string();
    fed_storage_ = {"--storage", flags_.storage};
    dns_port_ = flags_.dns_port;
    return true;
  }

  // With --ha: etcd first, and one DNS address for both servers, which the
  // leading one serves.
  bool StartEtcd() {
    if (!flags_.ha) return true;
    auto started = storage::EtcdCluster::Start((dir_ / "etcd").string(), 3, seconds(60));
    if (!started.ok()) {
      std::cerr << "starting etcd: " << started.status().message() << "\n";
      return false;
    }
    etcd_ = std::move(started).value();
    fed_storage_ = {"--storage", "etcd", "--etcd-servers", etcd_->endpoints_flag()};
    if (dns_port_ == 0) dns_port_ = storage::FreeLoopbackPort();
    return true;
  }

  std::vector<std::string> ServerArgv(const std::string& data_dir, int port) const {
    std::vector<std::string> argv = {self_,           "server",
                                     "--data-dir",    data_dir,
                                     "--secure-port", std::to_string(port),
                                     "--dns-address", "127.0.0.1:" + std::to_string(dns_port_),
                                     "--log-level",   flags_.log_level};
    argv.insert(argv.end(), fed_storage_.begin(), fed_storage_.end());
    argv.insert(argv.end(), flags_.server_args.begin(), flags_.server_args.end());
    return argv;
  }

  // The federation server; with --ha a second one sharing the first's
  // credentials (CA, serving certificate, tokens): one kubeconfig is good
  // for both.
  bool StartFederation() {
    std::vector<std::string> lines;
    std::string log = log_dir_ + "/federation.log";
    auto server = StartAndWait(ServerArgv(fed_dir_, flags_.port), log, &fed_url_, &lines);
    if (server == nullptr) return false;
    if (!flags_.ha) dns_port_ = DnsPortIn(lines);
    running_.push_back({"federation", log, std::move(server), flags_.ha});
    if (!flags_.ha) return true;
    std::error_code ec;
    fs::create_directories(second_dir_, ec);
    fs::copy(fed_dir_ + "/pki", second_dir_ + "/pki",
             fs::copy_options::recursive | fs::copy_options::skip_existing, ec);
    std::string second_log = log_dir_ + "/federation-2.log";
    std::vector<std::string> second_lines;
    auto second = StartAndWait(ServerArgv(second_dir_, flags_.port == 0 ? 0 : flags_.port + 1),
                               second_log, &second_url_, &second_lines);
    if (second == nullptr) return false;
    running_.push_back({"federation-2", second_log, std::move(second), true});
    return true;
  }

  // Each member with its own DNS (which answers the federation's names too)
  // and load-balancer addresses unique across the federation, joined.
  bool StartMembers() {
    profiles_ = Profiles(flags_.members);
    for (size_t i = 0; i < profiles_.size(); ++i) {
      const MemberProfile& p = profiles_[i];
      std::string member_dir = (dir_ / "members" / p.name).string();
      std::string log = log_dir_ + "/member-" + p.name + ".log";
      std::string url;
      std::vector<std::string> lines;
      auto member =
          StartAndWait({self_,           "member",
                        "--name",        p.name,
                        "--data-dir",    member_dir,
                        "--secure-port", "0",
                        "--storage",     flags_.storage,
                        "--nodes",       std::to_string(p.nodes),
                        "--node-cpu",    p.node_cpu,
                        "--node-memory", p.node_memory,
                        "--zones",       p.zones,
                        "--region",      p.region,
                        "--lb-cidr",     "172.18." + std::to_string(i + 1) + ".0/24",
                        "--dns-address", "127.0.0.1:0",
                        "--stub-domain", "flotilla.local=127.0.0.1:" + std::to_string(dns_port_),
                        "--log-level",   flags_.log_level},
                       log, &url, &lines);
      if (member == nullptr) return false;
      running_.push_back({p.name, log, std::move(member)});
      member_urls_.push_back(url);
      member_dns_.push_back(DnsPortIn(lines));
      if (flags_.agents) {
        if (!StartAgent(p, member_dir + "/kubeconfig")) return false;
        continue;
      }
      Status joined = Join(self_, fed_kubeconfig_, p, member_dir + "/kubeconfig",
                           log_dir_ + "/join-" + p.name + ".log");
      if (!joined.ok()) {
        std::cerr << joined.message() << "\n";
        return false;
      }
    }
    return true;
  }

  // `flotilla agent` beside member `p`: it registers the member and opens
  // its tunnel; running once the tunnel is up.
  bool StartAgent(const MemberProfile& p, const std::string& member_kubeconfig) {
    std::string log = log_dir_ + "/agent-" + p.name + ".log";
    auto agent = std::make_unique<ChildProcess>(
        std::vector<std::string>{self_, "agent", "--name", p.name, "--federation-kubeconfig",
                                 fed_kubeconfig_, "--cluster-kubeconfig", member_kubeconfig,
                                 "--labels", p.labels, "--provider", p.provider, "--data-dir",
                                 (dir_ / "agents").string()},
        log);
    bool up =
        agent->started() && agent->WaitForLine(
                                [](const std::string& l) {
                                  return l.find("the tunnel to the federation is up") != l.npos;
                                },
                                seconds(60));
    if (!up) {
      std::cerr << "the agent of " << p.name << " did not connect; see " << log << "\n";
      return false;
    }
    running_.push_back({"agent-" + p.name, log, std::move(agent)});
    return true;
  }

  bool WriteKubeconfig() {
    std::error_code ec;
    fs::copy_file(fed_kubeconfig_, dir_ / "kubeconfig", fs::copy_options::overwrite_existing, ec);
    if (ec) {
      std::cerr << "cannot write " << (dir_ / "kubeconfig").string() << ": " << ec.message()
                << "\n";
      return false;
    }
    return true;
  }

  void PrintBanner() const {
    std::cout << "Flotilla is up: the federation at " << fed_url_ << " with " << profiles_.size()
              << " member clusters (kubeconfig " << (dir_ / "kubeconfig").string() << ")\n\n";
    if (flags_.agents) {
      std::cout << "The members are connected by agents (flotilla agent, logs agent-NAME.log): "
                << "each opened a tunnel to the federation"
                << (flags_.ha ? " (one to each of its servers)" : "")
                << ", which never dials them.\n\n";
    }
    if (flags_.ha) {
      std::cout << "High availability: two federation servers on a three-member etcd ("
                << etcd_->endpoints_flag()
                << "); the federation controllers run in the one holding "
                << "the lease (kubectl get lease -n flotilla-system)\n"
                << "  " << fed_url_ << "  kubeconfig " << fed_kubeconfig_ << "\n"
                << "  " << second_url_ << "  kubeconfig " << second_dir_ << "/kubeconfig\n\n";
    }
    std::cout << "  export KUBECONFIG=" << (dir_ / "kubeconfig").string() << "\n"
              << "  kubectl get clusters\n"
              // One file at a time, as the README goes: kubectl maps every
              // object of a directory before it applies any, so the CronTab
              // beside its CustomResourceDefinition would fail the first time.
              << "  kubectl apply -f examples/01-spread-evenly.yaml\n"
              << "  kubectl apply -f examples/08-global-service.yaml\n"
              << "  dig @127.0.0.1 -p " << dns_port_
              << " +short hello.default.flotilla.svc.flotilla.local\n"
              << "  " << self_ << " status -A       # where every replica runs\n"
              << "  " << self_ << " dashboard       # the same, live, on http://127.0.0.1:8080/\n\n"
              << "Members (each a Kubernetes API of its own):\n";
    for (size_t i = 0; i < profiles_.size(); ++i) {
      std::cout << "  " << profiles_[i].name << "  " << member_urls_[i] << "  "
                << profiles_[i].labels << "  kubectl --kubeconfig "
                << (dir_ / "members" / profiles_[i].name / "kubeconfig").string() << " get nodes\n"
                << "    its DNS: dig @127.0.0.1 -p " << member_dns_[i]
                << " +short hello.default.svc.cluster.local (and the federation's names)\n";
    }
    std::cout << "\nLogs are in " << log_dir_ << ". Press Ctrl-C to stop.\n" << std::flush;
  }

  // Until a termination signal (0) or a child that exits (1; with --ha one
  // federation server may exit while the other carries on).
  int Supervise() {
    while (WaitForTerminationSignalFor(1000) == 0) {
      for (auto it = running_.begin(); it != running_.end(); ++it) {
        if (!it->process->Exited()) continue;
        bool other_server = std::any_of(running_.begin(), running_.end(), [&](const Running& r) {
          return r.redundant && &r != &*it && !r.process->Exited();
        });
        if (it->redundant && other_server) {
          std::cerr << it->name << " exited; the other federation server carries on. See "
                    << it->log << ".\n";
          running_.erase(it);
          break;
        }
        std::cerr << it->name << " exited unexpectedly; see " << it->log << ". Stopping.\n";
        StopAll();
        return 1;
      }
    }
    std::cout << "Stopping the members and the federation...\n" << std::flush;
    StopAll();
    return 0;
  }

  void StopAll() {
    for (auto it = running_.rbegin(); it != running_.rend(); ++it) it->process->Stop();
    running_.clear();
  }

  const UpFlags& flags_;
  const std::string self_;
  fs::path dir_;
  std::string fed_dir_, fed_kubeconfig_, second_dir_, log_dir_;
  std::vector<std::string> fed_storage_;
  int dns_port_ = 0;
  std::unique_ptr<storage::EtcdCluster> etcd_;  // outlives the servers on it
  std::vector<Running> running_;                // stopped in reverse order on the way out
  std::string fed_url_, second_url_;
  std::vector<MemberProfile> profiles_;
  std::vector<std::string> member_urls_;
  std::vector<int> member_dns_;
};

int RunUp(const UpFlags& flags) { return Up(flags).Run(); }

}  // namespace

void AddUpCommand(CLI::App& app) {
  auto flags = std::make_shared<UpFlags>();
  auto* cmd = app.add_subcommand(
      "up", "Run a federation with simulated member clusters, joined and ready for kubectl");
  cmd->add_option("--members", flags->members, "Number of simulated member clusters")
      ->check(CLI::Range(1, 50))
      ->capture_default_str();
  cmd->add_option("--dir", flags->dir, "Directory for state, logs and kubeconfigs")
      ->capture_default_str();
  cmd->add_option("--secure-port", flags->port, "Federation HTTPS port (0 picks a free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--dns-port", flags->dns_port,
                  "Port of the federation's DNS server on 127.0.0.1 (0 picks a free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--storage", flags->storage, "Storage of every API server: sqlite or memory")
      ->check(CLI::IsMember({"sqlite", "memory"}))
      ->capture_default_str();
  cmd->add_option("--log-level", flags->log_level, "trace, debug, info, warn or error")
      ->capture_default_str();
  cmd->add_option("--server-arg", flags->server_args,
                  "A flag for every federation server, repeatable (e.g. "
                  "--server-arg=--unschedulable-threshold=20s; see flotilla server --help)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--ha", flags->ha,
                "High availability: a three-member etcd cluster and two federation servers on "
                "it, with leader-elected controllers (needs etcd, from scripts/bootstrap)");
  cmd->add_flag("--agents", flags->agents,
                "Connect the members by agents (flotilla agent): each opens a tunnel to the "
                "federation, which never dials them, as for clusters behind NAT");
  cmd->callback([flags] { ExitProcess(RunUp(*flags)); });
}

}  // namespace flotilla::cli
