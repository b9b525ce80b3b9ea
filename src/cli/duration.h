// Durations on the command line, spelled as kubectl and Kubernetes
// components spell them (Go's time.ParseDuration): "10s", "500ms", "1m30s",
// "2h". A bare number is not accepted: the unit says what is meant.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"

namespace flotilla::cli {

// nullopt when `text` is not a non-negative duration.
std::optional<Duration> ParseDuration(std::string_view text);

// Adds `name DURATION` to `cmd`, parsed into *target (which holds the
// default, shown as `default_text`). A value that is not a duration (or is
// zero when `allow_zero` is false) is a usage error naming the flag.
CLI::Option* AddDurationOption(CLI::App& cmd, const std::string& name, Duration* target,
                               const std::string& default_text, const std::string& description,
                               bool allow_zero = false);

}  // namespace flotilla::cli
