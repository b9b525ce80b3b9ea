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

RequestInfo ParseRequestInfo(const Request& req) {
  RequestInfo info;
  info.path = req.path;
  Segments parts = SplitPath(req.path);
  if (parts.size == 0 || (parts.at[0] != "api" && parts.at[0] != "apis")) {
    info.verb = LowerMethod(req.method);
    return info;
  }
  info.api_prefix = parts.at[0];
  size_t i = 1;
  if (info.api_prefix == "apis") {
    if (parts.size < 2) {
      info.is_discovery = true;
      info.verb = LowerMethod(req.method);
      return info;
    }
    info.group = parts.at[i++];
  }
  if (parts.size <= i) {
    info.is_discovery = true;
    info.verb = LowerMethod(req.method);
    return info;
  }
  info.version = parts.at[i++];
  if (parts.size <= i) {
    info.is_discovery = true;
    info.verb = LowerMethod(req.method);
    return info;
  }
  info.resource_request = true;
  bool watch = false;
  if (parts.at[i] == "watch") {  // legacy /watch/ paths
    watch = true;
    ++i;
  }
  std::span<const std::string_view> rest(parts.at.data() + i, parts.size - i);
  // namespaces/{ns}/{resource}/... unless the resource is namespaces itself.
  // (/namespaces/{name}/status and /finalize address the namespace itself.)
  if (rest.size() >= 3 && rest[0] == "namespaces" && rest[2] != "status" && rest[2] != "finalize") {
    info.ns = rest[1];
    rest = rest.subspan(2);
  }
  if (!rest.empty()) info.resource = rest[0];
  if (rest.size() >= 2) info.name = rest[1];
  if (rest.size() >= 3) info.subresource = rest[2];
  if (info.resource == "namespaces") info.ns.clear();
  // A proxy's query belongs to the request it forwards: ?watch=true there
  // is a GET of the proxy, as in kube-apiserver.
  if (req.QueryBool("watch") && info.subresource != "proxy") watch = true;
  info.verb = VerbFor(req.method, !info.name.empty(), watch);
  return info;
}

}  // namespace flotilla::apiserver
