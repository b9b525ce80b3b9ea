// Parses a request path into what kube-apiserver's RequestInfo holds: is it
// a resource request, which group/version/resource/namespace/name/subresource,
// and which verb (get, list, watch, create, update, patch, delete,
// deletecollection).
#pragma once

#include <string>

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

}  // namespace flotilla::apiserver
