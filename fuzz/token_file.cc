// Any bytes as the static token file (kube-apiserver's --token-auth-file
// CSV): every record it reads must be written back by FormatTokenCsvLine as a
// line that reads back as the same record (but for "\r\n" in a field, which
// CSV as Go reads it turns into "\n").
#include "apiserver/token_file.h"

#include <string>
#include <vector>

#include "fuzz/targets.h"

namespace flotilla::fuzz {
namespace {

// What a quoted field reads back as: "\r\n" inside it becomes "\n", as
// Go's encoding/csv reads it (so a value holding "\r\n" cannot be written
// to come back unchanged, by us or by Go).
std::string Read(const std::string& value) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value.compare(i, 2, "\r\n") == 0) continue;  // the '\n' follows
    out += value[i];
  }
  return out;
}

std::vector<std::string> Read(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& v : values) out.push_back(Read(v));
  return out;
}

}  // namespace

void TokenFile(std::span<const uint8_t> data) {
  auto entries = apiserver::ParseTokenCsv(AsText(data), "fuzz");
  if (!entries.ok()) return;
  for (const apiserver::TokenEntry& e : *entries) {
    std::string line = apiserver::FormatTokenCsvLine(e);
    auto again = apiserver::ParseTokenCsv(line, "fuzz");
    if (!again.ok() || again->size() != 1)
      Broken("a token record written does not read back", line);
    const apiserver::TokenEntry& back = again->front();
    if (back.token != Read(e.token) || back.user != Read(e.user) || back.uid != Read(e.uid) ||
        back.groups != Read(e.groups)) {
      Broken("a token record reads back different", line);
    }
  }
}

}  // namespace flotilla::fuzz
