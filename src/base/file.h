// Writing a file so that readers see the old content or the new, never a
// part: the credentials, certificates and kubeconfigs Flotilla writes; and
// reading one whole.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace flotilla {

// Writes `content` to PATH.tmp with permissions `mode` (whatever the umask),
// fsyncs it and renames it over `path`. On failure PATH.tmp is removed and
// `path` is as it was.
Status WriteFileAtomic(const std::string& path, std::string_view content, mode_t mode);

// The whole file; Internal "cannot read PATH: <errno text>" on failure.
StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace flotilla
