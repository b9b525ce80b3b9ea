// Command-line durations (duration.h).
#include "cli/duration.h"

#include <cctype>
#include <string>

namespace flotilla::cli {
namespace {

// Nanoseconds per unit; nullopt for an unknown unit.
std::optional<double> UnitNanos(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "µs") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  if (unit == "m") return 60e9;
  if (unit == "h") return 3600e9;
  return std::nullopt;
}

}  // namespace

std::optional<Duration> ParseDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text == "0") return Duration::zero();
  double total_ns = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
      ++i;
    }
    if (i == start) return std::nullopt;
    double value = 0;
    try {
      value = std::stod(std::string(text.substr(start, i - start)));
    } catch (...) {
      return std::nullopt;
    }
    size_t unit_start = i;
    while (i < text.size() && !std::isdigit(static_cast<unsigned char>(text[i])) &&
           text[i] != '.') {
      ++i;
    }
    auto nanos = UnitNanos(text.substr(unit_start, i - unit_start));
    if (!nanos) return std::nullopt;
    total_ns += value * *nanos;
  }
  return std::chrono::duration_cast<Duration>(
      std::chrono::nanoseconds(static_cast<int64_t>(total_ns)));
}

CLI::Option* AddDurationOption(CLI::App& cmd, const std::string& name, Duration* target,
                               const std::string& default_text, const std::string& description,
                               bool allow_zero) {
  auto parse = [name, target, allow_zero](const std::string& text) {
    std::optional<Duration> d = ParseDuration(text);
    if (!d || (!allow_zero && *d <= Duration::zero())) {
      throw CLI::ValidationError(name, std::string("want a ") + (allow_zero ? "" : "positive ") +
                                           "duration such as 10s or 500ms, got \"" + text + "\"");
    }
    *target = *d;
  };
  return cmd.add_option_function<std::string>(name, parse, description)
      ->type_name("DURATION")
      ->default_str(default_text);
}

}  // namespace flotilla::cli
