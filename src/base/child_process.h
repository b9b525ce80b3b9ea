// ChildProcess: a child process (another flotilla command for `flotilla up`,
// an etcd member for EtcdCluster).
// Its stdout is read line by line (the ready lines commands print), its
// stderr goes to a log file, and it dies with the parent (PR_SET_PDEATHSIG).
// That signal follows the *thread* that started the child: start children
// on a thread that outlives them, not on a short-lived helper thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace flotilla {

class ChildProcess {
 public:
  // Starts argv[0] (a path) with the arguments; stderr appended to
  // `log_path`. started() is false if it could not be started.
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path);
  // Stops the child (SIGTERM, then SIGKILL after 10 s) if still running.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // Reads stdout until a line for which `match` holds (returned) or until
  // the child closes stdout or `timeout` passes (nullopt). Lines before the
  // match are passed to `other` when given.
  std::optional<std::string> WaitForLine(const std::function<bool(const std::string&)>& match,
                                         std::chrono::milliseconds timeout,
                                         const std::function<void(const std::string&)>& other = {});

  // True once the child has exited (reaped without blocking).
  bool Exited();
  // Sends SIGTERM and waits up to `grace` for the exit, then SIGKILL.
  // Returns the exit code (-signal when killed by one).
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(10));

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string pending_;  // stdout read but not yet split into lines
  bool exited_ = false;
  int code_ = 0;
};

}  // namespace flotilla
