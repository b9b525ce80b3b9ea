// The REST transport (rest_client.h): requests over pooled HTTPS
// connections, with client-side rate limiting, timeouts and retries.
#include "client/rest_client.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>

#include "base/io.h"
#include "base/token_bucket.h"
#include "client/connection_pool.h"
#include "client/endpoint.h"
#include "client/h2_connection.h"
#include "client/https_stream.h"
#include "client/transport.h"

namespace flotilla::client {
namespace {

constexpr size_t kStreamBuffer = 64 * 1024;

// One attempt's outcome and what it says about trying again.
struct Attempt {
  StatusOr<ApiResponse> response = Status::Internal("no attempt made");
  bool sent = false;        // the request may have reached the server
  bool retryable = true;    // for failures: another attempt may succeed
  std::string retry_after;  // the Retry-After header
};

// Retry-After in seconds; nullopt when absent or an HTTP date.
std::optional<Duration> ParseRetryAfter(const std::string& value) {
  if (value.empty()) return std::nullopt;
  char* end = nullptr;
  long seconds = std::strtol(value.c_str(), &end, 10);
  if (end == value.c_str() || *end != '\0' || seconds < 0) return std::nullopt;
  return std::chrono::seconds(seconds);
}

// Collects a whole HTTP/2 response for Do; the caller waits for it.
class CollectExchange : public H2Exchange {
 public:
  explicit CollectExchange(size_t max_bytes) : max_bytes_(max_bytes) {}

  void OnHeaders(int code, std::vector<std::pair<std::string, std::string>> headers) override {
    MutexLock lock(mu_);
    response_.code = code;
    for (auto& [name, value] : headers) {
      if (name == "content-type") {
        response_.content_type = std::move(value);
      } else if (name == "warning") {
        response_.warnings.push_back(std::move(value));
      } else if (name == "retry-after") {
        retry_after_ = std::move(value);
      }
    }
  }

  bool OnData(std::string_view data) override {
    MutexLock lock(mu_);
    if (response_.body.size() + data.size() > max_bytes_) {
      too_large_ = true;
      return false;
    }
    response_.body.append(data);
    return true;
  }

  void OnClose(Status status, bool sent, bool retryable) override {
    MutexLock lock(mu_);
    done_ = true;
    status_ = std::move(status);
    sent_ = sent;
    retryable_ = retryable;
    cv_.NotifyAll();
  }

  // Waits for the exchange to end.
  Attempt Wait() {
    MutexLock lock(mu_);
    {
      ScopedBlocking blocking;
      cv_.Wait(lock, [&]() REQUIRES(mu_) { return done_; });
    }
    Attempt result;
    result.sent = sent_;
    result.retryable = retryable_;
    result.retry_after = retry_after_;
    if (too_large_) {
      result.response = Status::Unavailable("reading the response: body limit exceeded");
      result.retryable = false;
    } else if (!status_.ok()) {
      result.response = status_;
    } else {
      result.response = std::move(response_);
    }
    return result;
  }

 private:
  const size_t max_bytes_;
  Mutex mu_;
  CondVar cv_;
  ApiResponse response_ GUARDED_BY(mu_);
  std::string retry_after_ GUARDED_BY(mu_);
  bool too_large_ GUARDED_BY(mu_) = false;
  bool done_ GUARDED_BY(mu_) = false;
  Status status_ GUARDED_BY(mu_);
  bool sent_ GUARDED_BY(mu_) = false;
  bool retryable_ GUARDED_BY(mu_) = true;
};

// A stream's response over HTTP/2, passed to an AsyncStreamSink as the
// HTTP/1.1 stream passes it: an error's body whole to OnHead, and a stream
// that ends once its head has come, however it ends, ends normally (the
// server cut it off or went away; a watch resumes from there).
class SinkExchange : public H2Exchange {
 public:
  SinkExchange(std::shared_ptr<AsyncStreamSink> sink, std::function<Status(const Status&)> describe)
      : sink_(std::move(sink)), describe_(std::move(describe)) {}

  void OnHeaders(int code, std::vector<std::pair<std::string, std::string>> headers) override {
    code_ = code;
    sink_->OnHeaders(std::move(headers));
    if (Is2xx(code)) sink_->OnHead(code, "");
  }

  bool OnData(std::string_view data) override {
    if (Is2xx(code_)) return sink_->OnData(data);
    error_body_.append(data.substr(0, kMaxErrorBody - std::min(kMaxErrorBody, error_body_.size())));
    return true;
  }

