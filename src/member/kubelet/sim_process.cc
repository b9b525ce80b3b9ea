// The simulated container's commands (sim_process.h).
#include "member/kubelet/sim_process.h"

#include <time.h>

#include <algorithm>
#include <cstdlib>

#include "base/json.h"

namespace flotilla::member::kubelet {
namespace {

constexpr const char* kPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

bool IsShell(std::string_view cmd) { return cmd == "sh" || cmd == "bash" || cmd == "ash"; }

// The name a command runs as: /bin/sh is sh.
std::string_view Base(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A terminal's output: LF becomes CR LF.
std::string Crlf(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

// The words of one command, quotes removed and variables expanded by
// `expand`.
template <typename Expand>
std::vector<std::string> Words(std::string_view line, Expand expand) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  auto end_word = [&] {
    if (in_word) out.push_back(std::move(word));
    word.clear();
    in_word = false;
  };
  auto variable = [&](size_t& i) {  // at '$'
    if (i + 1 < line.size() && line[i + 1] == '?') {
      ++i;
      word += expand("?");
      return;
    }
    if (i + 1 < line.size() && line[i + 1] == '{') {
      size_t close = line.find('}', i + 2);
      if (close != std::string_view::npos) {
        word += expand(line.substr(i + 2, close - i - 2));
        i = close;
        return;
      }
    }
    size_t j = i + 1;
    while (j < line.size() && IsNameChar(line[j])) ++j;
    if (j == i + 1) {
      word += '$';
      return;
    }
    word += expand(line.substr(i + 1, j - i - 1));
    i = j - 1;
  };
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == ' ' || c == '\t') {
      end_word();
    } else if (c == '\'') {
      in_word = true;
      size_t close = line.find('\'', i + 1);
      if (close == std::string_view::npos) close = line.size();
      word += line.substr(i + 1, close - i - 1);
      i = close;
    } else if (c == '"') {
      in_word = true;
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size()) {
          word += line[++i];
        } else if (line[i] == '$') {
          variable(i);
        } else {
          word += line[i];
        }
      }
    } else if (c == '\\' && i + 1 < line.size()) {
      in_word = true;
      word += line[++i];
    } else if (c == '$') {
      in_word = true;
      variable(i);
    } else {
      in_word = true;
      word += c;
    }
  }
  end_word();
  return out;
}

// A line's commands, each with the operator before it (";" for the
// first), split outside quotes; each is expanded when its turn comes, so
// that $? is the code of the one before.
std::vector<std::pair<std::string, std::string>> SplitCommands(std::string_view line) {
  std::vector<std::pair<std::string, std::string>> out{{";", ""}};
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      if (c == '\\' && quote == '"' && i + 1 < line.size()) out.back().second += line[i++];
      out.back().second += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\' && i + 1 < line.size()) {
      out.back().second += line[i++];
    } else if (c == ';') {
      out.push_back({";", ""});
      continue;
    } else if ((c == '&' || c == '|') && i + 1 < line.size() && line[i + 1] == c) {
      out.push_back({std::string(2, c), ""});
      ++i;
      continue;
    } else if (c == '|') {
      out.push_back({"|", ""});  // a pipe: not simulated
      continue;
    } else if (c == '#' && (out.back().second.empty() || out.back().second.back() == ' ')) {
      break;  // a comment
    }
    out.back().second += c;
  }
  return out;
}

std::string Join(const std::vector<std::string>& words, size_t from, std::string_view sep) {
  std::string out;
  for (size_t i = from; i < words.size(); ++i) {
    if (i > from) out += sep;
    out += words[i];
  }
  return out;
}

}  // namespace

SimProcess::SimProcess(ProcessContext ctx, std::vector<std::string> argv, bool tty)
    : ctx_(std::move(ctx)), argv_(std::move(argv)), tty_(tty) {}

std::string SimProcess::Env(std::string_view name) const {
  if (name == "?") return std::to_string(last_code_);
  for (const auto& [k, v] : Environment()) {
    if (k == name) return v;
  }
  return "";
}

std::vector<std::pair<std::string, std::string>> SimProcess::Environment() const {
  std::vector<std::pair<std::string, std::string>> env{{"PATH", kPath}, {"HOSTNAME", ctx_.pod}};
  if (const json::array* vars = GetArray(ctx_.container, "env")) {
    for (const json::value& v : *vars) {
      if (!v.is_object() || !v.get_object().contains("value")) continue;
      env.emplace_back(StringAt(v.get_object(), "name"), StringAt(v.get_object(), "value"));
    }
  }
  if (tty_) env.emplace_back("TERM", "xterm");
  env.emplace_back("HOME", "/root");
  return env;
}

