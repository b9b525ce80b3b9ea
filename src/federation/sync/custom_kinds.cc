// Custom kinds federated (custom_kinds.h).
#include "federation/sync/custom_kinds.h"

#include <spdlog/spdlog.h>

#include "api/conditions.h"
#include "api/views.h"
#include "client/resources.h"

namespace flotilla::federation::sync {
namespace {

constexpr char kEstablished[] = "Established";

// The version federated: the storage version when served, else the first
// served one; null when none is served.
const json::object* FederatedVersion(const json::object& spec) {
  const json::array* versions = GetArray(spec, "versions");
  if (versions == nullptr) return nullptr;
  const json::object* first = nullptr;
  for (const json::value& v : *versions) {
    if (!v.is_object() || !GetBool(v.get_object(), "served").value_or(false)) continue;
    if (GetBool(v.get_object(), "storage").value_or(false)) return &v.get_object();
    if (first == nullptr) first = &v.get_object();
  }
  return first;
}

// The resource of a definition's kind, with any version: how the
// members' informers on it are found.
client::ResourceRef AnyVersion(const json::object& crd) {
  return {std::string(StringViewAt(crd, "spec.group")), "",
          std::string(StringViewAt(crd, "spec.names.plural")), true};
}

}  // namespace

std::optional<SyncKind> KindOf(const json::object& crd) {
  if (!api::ConditionTrue(crd, kEstablished)) return std::nullopt;
  const json::object* spec = GetObject(crd, "spec");
  if (spec == nullptr) return std::nullopt;
  const json::object* version = FederatedVersion(*spec);
  std::string_view kind = StringViewAt(*spec, "names.kind");
  client::ResourceRef resource = AnyVersion(crd);
  if (version == nullptr || kind.empty() || resource.group.empty() || resource.resource.empty()) {
    return std::nullopt;
  }
  resource.version = StringViewAt(*version, "name");
  resource.namespaced = StringViewAt(*spec, "scope") != "Cluster";
  SyncKind out = WholeKind(std::move(resource), std::string(kind));
  out.status_subresource = Find(*version, "subresources.status") != nullptr;
  return out;
}

CustomKinds::CustomKinds(FederationContext& ctx, SyncController& sync)
    : ctx_(ctx), sync_(sync), crds_(ctx.informers().For(client::kCustomResourceDefinitions)) {
  runtime::Controller& controller = ctx.manager().AddController(
      "custom-kinds", 1, [this](const std::string& name) { return Reconcile(name); });
  crds_.AddEventHandler(controller.EnqueueHandler());
  ctx.members().AddHandler(client::kCustomResourceDefinitions,
                           [this](const std::string& cluster) { return MemberHandler(cluster); });
}

StatusOr<runtime::Result> CustomKinds::Reconcile(const std::string& name) {
  runtime::ObjectPtr crd = crds_.cache().Get(name);
  std::optional<SyncKind> kind = crd == nullptr ? std::nullopt : KindOf(*crd);
  if (auto it = federated_.find(name); it != federated_.end()) {
    const SyncKind& now = it->second;
    bool same = kind.has_value() && kind->kind == now.kind &&
                kind->resource.version == now.resource.version &&
                kind->resource.namespaced == now.resource.namespaced &&
                kind->status_subresource == now.status_subresource;
    // A definition still there that serves nothing keeps its reconciler:
    // its objects, being deleted, may still hold the federation's finalizer.
    if (crd != nullptr && !kind.has_value()) return runtime::Result{};
    if (!same) {
      sync_.RemoveKind(now.resource);
      spdlog::info("custom kinds: no longer federating {} ({}/{})", now.kind, now.resource.group,
                   now.resource.version);
      federated_.erase(it);
    }
  }
  if (kind.has_value() && !federated_.contains(name) && sync_.AddKind(*kind)) {
    spdlog::info("custom kinds: federating {} ({}/{})", kind->kind, kind->resource.group,
                 kind->resource.version);
    federated_.emplace(name, *kind);
  }
  // A version the definition has just started to serve may not be served
  // yet when its change is seen (the API server publishes it a moment
  // later): the federation's informer on it, which found it not served,
  // asks again until it is (and has listed), instead of after its
  // five-minute retry.
  if (kind.has_value() && federated_.contains(name)) {
    runtime::Informer& objects = ctx_.informers().For(kind->resource);
    if (!objects.HasSynced() || !objects.Served()) {
      objects.RetryNotServed();
      return runtime::Result{.requeue_after = std::chrono::seconds(1)};
    }
  }
  return runtime::Result{};
}

runtime::EventHandler CustomKinds::MemberHandler(const std::string& cluster) {
  auto established = [this, cluster](const runtime::ObjectPtr& crd) {
    if (!api::ConditionTrue(*crd, kEstablished)) return;
    std::shared_ptr<runtime::Informer> informer = ctx_.members().Get(cluster, AnyVersion(*crd));
    if (informer != nullptr) informer->RetryNotServed();
  };
  return {.on_add = established,
          .on_update = [established](const runtime::ObjectPtr&, const runtime::ObjectPtr& crd) {
            established(crd);
          }};
}

}  // namespace flotilla::federation::sync
