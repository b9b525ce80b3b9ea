// pods/exec and pods/attach over a WebSocket (pod_streams.h).
#include "member/kubelet/pod_streams.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <deque>
#include <memory>
#include <optional>

#include "apiserver/responses.h"
#include "base/http2.h"
#include "base/mutex.h"
#include "member/kubelet/pod_logs.h"
#include "member/kubelet/sim_process.h"

namespace flotilla::member::kubelet {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using boost::system::error_code;

constexpr auto kAwait = net::as_tuple(net::use_awaitable);

enum Channel : unsigned char {
  kStdin = 0,
  kStdout = 1,
  kStderr = 2,
  kError = 3,
  kResize = 4,
  kClose = 255,  // v5: the client ends a stream
};

// The largest message a client may send (stdin is typed or piped in small
// pieces; kube's limit is of the same order).
constexpr size_t kMaxMessage = 1 << 20;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The subprotocol to speak: v5, else v4, among those offered; "" for none.
std::string ChooseProtocol(const std::string& offered) {
  bool v4 = false;
  size_t start = 0;
  while (start <= offered.size()) {
    size_t comma = offered.find(',', start);
    if (comma == std::string::npos) comma = offered.size();
    std::string p = offered.substr(start, comma - start);
    p.erase(0, p.find_first_not_of(" \t"));
    p.erase(p.find_last_not_of(" \t") + 1);
    if (p == kStreamProtocolV5) return p;
    v4 |= p == kStreamProtocolV4;
    start = comma + 1;
  }
  return v4 ? kStreamProtocolV4 : "";
}

std::string SuccessStatus() { return R"({"metadata":{},"status":"Success"})"; }

// kube's outcome of a command that exited non-zero (remotecommand's
// NonZeroExitCode, which kubectl turns into its own exit code).
std::string ExitStatus(const std::vector<std::string>& argv, int code) {
  std::string command;
  for (const std::string& a : argv) command += (command.empty() ? "" : " ") + a;
  json::object status{
      {"metadata", json::object{}},
      {"status", "Failure"},
      {"message", "command terminated with non-zero exit code: error executing command [" +
                      command + "], exit code " + std::to_string(code)},
      {"reason", "NonZeroExitCode"},
      {"details",
       {{"causes",
         json::array{json::object{{"reason", "ExitCode"}, {"message", std::to_string(code)}}}}}}};
  return json::serialize(status);
}

std::string FailureStatus(const std::string& message) {
  json::object status{{"metadata", json::object{}},
                      {"status", "Failure"},
                      {"message", message},
                      {"reason", "InternalError"},
                      {"code", 500}};
  return json::serialize(status);
}

struct StreamOptions {
  bool in = false, out = false, err = false, tty = false;
};

// One exec or attach: a WebSocket on the taken connection's strand.
class Session : public std::enable_shared_from_this<Session> {
 public:
  // `argv`: an exec's command, for its outcome's message.
  Session(http2::Upgraded up, http::request<http::empty_body> request, std::string protocol,
          StreamOptions streams, std::vector<std::string> argv)
      : up_(std::move(up)),
        ws_(*up_.stream),
        request_(std::move(request)),
        protocol_(std::move(protocol)),
        streams_(streams),
        argv_(std::move(argv)) {}

  // exec: `process` answers; attach: `attach` starts what writes (Write),
  // and the session ends when that calls End.
  void Start(std::optional<SimProcess> process,
             std::function<void(std::shared_ptr<Session>)> attach) {
    if (process) process_.emplace(std::move(*process));
    attach_ = std::move(attach);
    net::co_spawn(ws_.get_executor(), Run(shared_from_this()), net::detached);
  }

  // Any thread: stdout bytes (attach), or the end of them.
  void Write(std::string data) {
    net::post(ws_.get_executor(), [self = shared_from_this(), data = std::move(data)]() mutable {
      self->Send(kStdout, std::move(data));
    });
  }
  void End() {
    net::post(ws_.get_executor(), [self = shared_from_this()] { self->Finish(SuccessStatus()); });
  }
  // Called once the session has ended, on its strand.
  void OnEnd(std::function<void()> fn) {
    net::post(ws_.get_executor(), [self = shared_from_this(), fn = std::move(fn)]() mutable {
      if (self->ended_) return fn();
      self->on_end_ = std::move(fn);
    });
  }

 private:
  static net::awaitable<void> Run(std::shared_ptr<Session> self) { co_await self->Serve(); }

