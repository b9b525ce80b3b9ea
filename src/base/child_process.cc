#include "base/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace flotilla {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return;
  int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t parent = getpid();
  pid_ = fork();
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);  // the parent died before prctl
    // Signals blocked in the parent stay blocked across exec: unblock them.
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_UNBLOCK, &all, nullptr);
    // Ctrl-C reaches the whole foreground process group; the parent stops
    // the children in order instead.
    setpgid(0, 0);
    dup2(out[1], 1);
    if (log >= 0) dup2(log, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  if (log >= 0) close(log);
  if (pid_ < 0) {
    close(out[0]);
    return;
  }
  out_fd_ = out[0];
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exited_) Stop();
  if (out_fd_ >= 0) close(out_fd_);
}

std::optional<std::string> ChildProcess::WaitForLine(
    const std::function<bool(const std::string&)>& match, std::chrono::milliseconds timeout,
    const std::function<void(const std::string&)>& other) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out_fd_ >= 0) {
    size_t nl;
    while ((nl = pending_.find('\n')) != std::string::npos) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      if (match(line)) return line;
      if (other) other(line);
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd pfd{out_fd_, POLLIN, 0};
    int ready = poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return std::nullopt;
    char buf[4096];
    ssize_t n = read(out_fd_, buf, sizeof(buf));
    if (n <= 0) {
      close(out_fd_);
      out_fd_ = -1;
      return std::nullopt;
    }
    pending_.append(buf, static_cast<size_t>(n));
  }
  return std::nullopt;
}

bool ChildProcess::Exited() {
  if (pid_ <= 0 || exited_) return true;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
  exited_ = true;
  code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  return true;
}

int ChildProcess::Stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return -1;
  if (Exited()) return code_;
  kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (!Exited()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
      exited_ = true;
      code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return code_;
}

}  // namespace flotilla
