// Forward (forward.h).
#include "federation/cluster/forward.h"

#include <strings.h>

#include <optional>
#include <utility>

#include "base/mutex.h"

namespace flotilla::federation::cluster {
namespace {

bool SameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// Carries one member response to the caller. The handler's thread waits for
// the head (AwaitHead) and answers with it; a body that is not an error then
// streams to the caller's ChunkStream (Attach) as the member sends it, on
// the transport's loop, holding no thread.
class ProxySink : public client::AsyncStreamSink {
 public:
  void OnHeaders(apiserver::Headers headers) override {
    MutexLock lock(mu_);
    for (auto& [name, value] : headers) {
      if (SameName(name, "Content-Type") || SameName(name, "Warning")) {
        headers_.emplace_back(std::move(name), std::move(value));
      }
    }
  }
  void OnHead(int code, std::string error_body) override {
    MutexLock lock(mu_);
    code_ = code;
    error_body_ = std::move(error_body);
    changed_.NotifyAll();
  }
  bool OnData(std::string_view data) override {
    MutexLock lock(mu_);
    if (out_ == nullptr) {
      pending_.append(data);
      return true;
    }
    return out_->Write(std::string(data));
  }
  void OnEnd(Status status) override {
    MutexLock lock(mu_);
    end_ = std::move(status);
    // Dropping `out_` breaks the cycle caller's stream -> call -> sink.
    if (out_ != nullptr) std::exchange(out_, nullptr)->End();
    changed_.NotifyAll();
  }

  struct Head {
    int code = 0;  // 0: the request failed before a head (`failure` says why)
    Status failure = Status::Ok();
    std::string error_body;
    apiserver::Headers headers;
  };
  Head AwaitHead() {
    MutexLock lock(mu_);
    changed_.Wait(lock, [&]() REQUIRES(mu_) { return code_ != 0 || end_.has_value(); });
    Head head;
    head.code = code_;
    if (code_ == 0) head.failure = *end_;
    head.error_body = std::move(error_body_);
    head.headers = headers_;
    return head;
  }
  // The body goes to `out` from now on, what came before first.
  void Attach(std::shared_ptr<apiserver::ChunkStream> out) {
    MutexLock lock(mu_);
    if (!pending_.empty()) out->Write(std::exchange(pending_, {}));
    if (end_.has_value()) return out->End();
    out_ = std::move(out);
  }

 private:
  Mutex mu_;
  CondVar changed_;
  int code_ GUARDED_BY(mu_) = 0;
  std::string error_body_ GUARDED_BY(mu_);
  apiserver::Headers headers_ GUARDED_BY(mu_);
  std::optional<Status> end_ GUARDED_BY(mu_);
  std::shared_ptr<apiserver::ChunkStream> out_ GUARDED_BY(mu_);
  std::string pending_ GUARDED_BY(mu_);
};

}  // namespace

void Forward(client::Transport& transport, client::ApiRequest request, bool streams,
             apiserver::Responder& resp, const std::function<void(const Status&)>& unreachable) {
  if (!streams) {
    auto answer = transport.Do(request);
    if (!answer.ok()) return unreachable(answer.status());
    apiserver::Headers headers;
    if (!answer->content_type.empty()) headers.emplace_back("Content-Type", answer->content_type);
    for (std::string& w : answer->warnings) headers.emplace_back("Warning", std::move(w));
    return resp.Respond(answer->code, headers, std::move(answer->body));
  }
  auto sink = std::make_shared<ProxySink>();
  std::shared_ptr<client::StreamCall> call = transport.StartStream(request, sink);
  ProxySink::Head head = sink->AwaitHead();
  if (head.code == 0) return unreachable(head.failure);
  if (!client::Is2xx(head.code)) {
    return resp.Respond(head.code, head.headers, std::move(head.error_body));
  }
  std::shared_ptr<apiserver::ChunkStream> out = resp.StartAsyncStream(head.code, head.headers);
  if (out == nullptr) return call->Cancel();
  out->OnEnd([call] { call->Cancel(); });
  sink->Attach(std::move(out));
}

}  // namespace flotilla::federation::cluster