  void OnClose(Status status, bool, bool) override {
    if (code_ != 0 && !Is2xx(code_)) sink_->OnHead(code_, std::move(error_body_));
    if (code_ != 0) status = Status::Ok();
    sink_->OnEnd(status.ok() ? std::move(status) : describe_(status));
  }

 private:
  const std::shared_ptr<AsyncStreamSink> sink_;
  const std::function<Status(const Status&)> describe_;
  int code_ = 0;  // on the connection's strand
  std::string error_body_;
};

// A digest of what a TLS handshake presents and trusts beyond the
// endpoint (SharedH2Pool): the CA, the client certificate and its key.
std::string TlsIdentity(const RestConfig& config) {
  std::string material = config.ca_pem;
  material += '\0';
  material += config.client_cert_pem;
  material += '\0';
  material += config.client_key_pem;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(material.data(), material.size(), digest, &size, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

class RestTransport : public Transport {
 public:
  RestTransport(std::shared_ptr<boost::asio::ssl::context> ctx, Endpoint ep,
                const RestConfig& config, const RestOptions& opts)
      : opts_(opts),
        clock_(opts.clock != nullptr ? *opts.clock : RealClock()),
        endpoint_(ep),
        token_(config.token),
        limiter_(opts.qps, opts.burst, clock_),
        tls_(ctx),
        pool_(ctx, ep, opts.max_idle_connections, opts.idle_timeout, clock_),
        tunnelled_(config.tunnel != nullptr) {
    if (tunnelled_) {
      h2_ = std::make_shared<H2Pool>(config.tunnel);
    } else if (opts.http2) {
      h2_ = SharedH2Pool(TlsIdentity(config), std::move(ctx), ep);
    }
  }

  StatusOr<ApiResponse> Do(const ApiRequest& req) override {
    for (int attempt = 0;; ++attempt) {
      limiter_.Wait();
      std::optional<Attempt> over_h2 = OnceH2(req);
      Attempt result = over_h2 ? std::move(*over_h2) : Once(req);
      std::optional<Duration> delay;
      if (attempt < opts_.max_retries) delay = RetryDelay(req, result, attempt);
      if (!delay) return std::move(result.response);
      clock_.SleepUntil(clock_.Now() + *delay);
    }
  }

  Status Stream(const ApiRequest& req, StreamSink& sink) override;

  std::shared_ptr<StreamCall> StartStream(const ApiRequest& req,
                                          std::shared_ptr<AsyncStreamSink> sink) override {
    limiter_.Wait();
    // The stream may outlive this transport.
    auto describe = [prefix = FailurePrefix(req)](const Status& s) {
      return Status(s.reason(), prefix + s.message());
    };
    if (h2_) {
      auto exchange = std::make_shared<SinkExchange>(sink, describe);
      if (auto call = h2_->Start(MakeH2Request(req), exchange, opts_.timeout, false)) return call;
    }
    HttpsStreamParams params;
    params.tls = tls_;
    params.endpoint = endpoint_;
    params.request = MakeHttpRequest(req);
    params.head_timeout = opts_.timeout;
    params.describe = std::move(describe);
    return StartHttpsStream(std::move(params), std::move(sink));
  }

 private:
  Attempt Once(const ApiRequest& req);
  // One attempt over HTTP/2; nullopt when the server does not speak it.
  std::optional<Attempt> OnceH2(const ApiRequest& req);
  H2Request MakeH2Request(const ApiRequest& req) const;
  std::optional<Duration> RetryDelay(const ApiRequest& req, const Attempt& result,
                                     int attempt) const;
  http::request<http::string_body> MakeHttpRequest(const ApiRequest& req) const;
  // The transport's timeout, or a longer timeoutSeconds that a call (not a
  // watch, whose timeout covers only its head) carries.
  Duration TimeoutOf(const ApiRequest& req) const;
  Deadline NewDeadline(const ApiRequest& req) const;
  // How a failure of `req` is named: `Get "https://host/path": `.
  std::string FailurePrefix(const ApiRequest& req) const;
  Status Failure(const ApiRequest& req, const Status& s) const;
  // Reads the body of a streamed response into `consume` until it ends or
  // `consume` returns false.
  Status Pump(Connection& conn, http::response_parser<http::buffer_body>& parser, Deadline deadline,
              const std::function<bool(std::string_view)>& consume);

  const RestOptions opts_;
  Clock& clock_;
  const Endpoint endpoint_;
  const std::string token_;
  TokenBucket limiter_;
  const std::shared_ptr<boost::asio::ssl::context> tls_;
  ConnectionPool pool_;
  // When opts.http2 (shared by the transports of the process that are the
  // same TLS client of the same server) or tunnelled.
  std::shared_ptr<H2Pool> h2_;
  const bool tunnelled_;  // every request over the tunnel's HTTP/2
};

Duration RestTransport::TimeoutOf(const ApiRequest& req) const {
  if (opts_.timeout <= Duration::zero()) return opts_.timeout;
  Duration timeout = opts_.timeout;
  bool watch = false;
  int64_t seconds = 0;
  for (const auto& [name, value] : req.query) {
    if (name == "watch") watch = value == "true" || value == "1";
    if (name == "timeoutSeconds") seconds = std::strtoll(value.c_str(), nullptr, 10);
  }
  if (!watch) timeout = std::max<Duration>(timeout, std::chrono::seconds(seconds));
  return timeout;
}

Deadline RestTransport::NewDeadline(const ApiRequest& req) const {
  Duration timeout = TimeoutOf(req);
  if (timeout <= Duration::zero()) return std::nullopt;
  return clock_.Now() + timeout;
}

std::string RestTransport::FailurePrefix(const ApiRequest& req) const {
  std::string method = req.method;
  for (size_t i = 1; i < method.size(); ++i) {
    method[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(method[i])));
  }
  return method + " \"" + endpoint_.origin + endpoint_.path_prefix + req.Target() + "\": ";
}

Status RestTransport::Failure(const ApiRequest& req, const Status& s) const {
  return Status(s.reason(), FailurePrefix(req) + s.message());
}

http::request<http::string_body> RestTransport::MakeHttpRequest(const ApiRequest& req) const {
  http::request<http::string_body> r;
  r.method_string(req.method);
  r.target(endpoint_.path_prefix + req.Target());
  r.version(11);
  r.set(http::field::host, endpoint_.host_header);
  r.set(http::field::user_agent, opts_.user_agent);
  r.set(http::field::accept, "application/json");
  if (!token_.empty()) r.set(http::field::authorization, "Bearer " + token_);
  if (!req.content_type.empty()) r.set(http::field::content_type, req.content_type);
  for (const auto& [name, value] : req.headers) r.erase(name);
  for (const auto& [name, value] : req.headers) r.insert(name, value);
  r.body() = req.body;
  r.keep_alive(true);
  r.prepare_payload();
  return r;
}

H2Request RestTransport::MakeH2Request(const ApiRequest& req) const {
  H2Request r;
  r.method = req.method;
  r.path = endpoint_.path_prefix + req.Target();
  r.headers = {{"user-agent", opts_.user_agent}, {"accept", "application/json"}};
  if (!token_.empty()) r.headers.emplace_back("authorization", "Bearer " + token_);
  if (!req.content_type.empty()) r.headers.emplace_back("content-type", req.content_type);
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (const auto& header : req.headers) {
    std::string name = lower(header.first);
    std::erase_if(r.headers, [&](const auto& h) { return h.first == name; });
  }
  for (const auto& [name, value] : req.headers) r.headers.emplace_back(lower(name), value);
  r.body = req.body;
  return r;
}

std::optional<Attempt> RestTransport::OnceH2(const ApiRequest& req) {
  if (!h2_) return std::nullopt;
  auto exchange = std::make_shared<CollectExchange>(opts_.max_response_bytes);
  if (!h2_->Start(MakeH2Request(req), exchange, TimeoutOf(req), true)) return std::nullopt;
  Attempt result = exchange->Wait();
  if (!result.response.ok()) result.response = Failure(req, result.response.status());
  return result;
}

Attempt RestTransport::Once(const ApiRequest& req) {
  Attempt result;
  Deadline deadline = NewDeadline(req);
  bool verify_failed = false;
  auto conn = pool_.Acquire(deadline, &verify_failed);
  if (!conn.ok()) {
    result.response = Failure(req, conn.status());
    result.retryable = !verify_failed && !conn.status().Is(Reason::kTimeout);
    return result;
  }
  result.sent = true;
  auto http_req = MakeHttpRequest(req);
  http::response_parser<http::string_body> parser;
  parser.body_limit(opts_.max_response_bytes);
  if (req.method == "HEAD") parser.skip(true);  // its Content-Length has no body behind it
  Status s = (*conn)->Write(http_req, deadline);
  if (s.ok()) s = (*conn)->Read(parser, deadline);
  if (!s.ok()) {
    result.response = Failure(req, s);
    result.retryable = !s.Is(Reason::kTimeout);
    return result;
  }
  auto& msg = parser.get();
  result.retry_after = std::string(msg[http::field::retry_after]);
  ApiResponse response{static_cast<int>(msg.result_int()), std::move(msg.body())};
  response.content_type = std::string(msg[http::field::content_type]);
  for (auto it = msg.find(http::field::warning);
       it != msg.end() && it->name() == http::field::warning; ++it) {
    response.warnings.emplace_back(it->value());
  }
  result.response = std::move(response);
  if (parser.keep_alive()) pool_.Release(std::move(*conn));
  return result;
}

std::optional<Duration> RestTransport::RetryDelay(const ApiRequest& req, const Attempt& result,
                                                  int attempt) const {
  Duration backoff = opts_.initial_backoff;
  for (int i = 0; i < attempt && backoff < opts_.max_backoff; ++i) backoff *= 2;
  backoff = std::min(backoff, opts_.max_backoff);
  bool is_get = req.method == "GET";
  if (!result.response.ok()) {
    if (!result.retryable || (result.sent && !is_get)) return std::nullopt;
    return backoff;
  }
  int code = result.response->code;
  if (code != 429 && !(code >= 500 && is_get)) return std::nullopt;
  if (auto after = ParseRetryAfter(result.retry_after)) {
    return std::min<Duration>(*after, opts_.max_retry_after);
  }
  return backoff;
}

Status RestTransport::Pump(Connection& conn, http::response_parser<http::buffer_body>& parser,
                           Deadline deadline,
                           const std::function<bool(std::string_view)>& consume) {
  std::vector<char> buf(kStreamBuffer);
  while (!parser.is_done()) {
    parser.get().body().data = buf.data();
    parser.get().body().size = buf.size();
    Status s = conn.ReadSome(parser, deadline);
    if (!s.ok()) return s;
    size_t n = buf.size() - parser.get().body().size;
    if (n > 0 && !consume(std::string_view(buf.data(), n))) return Status::Ok();
  }
  return Status::Ok();
}

Status RestTransport::Stream(const ApiRequest& req, StreamSink& sink) {
  if (tunnelled_) {
    return Failure(req, Status::Unavailable("a synchronous stream does not go through a tunnel"));
  }
  limiter_.Wait();
  Deadline deadline = NewDeadline(req);
  bool verify_failed = false;
  auto conn = pool_.Acquire(deadline, &verify_failed);
  if (!conn.ok()) return Failure(req, conn.status());
  Connection& c = **conn;
  sink.SetCanceller([&c] { c.Abort(); });
  struct ClearCanceller {
    StreamSink& sink;
    ~ClearCanceller() { sink.SetCanceller(nullptr); }
  } clear{sink};
  auto http_req = MakeHttpRequest(req);
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  Status s = c.Write(http_req, deadline);
  if (s.ok()) s = c.ReadHeader(parser, deadline);
  if (!s.ok()) return sink.Cancelled() ? Status::Ok() : Failure(req, s);
  int code = static_cast<int>(parser.get().result_int());
  if (!Is2xx(code)) {
    std::string body;
    s = Pump(c, parser, deadline, [&body](std::string_view data) {
      body.append(data.substr(0, kMaxErrorBody - body.size()));
      return body.size() < kMaxErrorBody;
    });
    if (!s.ok()) return Failure(req, s);
    sink.OnHead(code, std::move(body));
    return Status::Ok();
  }
  sink.OnHead(code, "");
  s = Pump(c, parser, std::nullopt, [&sink](std::string_view data) { return sink.OnData(data); });
  // As client-go: a stream the server closes, even mid-event, ends normally.
  if (sink.Cancelled() || c.ClosedByPeer()) return Status::Ok();
  return s.ok() ? s : Failure(req, s);
}

}  // namespace

StatusOr<std::shared_ptr<Transport>> NewRestTransport(const RestConfig& config,
                                                      const RestOptions& opts) {
  FLOTILLA_ASSIGN_OR_RETURN(Endpoint ep, ParseEndpoint(config));
  // A tunnel is TLS already, from its other end: no context of our own
  // (one with no CA would load the system's trust store, about 1 MiB).
  std::shared_ptr<boost::asio::ssl::context> ctx;
  if (config.tunnel == nullptr) {
    FLOTILLA_ASSIGN_OR_RETURN(ctx, MakeTlsContext(config));
  }
  return std::shared_ptr<Transport>(
      std::make_shared<RestTransport>(std::move(ctx), std::move(ep), config, opts));
}

StatusOr<std::unique_ptr<Client>> NewRestClient(const RestConfig& config, const RestOptions& opts) {
  FLOTILLA_ASSIGN_OR_RETURN(auto transport, NewRestTransport(config, opts));
  return NewTransportClient(std::move(transport));
}

}  // namespace flotilla::client
