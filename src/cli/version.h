// The version Flotilla reports, and the Kubernetes version its API emulates.
#pragma once

namespace flotilla::cli {

inline constexpr const char* kVersion = "0.1.0";
inline constexpr const char* kKubeVersion = "v1.32.0";

}  // namespace flotilla::cli
