// The registry of kinds: everything the API server knows about a resource is
// data here (DESIGN §2), so later issues add kinds by registration.
//
// A Registry is filled at start-up and read-only afterwards; reads are then
// thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::api {

struct TableColumn {
  std::string name;    // "NAME", "READY", ...
  std::string type;    // "string", "integer", "date", ...
  std::string format;  // "name" for the name column, else ""
  std::string description;
  int priority = 0;  // 1 = shown only with -o wide
  // Cell value for one object. `now` is for AGE-like columns.
  std::function<json::value(const json::object& obj, TimePoint now)> cell;
};

struct Resource {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string kind;      // "Deployment"
  std::string plural;    // "deployments"
  std::string singular;  // "deployment"
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;  // e.g. "all"
  bool has_status = false;              // status subresource
  // What a write to the status subresource takes besides status. The status
  // strategies of Kubernetes' own kinds reset spec and keep the request's
  // metadata, so a controller can record an annotation with its status in
  // one write; the metadata fields named in status_keeps_metadata stay as
  // stored (a Deployment's labels, a Pod's owner references). Custom kinds
  // take status only. MakeResource sets it for schemas under io.k8s.
  bool status_takes_metadata = false;
  std::vector<std::string> status_keeps_metadata;
  bool has_scale = false;  // scale subresource (autoscaling/v1 Scale)
  // A proxy subresource (kube's nodes/proxy): {plural}/{name}/proxy/{path}
  // is answered by connecting elsewhere (ApiServerOptions::proxy); its
  // discovery kind is {Kind}ProxyOptions.
  bool has_proxy = false;
  // The subresources an agent uses (clusters/NAME/...): `tunnel`, its POST
  // with Upgrade, answered 101 and kept as the connection to the member
  // (ApiServerOptions::tunnel; discovery kind {Kind}TunnelOptions), and
  // `register`, a bootstrap token's POST that registers the cluster and
  // answers with the agent's own token (ApiServerOptions::register_agent;
  // discovery kind authentication.k8s.io/v1 TokenRequest).
  bool has_agent = false;
  // Where the scale subresource reads and writes (dotted paths): the
  // desired and current replicas, and the label selector (a LabelSelector
  // object for built-in kinds; for custom kinds the string their CRD's
  // labelSelectorPath names; empty: none).
  std::string scale_spec_path = "spec.replicas";
  std::string scale_status_path = "status.replicas";
  std::string scale_selector_path = "spec.selector";
  // Verbs listed in discovery; the default is the full set.
  std::vector<std::string> verbs = {"create", "delete", "deletecollection", "get",
                                    "list",   "patch",  "update",           "watch"};

  // The version objects are stored in. Resources sharing group, plural and
  // storage_version share one storage (autoscaling v1/v2). Empty = `version`.
  std::string storage_version;
  // Converts an object between this resource's version and its storage
  // version (both directions, by apiVersion of the input). Null when they
  // are the same.
  std::function<StatusOr<json::object>(json::object obj, std::string_view to_version)> convert;
  // Objects may be stored at other versions than the storage version (a
  // custom kind of several versions, whose storage version may have moved):
  // each is converted to the version asked for as it is read (with
  // `convert`, which is then set for the storage version too).
  bool mixed_storage = false;

  // OpenAPI definition name, e.g. "io.k8s.api.apps.v1.Deployment".
  std::string schema_name;

  // Fills defaults in a new or updated object (spec.replicas = 1, ...).
  std::function<void(json::object& obj)> default_fn;
  // Mutating admission at create only, after defaulting and before
  // validation: what a program adds to every new object of the kind (the
  // federation's finalizer). Chained by Registry::AddCreateMutation.
  std::function<void(json::object& obj)> mutate_on_create;
  // Kind-specific validation beyond the schema; `old` is null on create.
  std::function<std::vector<StatusCause>(const json::object& obj, const json::object* old)>
      validate_fn;
  // Admission that may refuse a valid write with its own error (a quota's
  // 403), after validation: on create, update, patch, apply and the scale
  // subresource (not status); `old` is null on create. Chained by
  // Registry::AddAdmission (the first refusal wins).
  std::function<Status(const json::object& obj, const json::object* old)> admit_fn;
  // Warnings a create or update of a valid object answers with (the
  // Warning header kubectl prints), e.g. fields kept but not acted on.
  std::function<std::vector<std::string>(const json::object& obj)> warn_fn;
  std::vector<TableColumn> columns;  // every column, NAME and AGE included, in order