std::optional<std::string> SimProcess::File(std::string_view path) const {
  if (path == "/etc/hostname") return ctx_.pod + "\n";
  if (path == "/etc/hosts") {
    std::string hosts =
        "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost "
        "ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\n"
        "fe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n";
    if (!ctx_.pod_ip.empty()) hosts += ctx_.pod_ip + "\t" + ctx_.pod + "\n";
    return hosts;
  }
  if (path == "/etc/resolv.conf") {
    return "search " + ctx_.ns + ".svc.cluster.local svc.cluster.local cluster.local\n" +
           "nameserver 10.96.0.10\noptions ndots:5\n";
  }
  return std::nullopt;
}

SimProcess::Result SimProcess::Run(const std::vector<std::string>& argv) {
  Result r;
  if (argv.empty()) return r;
  std::string_view cmd = Base(argv[0]);
  auto fail = [&](std::string message, int code) {
    r.err = std::move(message);
    r.code = code;
    return r;
  };
  if (cmd == "echo") {
    bool newline = !(argv.size() > 1 && argv[1] == "-n");
    r.out = Join(argv, newline ? 1 : 2, " ") + (newline ? "\n" : "");
  } else if (cmd == "hostname") {
    r.out = ctx_.pod + "\n";
  } else if (cmd == "pwd") {
    r.out = "/\n";
  } else if (cmd == "whoami") {
    r.out = "root\n";
  } else if (cmd == "id") {
    r.out = "uid=0(root) gid=0(root) groups=0(root)\n";
  } else if (cmd == "true" || cmd == "sleep") {
  } else if (cmd == "false") {
    r.code = 1;
  } else if (cmd == "env" || (cmd == "printenv" && argv.size() == 1)) {
    for (const auto& [k, v] : Environment()) r.out += k + "=" + v + "\n";
  } else if (cmd == "printenv") {
    for (size_t i = 1; i < argv.size(); ++i) {
      bool found = false;
      for (const auto& [k, v] : Environment()) {
        if (k == argv[i]) {
          r.out += v + "\n";
          found = true;
          break;
        }
      }
      if (!found) r.code = 1;
    }
  } else if (cmd == "date") {
    time_t t = std::chrono::system_clock::to_time_t(ctx_.now);
    tm utc{};
    gmtime_r(&t, &utc);
    char buf[64];
    strftime(buf, sizeof buf, "%a %b %e %H:%M:%S UTC %Y\n", &utc);
    r.out = buf;
  } else if (cmd == "cat") {
    for (size_t i = 1; i < argv.size(); ++i) {
      if (auto content = File(argv[i])) {
        r.out += *content;
      } else {
        r.err += "cat: can't open '" + argv[i] + "': No such file or directory\n";
        r.code = 1;
      }
    }
  } else if (cmd == "ls") {
    std::string dir = argv.size() > 1 ? argv[1] : "/";
    if (dir == "/") {
      r.out = "bin\ndev\netc\nhome\nproc\nroot\nsys\ntmp\nusr\nvar\n";
    } else if (dir == "/etc" || dir == "/etc/") {
      r.out = "hostname\nhosts\nresolv.conf\n";
    } else if (File(dir)) {
      r.out = dir + "\n";
    } else {
      return fail("ls: " + dir + ": No such file or directory\n", 1);
    }
  } else if (cmd == "ps") {
    std::vector<std::string> main = StringsAt(ctx_.container, "command");
    for (std::string& arg : StringsAt(ctx_.container, "args")) main.push_back(std::move(arg));
    std::string image = StringAt(ctx_.container, "image");
    if (main.empty()) main.push_back(image.substr(0, image.find(':')));
    r.out = "PID   USER     COMMAND\n    1 root     " + Join(main, 0, " ") + "\n";
    if (shell_) r.out += "    7 root     sh\n";
    r.out += "   13 root     ps\n";
  } else if (cmd == "exit") {
    r.exit = true;
    r.code = argv.size() > 1 ? std::atoi(argv[1].c_str()) : last_code_;
  } else if (IsShell(cmd) && argv.size() > 2 && argv[1] == "-c") {
    r = RunLine(argv[2]);
    r.exit = false;
  } else {
    return fail("sh: " + argv[0] + ": not found\n", 127);
  }
  return r;
}

