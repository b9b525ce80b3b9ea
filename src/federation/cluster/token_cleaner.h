// Expired bootstrap tokens deleted, as kube-controller-manager's
// tokencleaner deletes them: the Secrets of type bootstrap.kubernetes.io/token
// in kube-system (apiserver/bootstrap_token.h; `kubectl flotilla
// register-token create` makes them) go once their `expiration` has passed.
// One whose expiration cannot be read is taken as expired, as Kubernetes
// takes it; one without an expiration stays. Each is checked again when it
// is due, on the context's clock, and deleted with its uid as the
// precondition (a Secret made again under the name is not the one that
// expired).
//
// An expired token authenticates no one whether or not its Secret is still
// there; this keeps `register-token list` and kube-system tidy.
//
// It writes, so it runs with the other controllers, on the leader only
// (--controllers=*,-tokencleaner turns it off).
//
// Thread-safe; handlers only enqueue.
#pragma once

#include <optional>
#include <string>

#include "base/clock.h"
#include "base/json.h"
#include "base/status.h"
#include "federation/common/context.h"
#include "runtime/controller_manager.h"
#include "runtime/informer.h"

namespace flotilla::federation::cluster {

class TokenCleaner {
 public:
  static constexpr char kName[] = "tokencleaner";

  // Registers with `ctx` (which must outlive this) before it starts.
  explicit TokenCleaner(FederationContext& ctx);
  TokenCleaner(const TokenCleaner&) = delete;
  TokenCleaner& operator=(const TokenCleaner&) = delete;

 private:
  // `key` is a bootstrap token's Secret's runtime::ObjectKey.
  StatusOr<runtime::Result> Reconcile(const std::string& key);

  FederationContext& ctx_;
  runtime::Informer secrets_;
  runtime::Controller* controller_ = nullptr;
};

}  // namespace flotilla::federation::cluster
