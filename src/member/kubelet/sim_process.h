// What `kubectl exec` runs in a simulated container (docs/member.md,
// "Exec and attach"): a simulated container has no processes, so a command
// is answered by a small set of its own, made from the pod as stored, so
// that what a user reads can be checked against the pod:
//
//   echo [-n] ARGS                   hostname           pwd       id, whoami
//   env, printenv [NAME...]          date [-u]          true      false
//   cat [FILE...] (stdin without)    ls [DIR]           ps        exit [N]
//   sh|bash|ash [-c SCRIPT]          sleep N (returns at once)
//
// The files are /etc/hostname, /etc/hosts and /etc/resolv.conf as a kubelet
// writes them for the pod; the environment is the container's `env` values
// (valueFrom entries are not resolved) with PATH, HOSTNAME and HOME. A shell
// reads commands from stdin line by line (or runs -c's script), with `;`,
// `&&`, `||`, single and double quotes and $NAME, ${NAME} and $? expansion;
// an unknown command is `sh: NAME: not found`, exit 127, and a line with a
// pipe `sh: pipes are not simulated`, exit 2. An unknown
// executable run directly is an exec failure, as runc reports one.
//
// With a TTY the process sees a terminal: what is typed is echoed, Enter
// (CR) ends a line, ^C drops it, ^D on an empty line ends the input, DEL
// erases, output lines end in CR LF and stderr goes to stdout, as through
// a pty. A shell on a TTY prompts with `# `.
//
// Not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/json.h"

namespace flotilla::member::kubelet {

// The container a process runs in.
struct ProcessContext {
  std::string pod, ns, pod_ip, node;
  json::object container;  // the container's spec
  TimePoint now;           // the member's clock when the process started
};

struct ProcessOutput {
  std::string out, err;
};

class SimProcess {
 public:
  SimProcess(ProcessContext ctx, std::vector<std::string> argv, bool tty);

  // Runs it; what it writes at once. A command that does not read stdin
  // has exited when this returns.
  ProcessOutput Start();
  // Bytes typed on stdin; what the process writes in answer.
  ProcessOutput Input(std::string_view data);
  // stdin closed (or never attached).
  ProcessOutput EndInput();

  bool exited() const { return exited_; }
  int exit_code() const { return exit_code_; }
  // Set when the command could not be run at all (an unknown executable):
  // the runtime's message; nothing was written.
  const std::optional<std::string>& failure() const { return failure_; }

 private:
  struct Result {
    std::string out, err;
    int code = 0;
    bool exit = false;  // the shell's `exit`
  };
  // One command, its words expanded.
  Result Run(const std::vector<std::string>& argv);
  // A shell's line: commands joined by ; && ||.
  Result RunLine(std::string_view line);
  // A line the process read from stdin.
  void Line(const std::string& line, ProcessOutput& out);
  void Prompt(ProcessOutput& out);
  void Emit(ProcessOutput& out, const Result& r);
  std::string Env(std::string_view name) const;
  std::vector<std::pair<std::string, std::string>> Environment() const;
  std::optional<std::string> File(std::string_view path) const;

  const ProcessContext ctx_;
  const std::vector<std::string> argv_;
  const bool tty_;
  bool shell_ = false;  // reads commands from stdin
  bool cat_ = false;    // copies stdin to stdout
  bool exited_ = false;
  int exit_code_ = 0;
  int last_code_ = 0;  // $?
  std::optional<std::string> failure_;
  std::string line_;  // typed, not yet ended
};

}  // namespace flotilla::member::kubelet
