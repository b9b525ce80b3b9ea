// The dashboard's watch streams (streams.h).
#include "dashboard/streams.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <functional>
#include <memory>
#include <thread>

#include "base/json.h"
#include "base/mutex.h"

namespace flotilla::dashboard {
namespace {

using apiserver::Headers;
using apiserver::Responder;

// How often a stream looks for a browser that went away while the
// federation had nothing to send.
constexpr int kGoneCheckMillis = 500;

const Headers kStreamHeaders = {{"Content-Type", "application/json"},
                                {"X-Content-Type-Options", "nosniff"},
                                {"Cache-Control", "no-cache"}};

// A sink the dashboard can cancel from any thread: the transport's
// blocking read is aborted through the canceller it registers.
class CancellableSink : public client::StreamSink {
 public:
  bool Cancelled() const override {
    MutexLock lock(mu_);
    return cancelled_;
  }
  bool WaitCancelled(int millis) override {
    MutexLock lock(mu_);
    cv_.WaitFor(lock, std::chrono::milliseconds(millis),
                [&]() REQUIRES(mu_) { return cancelled_; });
    return cancelled_;
  }
  void SetCanceller(std::function<void()> cancel) override {
    MutexLock lock(mu_);
    canceller_ = std::move(cancel);
    // Cancelled before the transport got this far: unblock it at once.
    if (cancelled_ && canceller_) canceller_();
  }
  void Cancel() {
    MutexLock lock(mu_);
    cancelled_ = true;
    if (canceller_) canceller_();
    cv_.NotifyAll();
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  bool cancelled_ GUARDED_BY(mu_) = false;
  std::function<void()> canceller_ GUARDED_BY(mu_);
};

// Forwards one watch's bytes as they come.
class ForwardSink : public CancellableSink {
 public:
  explicit ForwardSink(Responder& out) : out_(out) {}
  void OnHead(int code, std::string error_body) override {
    if (code < 200 || code > 299) {
      out_.Respond(code, kStreamHeaders, std::move(error_body));
    } else if (!out_.StartStream(code, kStreamHeaders)) {
      Cancel();
    }
  }
  bool OnData(std::string_view data) override {
    if (out_.WriteChunk(data)) return true;
    Cancel();
    return false;
  }

 private:
  Responder& out_;
};

// The merged response: lines from every watch, one writer at a time.
class MergedOut {
 public:
  explicit MergedOut(Responder& out) : out_(out) {}
  // False once the browser is gone.
  bool Write(const json::object& line) {
    std::string text = ToJson(line) + "\n";
    MutexLock lock(mu_);
    return out_.WriteChunk(text);
  }

 private:
  Responder& out_;
  Mutex mu_;
};

// One watch of a merged stream: splits its bytes into events and wraps each.
class MergedSink : public CancellableSink {
 public:
  MergedSink(MergedOut& out, std::string path, std::function<void()> cancel_all)
      : out_(out), path_(std::move(path)), cancel_all_(std::move(cancel_all)) {}
  void OnHead(int code, std::string error_body) override {
    if (code >= 200 && code <= 299) return;
    auto status = ParseJsonObject(error_body);
    json::object error =
        status.ok() ? *status
                    : json::object{{"kind", "Status"}, {"code", code}, {"message", error_body}};
    out_.Write({{"path", path_}, {"error", error}});
  }
  bool OnData(std::string_view data) override {
    buffered_.append(data);
    size_t start = 0;
    for (size_t nl; (nl = buffered_.find('\n', start)) != std::string::npos; start = nl + 1) {
      auto event = ParseJson(std::string_view(buffered_).substr(start, nl - start));
      if (!event.ok()) continue;  // a blank line
      if (!out_.Write({{"path", path_}, {"event", *event}})) {
        cancel_all_();
        return false;
      }
    }
    buffered_.erase(0, start);
    return true;
  }

