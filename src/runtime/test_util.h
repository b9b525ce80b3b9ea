// Helpers for runtime tests: a bounded poll for effects of other threads,
// and the resource most tests use.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "client/client.h"

namespace flotilla::runtime::testing {

inline const client::ResourceRef kConfigMaps{"", "v1", "configmaps", true};

// Polls `condition` until it holds, giving up after about 20 s of polling
// (a failing test, never a timing assertion). Returns the last result.
inline bool Eventually(const std::function<bool()>& condition) {
  for (int i = 0; i < 20000; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return condition();
}

}  // namespace flotilla::runtime::testing