  // Custom kinds: the name of the CustomResourceDefinition that defines
  // them ("" for built-in kinds), and what their schema prunes: the fields
  // it does not declare are dropped and their paths appended to `unknown`
  // (the server refuses, warns or drops silently as fieldValidation says).
  // Built-in kinds are checked against their OpenAPI definitions instead.
  std::string crd;
  std::function<void(json::object& obj, std::vector<std::string>* unknown)> prune_fn;
  // Custom kinds: their OpenAPI v2 definition (published under
  // schema_name), and once served, the definitions their objects are typed
  // by (that one, ObjectMeta's and what it refers to).
  json::object schema_definition;
  std::shared_ptr<const json::object> definitions;

  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  std::string StorageVersion() const { return storage_version.empty() ? version : storage_version; }
  // Every stored object is at this version: stored bytes are served as
  // they are.
  bool StoredAsServed() const { return StorageVersion() == version && !mixed_storage; }
  // "deployments.apps" / "namespaces": how errors and storage keys name it.
  std::string GroupResource() const { return group.empty() ? plural : plural + "." + group; }
};

// Resource::validate_fn's signature.
using ValidateFn =
    std::function<std::vector<StatusCause>(const json::object& obj, const json::object* old)>;
// Resource::mutate_on_create's.
using MutateFn = std::function<void(json::object& obj)>;

class Registry {
 public:
  // REQUIRES: no resource with the same group, version and plural exists.
  void Add(Resource r);
  // This registry's resources followed by `more`, sharing them: how a
  // server adds the kinds of its CustomResourceDefinitions to its own.
  Registry Extended(const std::vector<std::shared_ptr<Resource>>& more) const;
  // Chains `fn` after the validate_fn of every registered version of
  // group/plural (the causes of both are reported), e.g. a program's own
  // admission rules on kinds registered by others. Returns how many
  // resources it was added to. REQUIRES: before the registry is shared.
  int AddValidation(std::string_view group, std::string_view plural, ValidateFn fn);
  // Chains `fn` after the admit_fn of every registered version of
  // group/plural. Returns how many resources it was added to. REQUIRES:
  // before the registry is shared.
  int AddAdmission(std::string_view group, std::string_view plural,
                   std::function<Status(const json::object&, const json::object*)> fn);
  // Chains `fn` after the mutate_on_create of every registered version of
  // group/plural. Returns how many resources it was added to. REQUIRES:
  // before the registry is shared.
  int AddCreateMutation(std::string_view group, std::string_view plural, MutateFn fn);
  // Runs `fn` on every custom kind a server of this registry serves, when
  // it is made from its CustomResourceDefinition (a program's admission
  // rules for kinds it cannot know in advance; fn chains onto validate_fn
  // or mutate_on_create with ChainValidation, ChainCreateMutation).
  // Extended registries keep them. REQUIRES: before the registry is shared.
  void AddCustomKindHook(std::function<void(Resource&)> fn);
  // Calls `fn` on every registered version of group/plural; returns how
  // many. REQUIRES: before the registry is shared.
  int ForEachVersion(std::string_view group, std::string_view plural,
                     const std::function<void(Resource&)>& fn);
  // Runs the hooks on `custom`, a custom kind being made.
  void PrepareCustomKind(Resource& custom) const;

  const Resource* Find(std::string_view group, std::string_view version,
                       std::string_view plural) const;
  // The same, sharing ownership: what may outlive this registry (a watch of
  // a custom kind whose CRD changes) holds it so.
  std::shared_ptr<const Resource> FindShared(std::string_view group, std::string_view version,
                                             std::string_view plural) const;
  const Resource* FindKind(std::string_view api_version, std::string_view kind) const;
  // Every resource, in registration order.
  const std::vector<std::shared_ptr<Resource>>& All() const { return resources_; }
  // Groups in registration order, with versions in registration order
  // (preferred version first).
  std::vector<std::pair<std::string, std::vector<std::string>>> Groups() const;

 private:
  std::vector<std::shared_ptr<Resource>> resources_;
  std::vector<std::function<void(Resource&)>> custom_kind_hooks_;
};

// Chains `fn` after r.validate_fn (the causes of both are reported).
void ChainValidation(Resource& r, ValidateFn fn);
// Chains `fn` after r.mutate_on_create.
void ChainCreateMutation(Resource& r, MutateFn fn);

}  // namespace flotilla::api
