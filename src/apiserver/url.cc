#include "apiserver/url.h"

#include <cctype>

namespace flotilla::apiserver {

void SplitTarget(std::string_view target, std::string* path, QueryParams* query) {
  size_t q = target.find('?');
  *path = PercentDecode(target.substr(0, q), false);
  if (q == std::string_view::npos) return;
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? "" : rest.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string key = PercentDecode(pair.substr(0, eq), true);
    std::string value =
        eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1), true);
    query->emplace(std::move(key), std::move(value));
  }
}

}  // namespace flotilla::apiserver
