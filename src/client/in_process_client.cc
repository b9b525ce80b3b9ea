// The in-process transport (in_process_client.h): ApiRequests become
// apiserver::Requests parsed from the same target the REST client sends,
// answered by ApiServer::Handle into in-memory Responders.
#include "client/in_process_client.h"

#include <boost/asio/post.hpp>
#include <cctype>
#include <deque>
#include <thread>
#include <utility>

#include "apiserver/url.h"
#include "base/io.h"
#include "base/mutex.h"
#include "client/transport.h"

namespace flotilla::client {
namespace {

std::string LowerAscii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Collects a whole response. Used for everything but watches, so the client
// never goes away mid-response.
class BufferResponder : public apiserver::Responder {
 public:
  void Respond(int code, const apiserver::Headers& headers, std::string body) override {
    Head(code, headers);
    response_.body = std::move(body);
  }
  bool StartStream(int code, const apiserver::Headers& headers) override {
    Head(code, headers);
    return true;
  }
  bool WriteChunk(std::string_view data) override {
    response_.body.append(data);
    return true;
  }
  bool ClientGone() override { return false; }
  bool WaitClientGone(int) override { return false; }
  bool Responded() const override { return responded_; }

  ApiResponse Take() { return std::move(response_); }

 private:
  void Head(int code, const apiserver::Headers& headers) {
    response_.code = code;
    for (const auto& [name, value] : headers) {
      if (LowerAscii(name) == "content-type") response_.content_type = value;
      if (LowerAscii(name) == "warning") response_.warnings.push_back(value);
    }
    responded_ = true;
  }

  ApiResponse response_;
  bool responded_ = false;
};

// Forwards a streamed response to a StreamSink; the client is gone once the
// sink is cancelled or has asked to stop.
class SinkResponder : public apiserver::Responder {
 public:
  explicit SinkResponder(StreamSink& sink) : sink_(sink) {}

  void Respond(int code, const apiserver::Headers&, std::string body) override {
    responded_ = true;
    if (!Is2xx(code)) return sink_.OnHead(code, std::move(body));
    sink_.OnHead(code, "");
    if (!body.empty()) WriteChunk(body);
  }
  bool StartStream(int code, const apiserver::Headers&) override {
    responded_ = true;
    sink_.OnHead(code, "");
    stopped_ = !Is2xx(code);  // a stream that is an error has no body we could decode
    return !ClientGone();
  }
  bool WriteChunk(std::string_view data) override {
    if (ClientGone()) return false;
    stopped_ = !sink_.OnData(data);
    return !stopped_;
  }
  bool ClientGone() override { return stopped_ || sink_.Cancelled(); }
  bool WaitClientGone(int millis) override { return stopped_ || sink_.WaitCancelled(millis); }
  // The consumer's Stop() cancels the sink, which calls its canceller.
  void NotifyWhenGone(std::function<void()> wake) override { sink_.SetCanceller(std::move(wake)); }
  bool Responded() const override { return responded_; }

