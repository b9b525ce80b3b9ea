// The dashboard's watch streams (dashboard.h): a watch of the federation
// forwarded as it comes, and several watches merged into one response.
// Browsers hold at most six HTTP/1.1 connections to one origin; a page
// with a watch open per kind would hold them all and queue every other
// request behind them, so the page asks for one merged stream instead.
// Internal to src/dashboard.
#pragma once

#include <string>
#include <vector>

#include "apiserver/http.h"
#include "base/status.h"
#include "client/transport.h"

namespace flotilla::dashboard {

// GET `path` (a watch request) on the federation; its bytes go to `out` as
// they come, its error status as it is. Returns when the stream ends or
// the browser leaves.
void ForwardWatch(client::Transport& federation, const client::ApiRequest& watch,
                  apiserver::Responder& out);

struct WatchSpec {
  std::string path;  // a collection: "/apis/apps/v1/deployments"
  std::string resource_version;
};

// The `w` parameters of a merged watch: "RESOURCEVERSION,PATH" each, at
// most kMaxMergedWatches, each path under /api/ or /apis/ (letters,
// digits, '/', '.', '-', '_'). BadRequest
// naming what is wrong.
inline constexpr size_t kMaxMergedWatches = 16;
StatusOr<std::vector<WatchSpec>> ParseWatchSpecs(const apiserver::Request& req);

// One watch of the federation per spec (bookmarks on), merged into one
// chunked response of JSON lines, each {"path": P, "event": {...}} for an
// event of P's watch or {"path": P, "error": {Status}} when P's watch was
// refused. It ends, with every watch, once one of them ends (the page then
// lists again what needs it and asks anew from the resourceVersions it
// has), or when the browser leaves.
void ServeMergedWatch(client::Transport& federation, const std::vector<WatchSpec>& specs,
                      apiserver::Responder& out);

}  // namespace flotilla::dashboard
