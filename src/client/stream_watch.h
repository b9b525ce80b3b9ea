// StreamWatch: the Watch of every transport. It runs Transport::Stream on a
// thread it owns, decodes the body with WatchDecoder as it arrives, delivers
// events in order and tracks the last resourceVersion seen (bookmarks
// included).
//
// Start returns once the response head is known, so a watch the server
// refuses (404, 401, a bad selector...) is an error from StartWatch rather
// than from the stream. The stream's end is reported once through `done`:
// OK when the server closed it or Stop() ended it; the Status of an ERROR
// event (after that event is delivered); the decoding or transport error
// otherwise.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "client/client.h"
#include "client/transport.h"
#include "client/watch_decoder.h"

namespace flotilla::client {

// Thread-safe. Stop() may be called from an event callback (then `done`
// follows once that callback returns); the Watch may be destroyed from its
// `done` callback but not from an event callback.
class StreamWatch : public Watch, private StreamSink {
 public:
  static StatusOr<std::unique_ptr<Watch>> Start(std::shared_ptr<Transport> transport,
                                                ApiRequest req, WatchCallback on_event,
                                                WatchDone on_done);
  ~StreamWatch() override;

  void Stop() override;
  std::string LastResourceVersion() const override;

 private:
  StreamWatch(std::shared_ptr<Transport> transport, ApiRequest req, WatchCallback on_event,
              WatchDone on_done);

  void Run();
  bool Deliver(WatchEvent event);

  void OnHead(int code, std::string error_body) override;
  bool OnData(std::string_view data) override;
  bool Cancelled() const override;
  bool WaitCancelled(int millis) override;
  void SetCanceller(std::function<void()> cancel) override;

  std::shared_ptr<Transport> transport_;
  const ApiRequest req_;
  WatchCallback on_event_;
  WatchDone on_done_;
  WatchDecoder decoder_;  // the watch thread only
  Status end_status_;     // the watch thread only: why the stream ended early
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool head_known_ = false;          // GUARDED_BY(mu_)
  Status head_status_;               // GUARDED_BY(mu_)
  bool cancelled_ = false;           // GUARDED_BY(mu_)
  std::function<void()> canceller_;  // GUARDED_BY(mu_)
  std::string last_rv_;              // GUARDED_BY(mu_)
};

}  // namespace flotilla::client
