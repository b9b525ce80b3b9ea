// The cluster proxy (proxy.h).
#include "federation/cluster/proxy.h"

#include <strings.h>

#include <optional>
#include <utility>
#include <vector>

#include "api/views.h"
#include "apiserver/responses.h"
#include "client/rest_client.h"
#include "federation/cluster/member_access.h"
#include "federation/common/names.h"

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

// The request to the member: the caller's method, path, query, body,
// Content-Type and Accept, as the caller impersonated.
client::ApiRequest MemberRequest(apiserver::Request& req, const apiserver::ProxyTarget& target,
                                 const apiserver::UserInfo& user) {
  client::ApiRequest out;
  out.method = req.method;
  // Target() appends '?' and the query only when `query` has entries: the
  // caller's query goes through as it was encoded, in its order.
  out.path = target.query.empty() ? target.path : target.path + "?" + target.query;
  out.body = std::move(req.body);
  out.content_type = req.Header("content-type");
  std::string accept = req.Header("accept");
  if (!accept.empty()) out.headers.emplace_back("Accept", accept);
  out.headers.emplace_back("Impersonate-User", user.name);
  for (const std::string& group : user.groups) {
    if (group != "system:authenticated") out.headers.emplace_back("Impersonate-Group", group);
  }
  return out;
}

// A member the request could not reach: 503, or 504 when it did not answer
// in time.
void Unreachable(apiserver::Responder& resp, const apiserver::ProxyTarget& target,
                 const Status& failure) {
  apiserver::RespondStatus(
      resp, Status(failure.reason(),
                   "error trying to reach cluster \"" + target.name + "\": " + failure.message()));
}

}  // namespace

StatusOr<std::shared_ptr<client::Transport>> ClusterProxy::TransportFor(client::Client& federation,
                                                                        const std::string& name) {
  auto cluster = federation.Get(kClusters, "", name);
  if (!cluster.ok()) {
    if (cluster.status().Is(Reason::kNotFound)) {
      MutexLock lock(mu_);
      transports_.erase(name);  // a cluster that left keeps no pool
    }
    return cluster.status();
  }
  SecretRef ref = SecretRefOf(*cluster);
  auto secret = federation.Get(kSecrets, ref.ns, ref.name);
  if (!secret.ok()) {
    return Status::Unavailable("the credentials of cluster \"" + name +
                               "\": " + secret.status().message());
  }
  api::ObjectView view(*secret);
  std::string version = std::string(view.uid()) + "/" + std::string(view.resource_version());
  {
    MutexLock lock(mu_);
    auto it = transports_.find(name);
    if (it != transports_.end() && it->second.secret_version == version) {
      return it->second.transport;
    }
  }
  auto config = RestConfigFromSecret(*secret);
  if (!config.ok()) {
    return Status::Unavailable("the credentials of cluster \"" + name +
                               "\": " + config.status().message());
  }
  // A proxy passes the caller's request on once: no retries, no
  // client-side limit (the member's own limits answer the caller).
  client::RestOptions opts{.qps = 0, .timeout = opts_.head_timeout, .max_retries = 0};
  opts.user_agent = "flotilla-cluster-proxy";
  FLOTILLA_ASSIGN_OR_RETURN(auto transport, client::NewRestTransport(*config, opts));
  MutexLock lock(mu_);
  transports_[name] = {version, transport};
  return transport;
}

void ClusterProxy::Serve(apiserver::Request& req, const apiserver::ProxyTarget& target,
                         const apiserver::UserInfo& user, apiserver::Responder& resp) {
  client::Client* federation = federation_.load();
  if (federation == nullptr) {
    return apiserver::RespondStatus(resp, Status::Unavailable("the cluster proxy is starting"));
  }
  if (!req.Header("upgrade").empty()) {
    return apiserver::RespondStatus(
        resp, Status::BadRequest("the cluster proxy does not forward upgrade requests "
                                 "(exec, attach, port-forward)"));
  }
  auto transport = TransportFor(*federation, target.name);
  if (!transport.ok()) {
    return apiserver::RespondStatus(resp, transport.status(), target.name, target.resource);
  }
  // A watch or a followed log streams on a connection of its own; anything
  // else is one exchange over the member's kept-alive connections.
  bool streams = req.QueryBool("watch") || req.QueryBool("follow");
  if (!streams) {
    auto answer = (*transport)->Do(MemberRequest(req, target, user));
    if (!answer.ok()) return Unreachable(resp, target, answer.status());
    apiserver::Headers headers;
    if (!answer->content_type.empty()) headers.emplace_back("Content-Type", answer->content_type);
    for (std::string& w : answer->warnings) headers.emplace_back("Warning", std::move(w));
    return resp.Respond(answer->code, headers, std::move(answer->body));
  }
  auto sink = std::make_shared<ProxySink>();
  std::shared_ptr<client::StreamCall> call =
      (*transport)->StartStream(MemberRequest(req, target, user), sink);
  ProxySink::Head head = sink->AwaitHead();
  if (head.code == 0) return Unreachable(resp, target, head.failure);
  if (!client::Is2xx(head.code)) {
    return resp.Respond(head.code, head.headers, std::move(head.error_body));
  }
  std::shared_ptr<apiserver::ChunkStream> out = resp.StartAsyncStream(head.code, head.headers);
  if (out == nullptr) return call->Cancel();
  out->OnEnd([call] { call->Cancel(); });
  sink->Attach(std::move(out));
}

void ClusterProxy::ServeForPod(apiserver::Request& req, const json::object& pod,
                               const apiserver::UserInfo& user, apiserver::Responder& resp) {
  std::string_view cluster = api::ObjectView(pod).label(api::kMemberClusterLabel);
  if (cluster.empty()) {
    return apiserver::RespondStatus(resp, Status::BadRequest("the pod names no member cluster"));
  }
  apiserver::ProxyTarget target{nullptr, "", std::string(cluster), req.target, ""};
  if (size_t q = target.path.find('?'); q != std::string::npos) {
    target.query = target.path.substr(q + 1);
    target.path.resize(q);
  }
  Serve(req, target, user, resp);
}

}  // namespace flotilla::federation::cluster
