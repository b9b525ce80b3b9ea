// The in-process transport (in_process_client.h): ApiRequests become
// apiserver::Requests parsed from the same target the REST client sends,
// answered by ApiServer::Handle into in-memory Responders.
#include "client/in_process_client.h"

#include <utility>

#include "apiserver/url.h"
#include "client/transport.h"

namespace flotilla::client {
namespace {

bool Is2xx(int code) { return code >= 200 && code < 300; }

// Collects a whole response. Used for everything but watches, so the client
// never goes away mid-response.
class BufferResponder : public apiserver::Responder {
 public:
  void Respond(int code, const apiserver::Headers&, std::string body) override {
    response_.code = code;
    response_.body = std::move(body);
    responded_ = true;
  }
  bool StartStream(int code, const apiserver::Headers&) override {
    response_.code = code;
    responded_ = true;
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

class InProcessTransport : public Transport {
 public:
  InProcessTransport(apiserver::ApiServer& server, std::string token)
      : server_(server), token_(std::move(token)) {}

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

 private:
  // The request as the HTTP server would parse it from the REST client.
  apiserver::Request MakeRequest(const ApiRequest& req) const {
    apiserver::Request r;
    r.method = req.method;
    r.target = req.Target();
    apiserver::SplitTarget(r.target, &r.path, &r.query);
    r.headers["accept"] = "application/json";
    r.headers["user-agent"] = "flotilla (in-process)";
    if (!req.content_type.empty()) r.headers["content-type"] = req.content_type;
    if (!token_.empty()) r.headers["authorization"] = "Bearer " + token_;
    r.body = req.body;
    r.remote = "in-process";
    return r;
  }

  apiserver::ApiServer& server_;
  const std::string token_;
};

}  // namespace

std::unique_ptr<Client> NewInProcessClient(apiserver::ApiServer& server, const std::string& token) {
  return NewTransportClient(std::make_shared<InProcessTransport>(server, token));
}

}  // namespace flotilla::client
