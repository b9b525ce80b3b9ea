// The allocator's settings (allocator.h).
#include "base/allocator.h"

#include <sys/auxv.h>
#include <unistd.h>

#include <cstdlib>

namespace flotilla {
namespace {

constexpr std::string_view kCountTunable = "glibc.malloc.tcache_count";

bool SanitizedAllocator() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

}  // namespace

std::optional<std::string> WithMallocTunables(std::string_view current) {
  for (std::string_view rest = current; !rest.empty();) {
    size_t end = rest.find(':');
    std::string_view item = rest.substr(0, end);
    if (item.substr(0, item.find('=')) == kCountTunable) return std::nullopt;
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  std::string tunables(current);
  if (!tunables.empty()) tunables.push_back(':');
  tunables.append(kCountTunable).append("=").append(std::to_string(kMallocThreadCacheCount));
  return tunables;
}

void TuneAllocator(char** argv) {
  if (SanitizedAllocator() || getauxval(AT_SECURE) != 0) return;
  const char* current = std::getenv("GLIBC_TUNABLES");
  std::optional<std::string> tunables = WithMallocTunables(current ? current : "");
  if (!tunables) return;
  if (::setenv("GLIBC_TUNABLES", tunables->c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  // Not executed: go on as started, with glibc's defaults (the variable
  // stays for the children, which start with it).
}

}  // namespace flotilla
