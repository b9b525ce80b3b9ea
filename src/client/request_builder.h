// Building API requests for the Client verbs: resource paths as
// kube-apiserver routes them, query parameters as client-go names them, and
// request bodies. Shared by every transport (transport.h). Pure functions.
//
// Names, namespaces and subresources are checked as client-go checks path
// segments: a name may not be empty (where one is needed), "." or "..", nor
// contain '/' or '%'; such a request is a BadRequest before anything is sent.
#pragma once

#include <string>
#include <string_view>

#include "base/json.h"
#include "base/percent_encoding.h"
#include "base/status.h"
#include "client/client.h"
#include "client/transport.h"

namespace flotilla::client {

// "/api/v1" or "/apis/GROUP/VERSION", then "/namespaces/NS" when the
// resource is namespaced and `ns` is not empty, then "/RESOURCE", "/NAME" and
// "/SUBRESOURCE" when not empty. Each segment is percent-encoded.
std::string ResourcePath(const ResourceRef& res, std::string_view ns, std::string_view name = "",
                         std::string_view subresource = "");

StatusOr<ApiRequest> BuildGet(const ResourceRef& res, const std::string& ns,
                              const std::string& name, const std::string& subresource = "");
StatusOr<ApiRequest> BuildList(const ResourceRef& res, const std::string& ns,
                               const ListOptions& opts);
StatusOr<ApiRequest> BuildWatch(const ResourceRef& res, const std::string& ns,
                                const WatchOptions& opts);
// The namespace is `ns`, else the object's metadata.namespace.
StatusOr<ApiRequest> BuildCreate(const ResourceRef& res, const std::string& ns,
                                 const json::object& obj);
// PUT of `obj` to its metadata.name (and `subresource`, e.g. "status").
StatusOr<ApiRequest> BuildUpdate(const ResourceRef& res, const std::string& ns,
                                 const json::object& obj, const std::string& subresource = "");
StatusOr<ApiRequest> BuildPatch(const ResourceRef& res, const std::string& ns,
                                const std::string& name, PatchType type, const std::string& patch,
                                const std::string& subresource);
StatusOr<ApiRequest> BuildDelete(const ResourceRef& res, const std::string& ns,
                                 const std::string& name, const DeleteOptions& opts);
// POST of `body` to NAME/SUBRESOURCE (both required).
StatusOr<ApiRequest> BuildCreateSubresource(const ResourceRef& res, const std::string& ns,
                                            const std::string& name, const std::string& subresource,
                                            const json::object& body);
// A merge patch of the scale subresource's spec.replicas. REQUIRES-checked:
// replicas >= 0 (else BadRequest).
StatusOr<ApiRequest> BuildUpdateScale(const ResourceRef& res, const std::string& ns,
                                      const std::string& name, int64_t replicas);

}  // namespace flotilla::client