 private:
  MergedOut& out_;
  const std::string path_;
  std::function<void()> cancel_all_;
  std::string buffered_;
};

// Runs `streams` (each blocking until its watch ends) on threads of their
// own while this thread watches for the browser leaving; `cancel` ends
// them all. Returns once every stream has returned.
void RunUntilGone(std::vector<std::function<void()>> streams, const std::function<void()>& cancel,
                  Responder& out) {
  std::atomic<size_t> running = streams.size();
  std::vector<std::thread> threads;
  for (auto& stream : streams) {
    threads.emplace_back([&running, &cancel, stream = std::move(stream)] {
      stream();
      cancel();  // one ended: end them all
      --running;
    });
  }
  while (running > 0) {
    if (out.WaitClientGone(kGoneCheckMillis)) cancel();
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace

void ForwardWatch(client::Transport& federation, const client::ApiRequest& watch, Responder& out) {
  ForwardSink sink(out);
  Status status;
  RunUntilGone(
      {[&] { status = federation.Stream(watch, sink); }}, [&] { sink.Cancel(); }, out);
  if (!out.Responded()) {
    json::object body{
        {"kind", "Status"},    {"apiVersion", "v1"},
        {"status", "Failure"}, {"reason", "ServiceUnavailable"},
        {"code", 503},         {"message", "the federation did not answer: " + status.message()}};
    out.Respond(503, kStreamHeaders, ToJson(body));
  }
}

StatusOr<std::vector<WatchSpec>> ParseWatchSpecs(const apiserver::Request& req) {
  std::vector<WatchSpec> specs;
  auto [begin, end] = req.query.equal_range("w");
  for (auto it = begin; it != end; ++it) {
    auto comma = it->second.find(',');
    if (comma == std::string::npos) {
      return Status::BadRequest("w=" + it->second + ": expected RESOURCEVERSION,PATH");
    }
    WatchSpec spec{.path = it->second.substr(comma + 1),
                   .resource_version = it->second.substr(0, comma)};
    bool plain = std::all_of(spec.path.begin(), spec.path.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '-' ||
             c == '_';
    });
    if (!plain || (spec.path.rfind("/api/", 0) != 0 && spec.path.rfind("/apis/", 0) != 0)) {
      return Status::BadRequest("w=" + it->second +
                                ": the path must be a collection under /api/ or /apis/");
    }
    specs.push_back(std::move(spec));
  }
  if (specs.empty()) return Status::BadRequest("no w=RESOURCEVERSION,PATH to watch");
  if (specs.size() > kMaxMergedWatches) {
    return Status::BadRequest("at most " + std::to_string(kMaxMergedWatches) + " watches");
  }
  return specs;
}

void ServeMergedWatch(client::Transport& federation, const std::vector<WatchSpec>& specs,
                      Responder& out) {
  if (!out.StartStream(200, kStreamHeaders)) return;
  MergedOut merged(out);
  std::vector<std::unique_ptr<MergedSink>> sinks;
  auto cancel_all = [&sinks] {
    for (auto& s : sinks) s->Cancel();
  };
  std::vector<std::function<void()>> streams;
  for (const WatchSpec& spec : specs) {
    sinks.push_back(std::make_unique<MergedSink>(merged, spec.path, cancel_all));
    client::ApiRequest watch{.method = "GET", .path = spec.path};
    watch.query = {{"watch", "true"},
                   {"allowWatchBookmarks", "true"},
                   {"resourceVersion", spec.resource_version}};
    streams.push_back([&federation, &merged, watch, sink = sinks.back().get()] {
      Status s = federation.Stream(watch, *sink);
      if (!s.ok() && !sink->Cancelled()) {
        merged.Write({{"path", watch.path},
                      {"error",
                       {{"kind", "Status"},
                        {"code", 503},
                        {"reason", "ServiceUnavailable"},
                        {"message", "the federation did not answer: " + s.message()}}}});
      }
    });
  }
  RunUntilGone(std::move(streams), cancel_all, out);
}

}  // namespace flotilla::dashboard
