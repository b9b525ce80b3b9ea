// Parses a request path into what kube-apiserver's RequestInfo holds: is it
// a resource request, which group/version/resource/namespace/name/subresource,
// and which verb (get, list, watch, create, update, patch, delete,
// deletecollection).
#pragma once

#include <string>
#include <string_view>

#include "apiserver/http.h"

namespace flotilla::apiserver {

struct RequestInfo {
  bool resource_request = false;
  std::string path;
  std::string verb;  // lower-case kube verb, or the HTTP method lower-cased for non-resource paths
  std::string api_prefix;  // "api" or "apis"
  std::string group, version;
  std::string ns, resource, subresource, name;
  // Number of path segments after the version (for discovery detection).
  bool is_discovery = false;  // /api, /apis, /api/v1, /apis/g, /apis/g/v
};

RequestInfo ParseRequestInfo(const Request& req);

// The same parse as views into the request's path, without the verb's
// string: for a look at a request that builds nothing.
struct RequestPath {
  bool resource_request = false;
  bool is_discovery = false;
  bool watch = false;  // a watch: ?watch=true (not of a proxy) or a legacy /watch/ path
  std::string_view api_prefix, group, version, ns, resource, subresource, name;
};
RequestPath ParseRequestPath(const Request& req);

}  // namespace flotilla::apiserver
