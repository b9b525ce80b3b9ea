// Helpers for the tests of the federation's controllers: a member API
// server is a client::testing::TestCluster (Stop makes an outage, Restart
// brings it back on the same address).
#pragma once

#include <gtest/gtest.h>

#include <atomic>

#include "client/client_test_util.h"
#include "runtime/forwarding_client.h"

namespace flotilla::federation::cluster::testing {

using MemberServer = client::testing::TestCluster;

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
