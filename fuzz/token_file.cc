// Any bytes as the static token file (kube-apiserver's --token-auth-file
// CSV): every record it reads must be written back by FormatTokenCsvLine as a
// line that reads back as the same record.
#include "apiserver/token_file.h"

#include "fuzz/targets.h"

namespace flotilla::fuzz {

void TokenFile(std::span<const uint8_t> data) {
  auto entries = apiserver::ParseTokenCsv(AsText(data), "fuzz");
  if (!entries.ok()) return;
  for (const apiserver::TokenEntry& e : *entries) {
    std::string line = apiserver::FormatTokenCsvLine(e);
    auto again = apiserver::ParseTokenCsv(line, "fuzz");
    if (!again.ok() || again->size() != 1)
      Broken("a token record written does not read back", line);
    const apiserver::TokenEntry& back = again->front();
    if (back.token != e.token || back.user != e.user || back.uid != e.uid ||
        back.groups != e.groups) {
      Broken("a token record reads back different", line);
    }
  }
}

}  // namespace flotilla::fuzz
