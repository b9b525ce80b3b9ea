// Decoding a watch stream: newline-delimited JSON events
// ({"type": "ADDED", "object": {...}}), fed in pieces as they arrive. Only
// the unfinished last line is buffered, never the stream. Shared by every
// transport (transport.h).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "client/client.h"

namespace flotilla::client {

// One event from one line. A line that is not such an event, or has an
// unknown type, is an InternalError naming what is wrong.
StatusOr<WatchEvent> DecodeWatchEvent(std::string_view line);

// The object's metadata.resourceVersion ("" for kError events and objects
// without one).
std::string EventResourceVersion(const WatchEvent& event);

// Splits a byte stream into events. Not thread-safe: one stream, one thread.
class WatchDecoder {
 public:
  // Returns false to stop decoding (the rest of the data is dropped).
  using Emit = std::function<bool(WatchEvent event)>;

  // A line longer than `max_line_bytes` is an error rather than unbounded
  // buffering.
  explicit WatchDecoder(size_t max_line_bytes = 64 << 20) : max_line_bytes_(max_line_bytes) {}

  // Decodes every line completed by `data` and calls `emit` for each, in
  // order. Errors: a malformed line (decoding stops there) or an overlong
  // one. Blank lines are skipped.
  Status Feed(std::string_view data, const Emit& emit);
  // Feed for whole lines whose objects the server shared (a server in this
  // process): `objects[i]` is the object of the i-th line, or null when
  // that line is to be decoded. A line's type is read from it; its object
  // is emitted as WatchEvent::shared when `share`, else copied into
  // WatchEvent::object.
  Status FeedShared(std::string_view data,
                    std::span<const std::shared_ptr<const json::object>> objects, bool share,
                    const Emit& emit);
  // At the end of the stream: an unterminated last line is decoded too.
  Status Finish(const Emit& emit);

 private:
  // Decodes one complete line; sets *stop when emit asks to stop.
  Status Line(std::string_view line, const Emit& emit, bool* stop);

  size_t max_line_bytes_;
  std::string partial_;  // bytes of the line not yet terminated
};

}  // namespace flotilla::client
