// What /proc says about a process, for the benchmarks that report a
// server's CPU time and memory. pid 0 means this process. 0 when the
// process or the field cannot be read.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>

namespace flotilla::bench {

inline std::string ProcPath(pid_t pid, std::string_view file) {
  return "/proc/" + (pid > 0 ? std::to_string(pid) : std::string("self")) + "/" + std::string(file);
}

// User + system CPU seconds the process has used so far.
inline double CpuSeconds(pid_t pid) {
  std::ifstream in(ProcPath(pid, "stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');  // fields after the command name: state is field 3
  if (paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(paren + 2));
  std::string skip;
  for (int i = 3; i < 14; ++i) fields >> skip;
  double utime = 0, stime = 0;
  fields >> utime >> stime;
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The number in a line of /proc/<pid>/status ("VmRSS", "VmHWM" in KiB,
// "Threads").
inline long long StatusField(pid_t pid, std::string_view field) {
  std::ifstream in(ProcPath(pid, "status"));
  std::string prefix = std::string(field) + ":";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return std::strtoll(line.c_str() + prefix.size(), nullptr, 10);
  }
  return 0;
}

// How many file descriptors the process has open.
inline long long OpenDescriptors(pid_t pid) {
  std::error_code ec;
  long long n = 0;
  for (std::filesystem::directory_iterator it(ProcPath(pid, "fd"), ec), end; !ec && it != end;
       it.increment(ec)) {
    ++n;
  }
  return n;
}

}  // namespace flotilla::bench
