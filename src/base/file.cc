// Atomic file writes (file.h).
#include "base/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace flotilla {

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Internal("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

Status WriteFileAtomic(const std::string& path, std::string_view content, mode_t mode) {
  auto fail = [&](std::string_view what, const std::string& file) {
    return Status::Internal(std::string(what) + " " + file + ": " + std::strerror(errno));
  };
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return fail("cannot create", tmp);
  bool ok = ::fchmod(fd, mode) == 0;  // the umask must not widen or narrow it
  for (size_t off = 0; ok && off < content.size();) {
    ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) off += static_cast<size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    Status error = fail("cannot write", path);
    ::unlink(tmp.c_str());
    return error;
  }
  return {};
}

}  // namespace flotilla