 private:
  StreamSink& sink_;
  bool responded_ = false;
  bool stopped_ = false;
};

// A stream answered in process: the server's ChunkStream and the client's
// StreamCall at once. The server's threads queue chunks; they reach the sink
// on the shared loop, one drain at a time. A consumer more than
// kMaxQueuedBytes behind is cut off, as the HTTPS server cuts off a slow
// peer: the queue is dropped and the stream ends cleanly, so a watch
// resumes from its last resourceVersion.
class LoopStream : public apiserver::ChunkStream,
                   public StreamCall,
                   public std::enable_shared_from_this<LoopStream> {
 public:
  static constexpr size_t kMaxQueuedBytes = 16 << 20;

  explicit LoopStream(std::shared_ptr<AsyncStreamSink> sink) : sink_(std::move(sink)) {}

  // The sink's OnHead, on the calling thread, before any chunk.
  void Head(int code, std::string error_body) { sink_->OnHead(code, std::move(error_body)); }

  // Ends the stream with `status` (before a head: the watch fails to start).
  void Fail(Status status) {
    MutexLock lock(mu_);
    failure_ = std::move(status);
    ending_ = true;
    ScheduleLocked();
  }

  bool Cancelled() const {
    MutexLock lock(mu_);
    return cancelled_;
  }

  bool Write(std::string chunk) override { return WriteWatchLines(std::move(chunk), {}); }

  bool TakesObjects() const override { return true; }

  bool WriteWatchLines(std::string chunk,
                       std::vector<std::shared_ptr<const json::object>> objects) override {
    MutexLock lock(mu_);
    if (ending_) return false;
    queued_bytes_ += chunk.size();
    if (queued_bytes_ > kMaxQueuedBytes) {
      queue_.clear();
      ending_ = true;
      ScheduleLocked();
      return false;
    }
    queue_.push_back(Piece{std::move(chunk), std::move(objects)});
    ScheduleLocked();
    return true;
  }

  void End() override {
    MutexLock lock(mu_);
    ending_ = true;
    ScheduleLocked();
  }

  void OnEnd(std::function<void()> fn) override {
    MutexLock lock(mu_);
    if (!finished_) {
      on_end_ = std::move(fn);
      return;
    }
    lock.Unlock();
    fn();
  }

  // Ends the stream before it returns, the server's session included (a
  // member stops its informers, then its API server), unless called from
  // the sink while it is fed: then the drain ends it on return.
  void Cancel() override {
    MutexLock lock(mu_);
    cancelled_ = true;
    ending_ = true;
    queue_.clear();
    if (!draining_ && !finished_) {
      draining_ = true;
      drainer_ = std::this_thread::get_id();
      lock.Unlock();
      Finish();
      return;
    }
    if (drainer_ == std::this_thread::get_id()) return;
    ScopedBlocking blocking;
    done_cv_.Wait(lock, [&]() REQUIRES(mu_) { return done_; });
  }

 private:
  void ScheduleLocked() REQUIRES(mu_) {
    if (draining_ || finished_) return;
    draining_ = true;
    // On the pool thread that wrote (a watcher's delivery) once its task
    // returns, without waking the loop; else on the loop.
    std::function<void()> drain = [self = shared_from_this()] { self->Drain(); };
    if (!SharedBlockingPool().TryDefer(drain))
      boost::asio::post(SharedIoContext(), std::move(drain));
  }

  void Drain() {
    while (true) {
      std::deque<Piece> chunks;
      {
        MutexLock lock(mu_);
        drainer_ = std::this_thread::get_id();
        chunks.swap(queue_);
        queued_bytes_ = 0;
        if (chunks.empty()) {
          if (ending_) break;
          draining_ = false;
          drainer_ = std::thread::id();
          return;
        }
      }
      for (const Piece& chunk : chunks) {
        bool more = chunk.objects.empty() ? sink_->OnData(chunk.data)
                                          : sink_->OnWatchLines(chunk.data, chunk.objects);
        if (more && !Cancelled()) continue;
        Cancel();
        break;
      }
    }
    Finish();
  }

  void Finish() {
    std::function<void()> on_end;
    Status status;
    {
      MutexLock lock(mu_);
      finished_ = true;
      on_end = std::move(on_end_);
      status = failure_;
    }
    sink_->OnEnd(status);
    if (on_end) on_end();
    MutexLock lock(mu_);
    done_ = true;
    drainer_ = std::thread::id();
    done_cv_.NotifyAll();
  }

  // A chunk of the body; for watch lines, their objects (WriteWatchLines).
  struct Piece {
    std::string data;
    std::vector<std::shared_ptr<const json::object>> objects;
  };

  const std::shared_ptr<AsyncStreamSink> sink_;
  mutable Mutex mu_;
  std::deque<Piece> queue_ GUARDED_BY(mu_);
  size_t queued_bytes_ GUARDED_BY(mu_) = 0;
  bool ending_ GUARDED_BY(mu_) = false;  // no more chunks are taken
  bool cancelled_ GUARDED_BY(mu_) = false;
  bool draining_ GUARDED_BY(mu_) = false;  // a Drain is posted or running
  bool finished_ GUARDED_BY(mu_) = false;  // OnEnd delivered or under way
  bool done_ GUARDED_BY(mu_) = false;      // Finish returned
  CondVar done_cv_;
  std::thread::id drainer_ GUARDED_BY(mu_);  // the thread draining or finishing
  Status failure_ GUARDED_BY(mu_);
  std::function<void()> on_end_ GUARDED_BY(mu_);
};

// Answers a streamed request into a LoopStream.
class LoopResponder : public apiserver::Responder {
 public:
  explicit LoopResponder(std::shared_ptr<LoopStream> stream) : stream_(std::move(stream)) {}

