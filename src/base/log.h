// Logging: spdlog, configured once by the command that starts the process.
#pragma once

#include <spdlog/spdlog.h>

#include <string_view>

namespace flotilla {

// Sets the global level from "trace|debug|info|warn|error" (info when unknown)
// and a compact pattern. Logs go to stderr.
void InitLogging(std::string_view level);

}  // namespace flotilla
