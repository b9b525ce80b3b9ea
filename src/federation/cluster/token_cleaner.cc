// Expired bootstrap tokens deleted (token_cleaner.h).
#include "federation/cluster/token_cleaner.h"

#include "api/views.h"
#include "apiserver/bootstrap_token.h"
#include "base/log.h"
#include "federation/common/federated_kind.h"
#include "federation/common/names.h"

namespace flotilla::federation::cluster {

TokenCleaner::TokenCleaner(FederationContext& ctx)
    : ctx_(ctx),
      secrets_(ctx.fed(), kSecrets, ctx.clock(),
               runtime::InformerOptions{
                   .ns = std::string(apiserver::kBootstrapTokenNamespace),
                   .field_selector = "type=" + std::string(apiserver::kBootstrapTokenSecretType)}) {
  controller_ = &ctx.manager().AddController(
      kName, 1, [this](const std::string& key) { return Reconcile(key); });
  auto changed = [this](const runtime::ObjectPtr& secret) {
    controller_->queue().Add(runtime::ObjectKey(*secret));
  };
  secrets_.AddEventHandler(runtime::EventHandler{
      .on_add = changed,
      .on_update = [changed](const runtime::ObjectPtr&, const runtime::ObjectPtr& secret) {
        changed(secret);
      }});
  ctx.manager().AddInformer(&secrets_);
}

StatusOr<runtime::Result> TokenCleaner::Reconcile(const std::string& key) {
  runtime::ObjectPtr secret = secrets_.cache().Get(key);
  if (secret == nullptr) return runtime::Result{};
  std::optional<TimePoint> expiration = apiserver::BootstrapTokenExpiration(*secret);
  if (!expiration) return runtime::Result{};
  TimePoint now = ctx_.clock().Now();
  if (now < *expiration) return runtime::Result{.requeue_after = *expiration - now};
  api::ObjectView view(*secret);
  Status deleted = ctx_.fed().Delete(kSecrets, std::string(view.ns()), std::string(view.name()),
                                     {.precondition_uid = std::string(view.uid())});
  // Gone already, or a new Secret of the name: its own events bring it.
  if (deleted.ok() || deleted.Is(Reason::kNotFound) || deleted.Is(Reason::kConflict)) {
    if (deleted.ok()) spdlog::info("bootstrap token Secret {} expired: deleted", key);
    return runtime::Result{};
  }
  return deleted;
}

}  // namespace flotilla::federation::cluster

namespace flotilla::federation {

void RegisterTokenCleaner(KindRegistry& kinds) {
  kinds.Add({.controller = cluster::TokenCleaner::kName,
             .help = "deletes bootstrap tokens (register-token) once they expire",
             .build = [](const KindEnv& env) {
               return std::make_shared<cluster::TokenCleaner>(env.ctx);
             }});
}

}  // namespace flotilla::federation
