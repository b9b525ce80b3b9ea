// A member API server for the tests of this folder that can be stopped and
// started again on the same port (with the same PKI and an empty memory
// store), so that a Cluster's address stays valid across an outage.
#pragma once

#include <gtest/gtest.h>

#include <atomic>

#include "client/client_test_util.h"
#include "runtime/forwarding_client.h"

namespace flotilla::federation::cluster::testing {

class MemberServer {
 public:
  MemberServer() {
    api::RegisterFoundationKinds(registry_);
    api::RegisterMemberKinds(registry_);
    opts_.data_dir = dir_.path();
    opts_.port = 0;
    opts_.storage = "memory";
    opts_.registry = &registry_;
    opts_.schemas = &api::SchemaSet::Builtin();
    Start();
  }
  ~MemberServer() { Stop(); }

  void Stop() {
    if (server_) server_->Stop();
  }
  // Starts a new server on the port the first one got.
  void Restart() {
    Stop();
    server_.reset();
    opts_.port = port_;
    Start();
  }
  apiserver::Server& server() { return *server_; }
  client::RestConfig AdminConfig() const {
    client::RestConfig config;
    config.server = url_;
    config.ca_pem = server_->pki().ca_cert_pem;
    config.token = server_->pki().admin_token;
    return config;
  }
  std::unique_ptr<client::Client> InProcess() {
    return client::NewInProcessClient(server_->api(), server_->pki().admin_token);
  }

 private:
  void Start() {
    auto server = apiserver::Server::Start(opts_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    port_ = server_->port();
    url_ = server_->url();
  }

  client::testing::TempDir dir_;
  api::Registry registry_;
  apiserver::ServerOptions opts_;
  std::unique_ptr<apiserver::Server> server_;
  int port_ = 0;
  std::string url_;
};

// A member client whose creates of `resource` fail with Forbidden while
// `reject` is set (seed 000, [E1]).
class RejectingClient : public runtime::testing::ForwardingClient {
 public:
  RejectingClient(std::unique_ptr<client::Client> inner, std::string resource,
                  std::atomic<bool>& reject)
      : ForwardingClient(*inner),
        inner_(std::move(inner)),
        resource_(std::move(resource)),
        reject_(reject) {}
  StatusOr<json::object> Create(const client::ResourceRef& r, const std::string& ns,
                                const json::object& obj) override {
    if (reject_ && r.resource == resource_) {
      return Status::Forbidden(resource_ + " are not allowed here (test)");
    }
    return ForwardingClient::Create(r, ns, obj);
  }

 private:
  std::unique_ptr<client::Client> inner_;  // what the base forwards to
  const std::string resource_;
  std::atomic<bool>& reject_;
};

}  // namespace flotilla::federation::cluster::testing