SimProcess::Result SimProcess::RunLine(std::string_view line) {
  Result all;
  auto commands = SplitCommands(line);
  for (const auto& [op, command] : commands) {
    if (op == "|") {
      all.err += "sh: pipes are not simulated\n";
      last_code_ = 2;
      all.code = 2;
      return all;
    }
  }
  for (const auto& [op, command] : commands) {
    if ((op == "&&" && last_code_ != 0) || (op == "||" && last_code_ == 0)) continue;
    std::vector<std::string> argv =
        Words(command, [this](std::string_view name) { return Env(name); });
    if (argv.empty()) continue;
    Result r = Run(argv);
    all.out += r.out;
    all.err += r.err;
    last_code_ = r.code;
    if (r.exit) {
      all.exit = true;
      break;
    }
  }
  all.code = last_code_;
  return all;
}

void SimProcess::Emit(ProcessOutput& out, const Result& r) {
  if (tty_) {
    out.out += Crlf(r.out) + Crlf(r.err);  // a pty has one output
  } else {
    out.out += r.out;
    out.err += r.err;
  }
}

void SimProcess::Prompt(ProcessOutput& out) {
  if (tty_ && shell_ && !exited_) out.out += "# ";
}

ProcessOutput SimProcess::Start() {
  ProcessOutput out;
  if (argv_.empty()) {
    failure_ = "command is required";
    exited_ = true;
    return out;
  }
  std::string_view cmd = Base(argv_[0]);
  if (IsShell(cmd) && (argv_.size() == 1 || argv_[1] != "-c")) {
    shell_ = true;
    Prompt(out);
    return out;
  }
  if (cmd == "cat" && argv_.size() == 1) {
    cat_ = true;
    return out;
  }
  static const char* const kKnown[] = {"echo",  "hostname", "pwd", "whoami",   "id",   "true",
                                       "sleep", "false",    "env", "printenv", "date", "cat",
                                       "ls",    "ps",       "sh",  "bash",     "ash"};
  if (std::find(std::begin(kKnown), std::end(kKnown), cmd) == std::end(kKnown)) {
    failure_ =
        "OCI runtime exec failed: exec failed: unable to start container process: "
        "exec: \"" +
        argv_[0] + "\": executable file not found in $PATH: unknown";
    exited_ = true;
    exit_code_ = 126;
    return out;
  }
  Result r = Run(argv_);
  Emit(out, r);
  exited_ = true;
  exit_code_ = r.code;
  return out;
}

void SimProcess::Line(const std::string& line, ProcessOutput& out) {
  if (cat_) {
    Emit(out, {line + "\n", "", 0, false});
    return;
  }
  Result r = RunLine(line);
  Emit(out, r);
  if (r.exit) {
    exited_ = true;
    exit_code_ = r.code;
  }
}

ProcessOutput SimProcess::Input(std::string_view data) {
  ProcessOutput out;
  for (char c : data) {
    if (exited_) break;
    if (!tty_) {
      if (c == '\n') {
        Line(std::exchange(line_, {}), out);
      } else {
        line_ += c;
      }
      continue;
    }
    // A pty's line discipline: echo, erase, interrupt, end of input.
    if (c == '\r' || c == '\n') {
      out.out += "\r\n";
      Line(std::exchange(line_, {}), out);
      Prompt(out);
    } else if (c == 0x03) {
      out.out += "^C\r\n";
      line_.clear();
      Prompt(out);
    } else if (c == 0x04) {
      if (line_.empty()) {
        ProcessOutput end = EndInput();
        out.out += end.out;
        out.err += end.err;
      }
    } else if (c == 0x7f || c == '\b') {
      if (!line_.empty()) {
        line_.pop_back();
        out.out += "\b \b";
      }
    } else {
      line_ += c;
      out.out += c;
    }
  }
  return out;
}

ProcessOutput SimProcess::EndInput() {
  ProcessOutput out;
  if (exited_) return out;
  if (!line_.empty()) Line(std::exchange(line_, {}), out);
  if (exited_) return out;
  if (tty_ && shell_) out.out += "exit\r\n";
  exited_ = true;
  exit_code_ = shell_ ? last_code_ : 0;
  return out;
}

}  // namespace flotilla::member::kubelet
