// Internal to the OpenApi documents (openapi.h): the paths and operations
// of one resource, in Swagger 2.0 or OpenAPI 3.0 form, shaped like
// kube-apiserver's (operation ids, x-kubernetes-action,
// x-kubernetes-group-version-kind, query parameters per verb).
#pragma once

#include <string>
#include <string_view>

#include "api/registry.h"
#include "base/json.h"

namespace flotilla::apiserver::openapi_internal {

enum class Dialect { kSwagger2, kOpenApi3 };

// The definitions a resource's operations refer to.
struct ResourceSchemas {
  std::string object;  // e.g. io.k8s.api.apps.v1.Deployment
  std::string list;    // e.g. io.k8s.api.apps.v1.DeploymentList
};

inline constexpr std::string_view kStatusSchema = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
inline constexpr std::string_view kDeleteOptionsSchema =
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
inline constexpr std::string_view kWatchEventSchema =
    "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";
inline constexpr std::string_view kPatchSchema = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
inline constexpr std::string_view kScaleSchema = "io.k8s.api.autoscaling.v1.Scale";
inline constexpr std::string_view kApiResourceListSchema =
    "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList";

// "/api/v1" or "/apis/<group>/<version>".
std::string GroupVersionPrefix(std::string_view group, std::string_view version);

// "#/definitions/<name>" or "#/components/schemas/<name>".
std::string SchemaRef(Dialect d, std::string_view name);

// Adds every path of `res` (collection, item, status, scale and the
// deprecated watch paths), limited to its verbs, to `paths`.
void AddResourcePaths(Dialect d, const api::Resource& res, const ResourceSchemas& schemas,
                      json::object& paths);

// Adds "<prefix>/" (the group-version's APIResourceList) to `paths`.
void AddDiscoveryPath(Dialect d, std::string_view group, std::string_view version,
                      json::object& paths);

}  // namespace flotilla::apiserver::openapi_internal
