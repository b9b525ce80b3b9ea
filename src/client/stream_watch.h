// StreamWatch: the Watch of every transport. It starts the request with
// Transport::StartStream, decodes the body with WatchDecoder as it arrives,
// delivers events in order and tracks the last resourceVersion seen
// (bookmarks included). It holds no thread: events are delivered on the
// thread that reads the stream (the process's shared loop).
//
// Start returns once the response head is known, so a watch the server
// refuses (404, 401, a bad selector...) is an error from StartWatch rather
// than from the stream. The stream's end is reported once through `done`:
// OK when the server closed it or Stop() ended it; the Status of an ERROR
// event (after that event is delivered); the decoding or transport error
// otherwise.
#pragma once

#include <memory>

#include "client/client.h"
#include "client/transport.h"

namespace flotilla::client {

// Start blocks until the head is known, so it must not be called on the
// shared loop. Thread-safe. Stop() may be called from an event callback
// (then `done` follows once that callback returns); the Watch may be
// destroyed from its `done` callback but not from an event callback.
class StreamWatch : public Watch {
 public:
  // `shared_objects`: WatchOptions::shared_objects.
  static StatusOr<std::unique_ptr<Watch>> Start(Transport& transport, const ApiRequest& req,
                                                WatchCallback on_event, WatchDone on_done,
                                                bool shared_objects = false);
  ~StreamWatch() override;

  void Stop() override;
  std::string LastResourceVersion() const override;

 private:
  class State;
  StreamWatch(std::shared_ptr<State> state, std::shared_ptr<StreamCall> call);

  const std::shared_ptr<State> state_;
  const std::shared_ptr<StreamCall> call_;
};

}  // namespace flotilla::client
