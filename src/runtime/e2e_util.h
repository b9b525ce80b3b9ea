// Helpers for the runtime's end-to-end tests: child processes (a real
// `flotilla server`, leader-election candidates) whose stdout is read line by
// line, and running the real kubectl. Test-only.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace flotilla::runtime::e2e {

// A child process; its stdout is collected line by line on a thread, its
// stderr goes to `log_path`. The child is killed if the test process dies.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::string& log_path) {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      dup2(out[1], 1);
      int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (log >= 0) dup2(log, 2);
      close(out[0]);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(out[1]);
    reader_ = std::thread([this, fd = out[0]] { Pump(fd); });
  }
  ~Process() {
    Signal(SIGKILL);
    Wait();
    if (reader_.joinable()) reader_.join();
  }

  // The first line (not yet returned) for which `match` holds, waiting at
  // most `timeout`; nullopt if the stream ends or time runs out.
  std::optional<std::string> WaitForLine(const std::function<bool(const std::string&)>& match,
                                         std::chrono::seconds timeout) {
    MutexLock lock(mu_);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      while (!lines_.empty()) {
        std::string line = std::move(lines_.front());
        lines_.pop_front();
        if (match(line)) return line;
      }
      if (ended_) return std::nullopt;
      if (cv_.WaitUntil(lock, deadline) == std::cv_status::timeout && lines_.empty()) {
        return std::nullopt;
      }
    }
  }

  void Signal(int sig) {
    if (pid_ > 0 && !exited_) kill(pid_, sig);
  }
  // Waits for the child to exit; its exit code (-signal when killed).
  int Wait() {
    if (pid_ <= 0) return -1;
    if (!exited_) {
      int status = 0;
      waitpid(pid_, &status, 0);
      exited_ = true;
      code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    }
    return code_;
  }
  pid_t pid() const { return pid_; }

 private:
  void Pump(int fd) {
    FILE* in = fdopen(fd, "r");
    char* buf = nullptr;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&buf, &cap, in)) > 0) {
      MutexLock lock(mu_);
      lines_.emplace_back(buf, n > 0 && buf[n - 1] == '\n' ? n - 1 : n);
      cv_.NotifyAll();
    }
    free(buf);
    fclose(in);
    MutexLock lock(mu_);
    ended_ = true;
    cv_.NotifyAll();
  }

  pid_t pid_ = -1;
  bool exited_ = false;
  int code_ = 0;
  std::thread reader_;
  Mutex mu_;
  CondVar cv_;
  std::deque<std::string> lines_ GUARDED_BY(mu_);
  bool ended_ GUARDED_BY(mu_) = false;
};

struct CommandResult {
  int code = -1;
  std::string out;
};

// Runs `command` through /bin/sh; stdout is captured, stderr passes through.
inline CommandResult Run(const std::string& command) {
  CommandResult r;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A fresh directory under the system temp dir, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "flotilla-rt-XXXXXX").string();
    path_ = mkdtemp(tmpl.data()) != nullptr ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace flotilla::runtime::e2e
