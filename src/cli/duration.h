// Durations on the command line, spelled as kubectl and Kubernetes
// components spell them (Go's time.ParseDuration): "10s", "500ms", "1m30s",
// "2h". A bare number is not accepted: the unit says what is meant.
#pragma once

#include <optional>
#include <string_view>

#include "base/clock.h"

namespace flotilla::cli {

// nullopt when `text` is not a non-negative duration.
std::optional<Duration> ParseDuration(std::string_view text);

}  // namespace flotilla::cli
