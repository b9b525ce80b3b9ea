// The HTTP side of the resource verbs: parses query parameters and bodies,
// calls Objects, and writes objects, lists, tables, watch streams and
// Status errors as kube-apiserver does.
#pragma once

#include <functional>

#include "api/registry.h"
#include "apiserver/http.h"
#include "apiserver/metrics.h"
#include "apiserver/objects.h"
#include "apiserver/request_info.h"

namespace flotilla::apiserver {

struct ResourceContext {
  const api::Resource& res;
  const RequestInfo& info;
  Request& req;
  Responder& resp;
  Objects& objects;
  Metrics& metrics;
  // Holds `res` for as long as the request (a watch) lasts: a custom kind
  // may stop being served meanwhile. Null for the registry's own kinds.
  std::shared_ptr<const api::Resource> keep = nullptr;
  // The per-user admission of writes (WriteOptions::admit); null: none.
  std::function<Status(const json::object& obj, const json::object* old)> admit = nullptr;
};

// The request body as an object of `expected_api_version` and
// `expected_kind` (JSON or protobuf); BadRequest as kube-apiserver words it.
StatusOr<json::object> ParseBody(const Request& req, const api::Resource& res,
                                 const std::string& expected_api_version,
                                 const std::string& expected_kind);

// Serves get, list, create, update, patch, delete, deletecollection and the
// status and scale subresources. Returns the HTTP code written.
void ServeResourceRequest(ResourceContext& ctx);
// Starts a watch (chunked JSON event stream) that lasts until the client
// leaves, the timeout passes or the server stops: on the responder's
// ChunkStream, so over HTTPS it goes on after this returns, holding no
// thread.
void ServeWatch(ResourceContext& ctx);

}  // namespace flotilla::apiserver
