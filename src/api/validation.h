// Generic object validation with Kubernetes' messages and field paths.
//
// Three layers, each usable on its own:
//  - format checks (IsDNS1123Subdomain, IsQualifiedName, ...) that return the
//    problems with a string as apimachinery words them, empty when valid;
//  - Field* builders that make one StatusCause the way apimachinery's
//    field.Error does (type "FieldValueInvalid", message
//    `Invalid value: "X_y": <detail>`, field "metadata.name"), and
//    FormatInvalidMessage / InvalidStatus that aggregate them into the 422
//    message kube-apiserver sends;
//  - ObjectMeta validation on create and update.
//
// Messages follow Kubernetes v1.32 (the kubectl on our machines). Every
// function here is pure and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::api {

// ---- Format checks (k8s.io/apimachinery/pkg/util/validation). ----

// At most 253 bytes of dot-separated DNS-1123 labels.
std::vector<std::string> IsDNS1123Subdomain(std::string_view value);
// At most 63 bytes of [a-z0-9]([-a-z0-9]*[a-z0-9])?.
std::vector<std::string> IsDNS1123Label(std::string_view value);
// At most 63 bytes of [a-z]([-a-z0-9]*[a-z0-9])? (Service names).
std::vector<std::string> IsDNS1035Label(std::string_view value);
// Label keys, annotation keys and finalizers: an optional DNS-1123 subdomain
// prefix and '/', then a name of at most 63 bytes of
// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9].
std::vector<std::string> IsQualifiedName(std::string_view value);
// Label values: empty, or a qualified name part of at most 63 bytes.
std::vector<std::string> IsValidLabelValue(std::string_view value);
// Names that must be safe as one URL path segment: not "." or "..", no '/'
// or '%'.
std::vector<std::string> IsValidPathSegmentName(std::string_view value);

// ---- Name rules (apimachinery's ValidateNameFunc). ----
// `prefix` is true when validating a metadata.generateName prefix, which may
// end in '-' because random characters are appended to it.
using NameValidator = std::vector<std::string> (*)(std::string_view name, bool prefix);
std::vector<std::string> NameIsDNSSubdomain(std::string_view name, bool prefix);
std::vector<std::string> NameIsDNSLabel(std::string_view name, bool prefix);      // Namespaces
std::vector<std::string> NameIsDNS1035Label(std::string_view name, bool prefix);  // Services
std::vector<std::string> ValidatePathSegmentName(std::string_view name, bool prefix);

// ---- Causes, as field.Error renders them. `field` is the path
// ("spec.template.spec.containers[0].name"); `value` is the offending value,
// rendered like Go does (strings quoted, numbers bare, the rest as JSON). ----
StatusCause FieldInvalid(std::string field, const json::value& value, std::string_view detail);
StatusCause FieldRequired(std::string field, std::string_view detail);
StatusCause FieldForbidden(std::string field, std::string_view detail);
StatusCause FieldTooLong(std::string field, int64_t max_bytes);
StatusCause FieldDuplicate(std::string field, const json::value& value);
StatusCause FieldNotSupported(std::string field, const json::value& value,
                              const std::vector<std::string>& supported);
// A value of the wrong JSON type, e.g. expected "string" or "object".
StatusCause FieldTypeInvalid(std::string field, const json::value& value,
                             std::string_view expected_type);

// Go's %q of a string: double-quoted with Go escapes.
std::string QuoteGo(std::string_view s);
// How field.Error prints a bad value: %q for strings, %v for numbers and
// booleans, JSON for the rest.
std::string FormatBadValue(const json::value& value);

// field.ErrorList.ToAggregate().Error(): "field: message" for one cause,
// "[a, b]" for several; identical entries appear once.
std::string AggregateCauses(const std::vector<StatusCause>& causes);
// kube-apiserver's 422 message: `Deployment.apps "x" is invalid: [...]`.
// `qualified_kind` is Kind plus "." and group for non-core groups.
std::string FormatInvalidMessage(std::string_view qualified_kind, std::string_view name,
                                 const std::vector<StatusCause>& causes);
// Status::Invalid with FormatInvalidMessage and the causes.
// REQUIRES: !causes.empty()
Status InvalidStatus(std::string_view qualified_kind, std::string_view name,
                     std::vector<StatusCause> causes);

// ---- ObjectMeta. `labels` etc. may be null (absent); `field` is the path of
// the value itself ("metadata.labels"). ----
std::vector<StatusCause> ValidateLabels(const json::value* labels, std::string_view field);
// Keys are qualified names (case-insensitive) and keys plus values total at
// most 256 KiB.
std::vector<StatusCause> ValidateAnnotations(const json::value* annotations,
                                             std::string_view field);
std::vector<StatusCause> ValidateOwnerReferences(const json::value* refs, std::string_view field);
// Qualified names; "orphan" and "foregroundDeletion" not both. With
// `kube_names`, a name without a '/' must also be one of the standard
// finalizers, as for every built-in kind.
std::vector<StatusCause> ValidateFinalizers(const json::value* finalizers, std::string_view field,
                                            bool kube_names);

struct ObjectMetaOptions {
  bool namespaced = true;
  NameValidator validate_name = NameIsDNSSubdomain;
  // Built-in kinds check finalizer names against the standard ones.
  bool kube_finalizer_names = true;
};

// Validates obj.metadata on create. A missing name is accepted when
// generateName is set: the server fills the name in before storing (and
// should validate the generated name with `validate_name`). A namespaced
// kind needs metadata.namespace (see EnsureNamespaceMatchesRequest); a
// cluster-scoped kind must not have one.
std::vector<StatusCause> ValidateObjectMeta(const json::object& obj,
                                            const ObjectMetaOptions& options);
// Validates obj.metadata on update against the stored `old`: name,
// namespace, uid, creationTimestamp, deletionTimestamp and
// deletionGracePeriodSeconds are immutable, resourceVersion must be set
// (fill it from the stored object first for unconditional updates),
// generation must not decrease, no finalizer may be added once deletion
// started, plus the label, annotation, owner and finalizer rules.
std::vector<StatusCause> ValidateObjectMetaUpdate(const json::object& obj, const json::object& old,
                                                  const ObjectMetaOptions& options);

// Reconciles metadata.namespace with the namespace of the request URL, as
// kube-apiserver does before create and update: an empty namespace takes the
// request's, a cluster-scoped kind loses any namespace, and a different one is
// BadRequest "the namespace of the provided object does not match the
// namespace sent on the request".
Status EnsureNamespaceMatchesRequest(json::object& obj, std::string_view request_namespace,
                                     bool namespaced);

}  // namespace flotilla::api
