#include "apiserver/request_info.h"

#include <array>
#include <span>
#include <string_view>

namespace flotilla::apiserver {
namespace {

// Enough segments for the longest resource path:
// apis/{group}/{version}/namespaces/{ns}/{resource}/{name}/{subresource},
// with a legacy watch/ and one more to tell a longer path apart.
constexpr size_t kMaxSegments = 10;

// The path's non-empty segments, views into `path`; at most kMaxSegments
// (the rest are not looked at: no resource path has more).
struct Segments {
  std::array<std::string_view, kMaxSegments> at;
  size_t size = 0;
};

Segments SplitPath(std::string_view path) {
  Segments parts;
  size_t i = 0;
  while (i < path.size() && parts.size < kMaxSegments) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) parts.at[parts.size++] = path.substr(i, j - i);
    i = j;
  }
  return parts;
}

std::string LowerMethod(std::string_view m) {
  std::string out(m);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string VerbFor(std::string_view method, bool has_name, bool watch) {
  if (method == "GET" || method == "HEAD") {
    if (watch) return "watch";
    return has_name ? "get" : "list";
  }
  if (method == "POST") return "create";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return has_name ? "delete" : "deletecollection";
  return LowerMethod(method);
}

}  // namespace

RequestPath ParseRequestPath(const Request& req) {
  RequestPath p;
  Segments parts = SplitPath(req.path);
  if (parts.size == 0 || (parts.at[0] != "api" && parts.at[0] != "apis")) return p;
  p.api_prefix = parts.at[0];
  size_t i = 1;
  if (p.api_prefix == "apis") {
    if (parts.size < 2) {
      p.is_discovery = true;
      return p;
    }
    p.group = parts.at[i++];
  }
  if (parts.size <= i) {
    p.is_discovery = true;
    return p;
  }
  p.version = parts.at[i++];
  if (parts.size <= i) {
    p.is_discovery = true;
    return p;
  }
  p.resource_request = true;
  if (parts.at[i] == "watch") {  // legacy /watch/ paths
    p.watch = true;
    ++i;
  }
  std::span<const std::string_view> rest(parts.at.data() + i, parts.size - i);
  // namespaces/{ns}/{resource}/... unless the resource is namespaces itself.
  // (/namespaces/{name}/status and /finalize address the namespace itself.)
  if (rest.size() >= 3 && rest[0] == "namespaces" && rest[2] != "status" && rest[2] != "finalize") {
    p.ns = rest[1];
    rest = rest.subspan(2);
  }
  if (!rest.empty()) p.resource = rest[0];
  if (rest.size() >= 2) p.name = rest[1];
  if (rest.size() >= 3) p.subresource = rest[2];
  if (p.resource == "namespaces") p.ns = {};
  // A proxy's query belongs to the request it forwards: ?watch=true there
  // is a GET of the proxy, as in kube-apiserver.
  if (req.QueryBool("watch") && p.subresource != "proxy") p.watch = true;
  return p;
}

RequestInfo ParseRequestInfo(const Request& req) {
  RequestPath p = ParseRequestPath(req);
  RequestInfo info;
  info.path = req.path;
  info.resource_request = p.resource_request;
  info.is_discovery = p.is_discovery;
  info.api_prefix = p.api_prefix;
  info.group = p.group;
  info.version = p.version;
  info.ns = p.ns;
  info.resource = p.resource;
  info.subresource = p.subresource;
  info.name = p.name;
  info.verb =
      p.resource_request ? VerbFor(req.method, !p.name.empty(), p.watch) : LowerMethod(req.method);
  return info;
}

}  // namespace flotilla::apiserver
