// EtcdCluster: etcd members run as child processes on free loopback ports,
// from Debian's etcd-server (`etcd` on PATH). `flotilla up --ha`, the etcd
// tests and the benchmarks start their etcd with it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/child_process.h"
#include "base/status.h"

namespace flotilla::storage {

// A TCP port on 127.0.0.1 that nothing listens on now.
int FreeLoopbackPort();

class EtcdCluster {
 public:
  // Starts `members` members forming one cluster, with their data under
  // `dir` (dir/NAME), and waits until every member answers. Logs go to
  // dir/NAME.log. The ports are kept in dir/ports: started again on the
  // same dir, the cluster comes back on its ports with its data.
  static StatusOr<std::unique_ptr<EtcdCluster>> Start(const std::string& dir, int members,
                                                      std::chrono::milliseconds timeout);
  // Stops every member still running (SIGTERM, then SIGKILL after 10 s).
  ~EtcdCluster();

  // The client URLs, one per member ("http://127.0.0.1:PORT").
  std::vector<std::string> endpoints() const;
  std::string endpoints_flag() const;  // comma-separated
  int size() const { return static_cast<int>(members_.size()); }

  // kill -9 of member i.
  void Kill(int i);
  // Starts member i again on its data and ports (after Kill).
  Status Restart(int i, std::chrono::milliseconds timeout);

 private:
  struct Member {
    std::string name;
    int client_port = 0;
    int peer_port = 0;
    std::unique_ptr<ChildProcess> process;
  };
  EtcdCluster() = default;
  Status Launch(int i, bool fresh);
  Status WaitReady(int i, std::chrono::milliseconds timeout);

  std::string dir_;
  std::string initial_cluster_;
  std::vector<Member> members_;
};

}  // namespace flotilla::storage
