// Forward (forward.h).
#include "federation/cluster/forward.h"

#include <strings.h>

#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/write.hpp>
#include <optional>
#include <utility>

#include "apiserver/responses.h"
#include "base/http2.h"
#include "base/mutex.h"
#include "client/upgrade.h"

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

namespace net = boost::asio;
using boost::system::error_code;

// The bytes of two upgraded connections, both ways between them, on the
// first's strand (the second is used from there only, from here on), until
// either side closes.
class Splicer : public std::enable_shared_from_this<Splicer> {
 public:
  Splicer(SpliceEnd a, SpliceEnd b) : a_(std::move(a)), b_(std::move(b)) {}

  void Start() {
    auto ex = a_.stream->get_executor();
    std::string to_b = std::move(a_.received);
    std::string to_a = std::move(b_.received);
    net::co_spawn(ex, Copy(shared_from_this(), *a_.stream, *b_.stream, to_b), net::detached);
    net::co_spawn(ex, Copy(shared_from_this(), *b_.stream, *a_.stream, to_a), net::detached);
  }

 private:
  static net::awaitable<void> Copy(std::shared_ptr<Splicer> self, http2::TlsStream& from,
                                   http2::TlsStream& to, std::string first) {
    constexpr auto kAwait = net::as_tuple(net::use_awaitable);
    bool ok = true;
    if (!first.empty()) {
      auto [ec, n] = co_await net::async_write(to, net::buffer(first), kAwait);
      ok = !ec;
    }
    std::array<char, 16 * 1024> buf;
    while (ok) {
      auto [rec, n] = co_await from.async_read_some(net::buffer(buf), kAwait);
      if (rec) break;
      auto [wec, written] = co_await net::async_write(to, net::buffer(buf.data(), n), kAwait);
      ok = !wec;
    }
    self->Ended();
  }

  // One way has ended: both sockets are shut, which ends the other; once
  // both have, each connection is closed or given back to close.
  void Ended() {
    error_code ignored;
    a_.stream->next_layer().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    b_.stream->next_layer().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    if (++ended_ < 2) return;
    for (SpliceEnd* end : {&a_, &b_}) {
      if (end->done) {
        std::exchange(end->done, nullptr)();
      } else {
        end->stream->next_layer().close(ignored);
      }
    }
  }

  SpliceEnd a_;
  SpliceEnd b_;
  int ended_ = 0;  // on the strand
};

bool IsUpgradeHeader(std::string_view name) {
  return name == "upgrade" || name == "connection" || name.starts_with("sec-websocket-") ||
         name == "x-stream-protocol-version" || name == "origin" || name == "user-agent";
}

}  // namespace

SpliceEnd EndOf(http2::Upgraded up) {
  return {up.owner, up.stream, std::move(up.received), std::move(up.done)};
}

SpliceEnd EndOf(std::shared_ptr<client::Switched> switched) {
  http2::TlsStream* stream = &switched->stream;
  std::string received = std::move(switched->received);
  return {std::move(switched), stream, std::move(received), nullptr};
}

void Splice(SpliceEnd a, SpliceEnd b) {
  std::make_shared<Splicer>(std::move(a), std::move(b))->Start();
}

void CloseEnd(const SpliceEnd& end) {
  error_code ignored;
  end.stream->next_layer().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  if (end.done) return end.done();
  end.stream->next_layer().close(ignored);
}

void SwitchAndSplice(apiserver::Responder& resp,
                     const std::vector<std::pair<std::string, std::string>>& switched,
                     SpliceEnd other) {
  apiserver::Headers out;
  for (const auto& [name, value] : switched) {
    if (IsUpgradeHeader(name) && name != "user-agent") out.emplace_back(name, value);
  }
  auto end = std::make_shared<SpliceEnd>(std::move(other));
  bool took = resp.SwitchProtocols(
      out, [end](http2::Upgraded caller) { Splice(EndOf(std::move(caller)), std::move(*end)); });
  if (!took) {
    CloseEnd(*end);
    apiserver::RespondStatus(resp, Status::BadRequest("an upgrade request needs HTTP/1.1"));
  }
}

std::vector<std::pair<std::string, std::string>> UpgradeHeaders(
    const apiserver::HeaderMap& headers) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : headers) {
    if (IsUpgradeHeader(name)) out.emplace_back(name, value);
  }
  return out;
}

void RespondUnswitched(apiserver::Responder& resp, client::UpgradeAnswer answer) {
  apiserver::Headers out;
  for (auto& [name, value] : answer.headers) {
    if (name == "content-type" || name == "warning") out.emplace_back(name, std::move(value));
  }
  resp.Respond(answer.code, out, std::move(answer.body));
}

void ForwardUpgrade(const client::RestConfig& config, const std::string& method,
                    const std::string& path,
                    const std::vector<std::pair<std::string, std::string>>& headers,
                    Duration timeout, apiserver::Responder& resp,
                    const std::function<void(const Status&)>& unreachable) {
  auto answer = client::OpenUpgrade(config, method, path, headers, timeout);
  if (!answer.ok()) return unreachable(answer.status());
  if (!answer->switched) return RespondUnswitched(resp, std::move(*answer));
  auto member = std::make_shared<client::Switched>(std::move(*answer->switched));
  SwitchAndSplice(resp, answer->headers, EndOf(std::move(member)));
}

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
