// The dashboard page's static files, built into the binary by
// scripts/embed_assets.py from src/dashboard/assets/ (no network at run
// time, nothing to install).
#pragma once

#include <cstddef>
#include <string_view>

namespace flotilla::dashboard {

struct Asset {
  std::string_view path;  // the URL path: "/" for index.html, else "/NAME"
  std::string_view content_type;
  std::string_view body;
};

extern const Asset kAssets[];
extern const size_t kAssetCount;

}  // namespace flotilla::dashboard
