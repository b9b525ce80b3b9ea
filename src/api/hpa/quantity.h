// Kubernetes resource quantities as the HPA controller reads and writes
// them: a quantity's milli-value, rounded up as resource.Quantity's
// MilliValue() rounds, and the canonical DecimalSI text of a milli-value, as
// resource.NewMilliQuantity(v, DecimalSI).String() writes it ("250m", "1",
// "1500m", "2k"). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/json.h"

namespace flotilla::api::hpa {

// "100m", "0.5", "2", "1e3", "64Mi", or a JSON number. nullopt when it is not
// a quantity. Values beyond int64 saturate.
std::optional<int64_t> ParseMilli(std::string_view text);
std::optional<int64_t> ParseMilli(const json::value& q);

std::string FormatMilli(int64_t milli);

}  // namespace flotilla::api::hpa