  net::awaitable<void> Serve() {
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.set_option(websocket::stream_base::decorator([p = protocol_](websocket::response_type& r) {
      r.set(http::field::sec_websocket_protocol, p);
    }));
    ws_.read_message_max(kMaxMessage);
    ws_.binary(true);
    auto [ec] = co_await ws_.async_accept(request_, kAwait);
    if (ec) {
      Done();
      co_return;
    }
    if (process_) {
      Output(process_->Start());
      if (!streams_.in) Output(process_->EndInput());
      AfterProcess();
    } else if (attach_) {
      std::exchange(attach_, nullptr)(shared_from_this());
    }
    // Read until the client closes: its stdin, its resizes, and the
    // control frames (pings) a read answers.
    beast::flat_buffer buffer;
    while (true) {
      auto [rec, n] = co_await ws_.async_read(buffer, kAwait);
      if (rec) break;
      auto data = buffer.data();
      std::string_view msg(static_cast<const char*>(data.data()), data.size());
      if (!msg.empty()) Received(static_cast<unsigned char>(msg[0]), msg.substr(1));
      buffer.consume(buffer.size());
    }
    Done();
  }

  void Received(unsigned char channel, std::string_view data) {
    if (!process_ || process_->exited() || !streams_.in) return;
    if (channel == kStdin) {
      Output(process_->Input(data));
    } else if (channel == kClose && !data.empty() &&
               static_cast<unsigned char>(data[0]) == kStdin) {
      Output(process_->EndInput());
    }
    AfterProcess();
  }

  void Output(const ProcessOutput& out) {
    if (!out.out.empty() && streams_.out) Send(kStdout, out.out);
    if (!out.err.empty() && streams_.err) Send(kStderr, out.err);
  }

  void AfterProcess() {
    if (!process_->exited()) return;
    if (process_->failure()) return Finish(FailureStatus(*process_->failure()));
    int code = process_->exit_code();
    Finish(code == 0 ? SuccessStatus() : ExitStatus(argv_, code));
  }

  // Sends the outcome and closes.
  void Finish(std::string status) {
    if (finishing_) return;
    finishing_ = true;
    Send(kError, std::move(status));
    closing_ = true;
    Pump();
  }

  void Send(Channel channel, std::string data) {
    if (finishing_ && channel != kError) return;
    std::string frame;
    frame.reserve(data.size() + 1);
    frame += static_cast<char>(channel);
    frame += data;
    queue_.push_back(std::move(frame));
    Pump();
  }

  void Pump() {
    if (writing_ || ended_) return;
    writing_ = true;
    net::co_spawn(ws_.get_executor(), Drain(shared_from_this()), net::detached);
  }

  static net::awaitable<void> Drain(std::shared_ptr<Session> self) {
    while (!self->queue_.empty() && !self->ended_) {
      std::string frame = std::move(self->queue_.front());
      self->queue_.pop_front();
      auto [ec, n] = co_await self->ws_.async_write(net::buffer(frame), kAwait);
      if (ec) {
        self->queue_.clear();
        break;
      }
    }
    if (self->closing_ && !self->close_sent_ && !self->ended_) {
      self->close_sent_ = true;
      // The read loop takes the client's answering close and ends.
      auto [ec] = co_await self->ws_.async_close(websocket::close_code::normal, kAwait);
      (void)ec;
    }
    self->writing_ = false;
  }

  // The connection is done with: the server may close it.
  void Done() {
    if (ended_) return;
    ended_ = true;
    if (on_end_) std::exchange(on_end_, nullptr)();
    error_code ignored;
    up_.stream->next_layer().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    if (up_.done) std::exchange(up_.done, nullptr)();
  }

  http2::Upgraded up_;
  websocket::stream<http2::TlsStream&> ws_;
  http::request<http::empty_body> request_;
  const std::string protocol_;
  const StreamOptions streams_;
  const std::vector<std::string> argv_;
  // On the strand from here.
  std::optional<SimProcess> process_;
  std::function<void(std::shared_ptr<Session>)> attach_;
  std::deque<std::string> queue_;
  bool writing_ = false;
  bool finishing_ = false;
  bool closing_ = false;
  bool close_sent_ = false;
  bool ended_ = false;
  std::function<void()> on_end_;
};

// What an attach's followed log writes to: the session's stdout.
class AttachOutput : public apiserver::ChunkStream,
                     public std::enable_shared_from_this<AttachOutput> {
 public:
  explicit AttachOutput(std::shared_ptr<Session> session) : session_(std::move(session)) {}
  bool Write(std::string chunk) override {
    MutexLock lock(mu_);
    if (ended_) return false;
    session_->Write(std::move(chunk));
    return true;
  }
  void End() override {
    MutexLock lock(mu_);
    if (std::exchange(ended_, true)) return;
    session_->End();
  }
  void OnEnd(std::function<void()> fn) override {
    session_->OnEnd([self = shared_from_this(), fn = std::move(fn)] {
      {
        MutexLock lock(self->mu_);
        self->ended_ = true;
      }
      fn();
    });
  }

 private:
  const std::shared_ptr<Session> session_;
  Mutex mu_;
  bool ended_ GUARDED_BY(mu_) = false;
};

// The HTTP request beast's handshake reads: the one the client sent.
http::request<http::empty_body> HandshakeRequest(const apiserver::Request& req) {
  http::request<http::empty_body> out;
  out.method_string(req.method);
  out.target(req.target);
  out.version(11);
  for (const auto& [name, value] : req.headers) out.set(name, value);
  return out;
}

StatusOr<StreamOptions> ParseStreams(const apiserver::Request& req, bool exec) {
  StreamOptions s{req.QueryBool("stdin"), req.QueryBool("stdout"), req.QueryBool("stderr"),
                  req.QueryBool("tty")};
  if (!s.in && !s.out && !s.err) {
    return Status::BadRequest("you must specify at least 1 of stdin, stdout, stderr");
  }
  if (exec && !req.HasQuery("command")) {
    return Status::BadRequest("you must specify at least 1 command");
  }
  if (s.tty) s.err = false;  // a terminal has one output
  return s;
}

}  // namespace

