// Helpers for the api/ tests.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "base/json.h"

namespace flotilla::api::testing {

// `text` parsed; a test failure (and null) when it is not JSON.
inline json::value J(std::string_view text) {
  StatusOr<json::value> v = ParseJson(text);
  EXPECT_TRUE(v.ok()) << text << ": " << v.status().ToString();
  return v.ok() ? *v : json::value();
}

}  // namespace flotilla::api::testing
