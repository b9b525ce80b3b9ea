#include "storage/etcd_cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

namespace flotilla::storage {
namespace {

bool Healthy(int port);
std::string Url(int port);

}  // namespace

// Bound, read back, released.
int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

namespace {

// GET /health on the client port: etcd answers {"health":"true"} once the
// member is serving and the cluster has a leader.
bool Healthy(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string reply;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string req = "GET /health HTTP/1.0\r\n\r\n";
    if (write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[1024];
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0) reply.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return reply.find("\"health\":\"true\"") != std::string::npos;
}

std::string Url(int port) { return "http://127.0.0.1:" + std::to_string(port); }

}  // namespace

StatusOr<std::unique_ptr<EtcdCluster>> EtcdCluster::Start(const std::string& dir, int members,
                                                          std::chrono::milliseconds timeout) {
  std::unique_ptr<EtcdCluster> c(new EtcdCluster());
  c->dir_ = dir;
  std::filesystem::create_directories(dir);
  // A cluster's members know each other's peer URLs: a restart must keep them.
  const std::string ports_path = dir + "/ports";
  std::ifstream saved(ports_path);
  bool fresh = true;
  for (int i = 0; i < members; ++i) {
    Member m;
    m.name = "etcd" + std::to_string(i);
    if (saved >> m.client_port >> m.peer_port) {
      fresh = false;
    } else {
      m.client_port = FreeLoopbackPort();
      m.peer_port = FreeLoopbackPort();
    }
    if (m.client_port == 0 || m.peer_port == 0) return Status::Unavailable("no free port for etcd");
    if (i > 0) c->initial_cluster_ += ",";
    c->initial_cluster_ += m.name + "=" + Url(m.peer_port);
    c->members_.push_back(std::move(m));
  }
  if (fresh) {
    std::ofstream out(ports_path);
    for (const Member& m : c->members_) out << m.client_port << " " << m.peer_port << "\n";
  }
  for (int i = 0; i < members; ++i) FLOTILLA_RETURN_IF_ERROR(c->Launch(i, fresh));
  for (int i = 0; i < members; ++i) FLOTILLA_RETURN_IF_ERROR(c->WaitReady(i, timeout));
  return c;
}

EtcdCluster::~EtcdCluster() {
  for (Member& m : members_) {
    if (m.process) m.process->Stop();
  }
}

Status EtcdCluster::Launch(int i, bool fresh) {
  Member& m = members_[static_cast<size_t>(i)];
  std::vector<std::string> argv = {"/usr/bin/etcd",
                                   "--name",
                                   m.name,
                                   "--data-dir",
                                   dir_ + "/" + m.name,
                                   "--listen-client-urls",
                                   Url(m.client_port),
                                   "--advertise-client-urls",
                                   Url(m.client_port),
                                   "--listen-peer-urls",
                                   Url(m.peer_port),
                                   "--initial-advertise-peer-urls",
                                   Url(m.peer_port),
                                   "--initial-cluster",
                                   initial_cluster_,
                                   "--initial-cluster-state",
                                   fresh ? "new" : "existing",
                                   "--initial-cluster-token",
                                   "flotilla",
                                   "--logger",
                                   "zap",
                                   "--log-outputs",
                                   "stderr",
                                   "--log-level",
                                   "warn"};
  if (access(argv[0].c_str(), X_OK) != 0) {
    return Status::Unavailable("etcd is not installed (/usr/bin/etcd); run scripts/bootstrap");
  }
  m.process = std::make_unique<ChildProcess>(argv, dir_ + "/" + m.name + ".log");
  if (!m.process->started()) return Status::Unavailable("cannot start " + m.name);
  return Status::Ok();
}

Status EtcdCluster::WaitReady(int i, std::chrono::milliseconds timeout) {
  Member& m = members_[static_cast<size_t>(i)];
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!Healthy(m.client_port)) {
    if (m.process->Exited()) {
      return Status::Unavailable(m.name + " exited; see " + dir_ + "/" + m.name + ".log");
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::Unavailable(m.name + " not healthy in time; see " + dir_ + "/" + m.name +
                                 ".log");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Status::Ok();
}

std::vector<std::string> EtcdCluster::endpoints() const {
  std::vector<std::string> out;
  for (const auto& m : members_) out.push_back(Url(m.client_port));
  return out;
}

std::string EtcdCluster::endpoints_flag() const {
  std::string out;
  for (const auto& e : endpoints()) out += (out.empty() ? "" : ",") + e;
  return out;
}

void EtcdCluster::Kill(int i) {
  Member& m = members_[static_cast<size_t>(i)];
  if (!m.process) return;
  if (!m.process->Exited()) kill(m.process->pid(), SIGKILL);
  m.process->Stop();
  m.process.reset();
}

Status EtcdCluster::Restart(int i, std::chrono::milliseconds timeout) {
  Kill(i);
  FLOTILLA_RETURN_IF_ERROR(Launch(i, false));
  return WaitReady(i, timeout);
}

}  // namespace flotilla::storage