void PodStreams::Serve(apiserver::Request& req, const std::string& subresource,
                       const json::object& pod, std::function<StatusOr<json::object>()> reread,
                       apiserver::Responder& resp) {
  std::string name = StringAt(pod, "metadata.name");
  if (subresource == "portforward") {
    return apiserver::RespondStatus(
        resp, Status::BadRequest("port forwarding is not served by a simulated member: its "
                                 "containers have no network stack to forward to"));
  }
  bool exec = subresource == "exec";
  std::string phase = StringAt(pod, "status.phase");
  if (phase == "Succeeded" || phase == "Failed") {
    return apiserver::RespondStatus(
        resp,
        Status::BadRequest("cannot " + subresource +
                           " into a container in a completed pod; current phase is " + phase));
  }
  auto run = RunOf(pod, req.Query("container"), false);
  if (!run.ok()) return apiserver::RespondStatus(resp, run.status(), name);
  if (run->finished) {
    return apiserver::RespondStatus(
        resp, Status::BadRequest("container " + run->container + " is not running"));
  }
  auto streams = ParseStreams(req, exec);
  if (!streams.ok()) return apiserver::RespondStatus(resp, streams.status(), name);
  std::string upgrade = Lower(req.Header("upgrade"));
  if (upgrade.empty()) {
    return apiserver::RespondStatus(resp, Status::BadRequest("Upgrade request required"));
  }
  if (upgrade != "websocket") {
    return apiserver::RespondStatus(
        resp, Status::BadRequest("unable to upgrade connection: the simulated kubelet speaks the "
                                 "WebSocket streaming protocols (" +
                                 std::string(kStreamProtocolV5) + ", " + kStreamProtocolV4 +
                                 "), not " + req.Header("upgrade")));
  }
  std::string protocol = ChooseProtocol(req.Header("sec-websocket-protocol"));
  if (protocol.empty()) {
    return apiserver::RespondStatus(
        resp, Status::BadRequest("unable to upgrade connection: none of the offered "
                                 "subprotocols is served (" +
                                 std::string(kStreamProtocolV5) + ", " + kStreamProtocolV4 +
                                 "): \"" + req.Header("sec-websocket-protocol") + "\""));
  }
  std::optional<SimProcess> process;
  std::vector<std::string> argv;
  if (exec) {
    for (auto [it, end] = req.query.equal_range("command"); it != end; ++it) {
      argv.push_back(it->second);
    }
    ProcessContext ctx{name,
                       StringAt(pod, "metadata.namespace"),
                       StringAt(pod, "status.podIP"),
                       run->node,
                       run->spec,
                       clock_.Now()};
    process.emplace(std::move(ctx), argv, streams->tty);
  }
  std::function<void(std::shared_ptr<Session>)> attach;
  if (!exec) {
    attach = [this, run = *run, reread](std::shared_ptr<Session> session) mutable {
      FollowLines(clock_, std::move(run), std::move(reread),
                  std::make_shared<AttachOutput>(std::move(session)), clock_.Now() + Duration(1));
    };
  }
  auto request = HandshakeRequest(req);
  bool taken = resp.TakeConnection([request = std::move(request), protocol, streams = *streams,
                                    process = std::move(process), attach = std::move(attach),
                                    argv = std::move(argv)](http2::Upgraded up) mutable {
    auto session = std::make_shared<Session>(std::move(up), std::move(request), protocol, streams,
                                             std::move(argv));
    session->Start(std::move(process), std::move(attach));
  });
  if (!taken) {
    apiserver::RespondStatus(
        resp, Status::BadRequest("unable to upgrade connection: an upgrade needs HTTP/1.1"));
  }
}

}  // namespace flotilla::member::kubelet