  void Respond(int code, const apiserver::Headers&, std::string body) override {
    responded_ = true;
    if (!Is2xx(code)) {
      stream_->Head(code, std::move(body));
    } else {
      stream_->Head(code, "");
      if (!body.empty()) stream_->Write(std::move(body));
    }
    stream_->End();
  }
  // Synchronous streams would hold the caller's thread for their life.
  bool StartStream(int, const apiserver::Headers&) override {
    responded_ = true;
    stream_->Fail(Status::Internal("the in-process client takes only asynchronous streams"));
    return false;
  }
  std::shared_ptr<apiserver::ChunkStream> StartAsyncStream(int code,
                                                           const apiserver::Headers&) override {
    responded_ = true;
    stream_->Head(code, "");
    return stream_;
  }
  bool WriteChunk(std::string_view) override { return false; }
  bool ClientGone() override { return stream_->Cancelled(); }
  bool WaitClientGone(int) override { return stream_->Cancelled(); }
  bool Responded() const override { return responded_; }

 private:
  const std::shared_ptr<LoopStream> stream_;
  bool responded_ = false;
};

class InProcessTransport : public Transport {
 public:
  InProcessTransport(apiserver::ApiServer& server, std::string token, std::string user_agent)
      : server_(server), token_(std::move(token)), user_agent_(std::move(user_agent)) {}

  StatusOr<ApiResponse> Do(const ApiRequest& req) override {
    apiserver::Request request = MakeRequest(req);
    BufferResponder responder;
    server_.Handle(request, responder);
    if (!responder.Responded()) return Status::Internal("the server did not respond");
    return responder.Take();
  }

  Status Stream(const ApiRequest& req, StreamSink& sink) override {
    apiserver::Request request = MakeRequest(req);
    SinkResponder responder(sink);
    server_.Handle(request, responder);
    if (!responder.Responded()) return Status::Internal("the server did not respond");
    return Status::Ok();
  }

  std::shared_ptr<StreamCall> StartStream(const ApiRequest& req,
                                          std::shared_ptr<AsyncStreamSink> sink) override {
    auto stream = std::make_shared<LoopStream>(std::move(sink));
    apiserver::Request request = MakeRequest(req);
    LoopResponder responder(stream);
    server_.Handle(request, responder);
    if (!responder.Responded()) stream->Fail(Status::Internal("the server did not respond"));
    return stream;
  }

 private:
  // The request as the HTTP server would parse it from the REST client.
  apiserver::Request MakeRequest(const ApiRequest& req) const {
    apiserver::Request r;
    r.method = req.method;
    r.target = req.Target();
    apiserver::SplitTarget(r.target, &r.path, &r.query);
    r.headers["accept"] = "application/json";
    r.headers["user-agent"] = user_agent_;
    if (!req.content_type.empty()) r.headers["content-type"] = req.content_type;
    if (!token_.empty()) r.headers["authorization"] = "Bearer " + token_;
    // As the HTTPS server reads them: lower-cased, a repeated name joined by ','.
    for (const auto& [name, value] : req.headers) r.headers.erase(LowerAscii(name));
    for (const auto& [name, value] : req.headers) {
      auto [it, inserted] = r.headers.emplace(LowerAscii(name), value);
      if (!inserted) it->second += "," + value;
    }
    r.body = req.body;
    r.remote = "in-process";
    return r;
  }

  apiserver::ApiServer& server_;
  const std::string token_;
  const std::string user_agent_;
};

}  // namespace

std::unique_ptr<Client> NewInProcessClient(apiserver::ApiServer& server, const std::string& token,
                                           const std::string& user_agent) {
  return NewTransportClient(std::make_shared<InProcessTransport>(server, token, user_agent));
}

}  // namespace flotilla::client
