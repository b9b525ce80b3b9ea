// The static token file, in kube-apiserver's `--token-auth-file` format: one
// CSV record per token, `token,user,uid[,"group1,group2"]`. Parsed here for
// the Authenticator (auth.h) and for EnsurePki (pki.h), which writes the file
// on first start and reads the built-in tokens back later.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace flotilla::apiserver {

struct TokenEntry {
  std::string token;
  std::string user;
  std::string uid;
  std::vector<std::string> groups;
  int line = 0;  // 1-based line of the record in its file (0 when not parsed)
};

// Parses CSV as Go's encoding/csv reads it with kube-apiserver's settings:
// blank lines skipped, quoted fields with "" escapes, a variable number of
// fields per record. Records with an empty token are skipped, as
// kube-apiserver does. Errors are BadRequest and name `source` and the line:
// fewer than three columns, an empty user name, malformed quoting. Entries
// are returned in file order; a later duplicate token overrides an earlier
// one when the caller builds a lookup.
StatusOr<std::vector<TokenEntry>> ParseTokenCsv(std::string_view text, std::string_view source);

// One record (with its trailing newline) that ParseTokenCsv reads back as
// `entry` (a "\r\n" inside a field comes back as "\n", as Go's encoding/csv
// reads it); the groups column is quoted and omitted when there are no
// groups.
std::string FormatTokenCsvLine(const TokenEntry& entry);

}  // namespace flotilla::apiserver
