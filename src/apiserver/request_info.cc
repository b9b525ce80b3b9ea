#include "apiserver/request_info.h"

#include <vector>

namespace flotilla::apiserver {
namespace {

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) parts.push_back(path.substr(i, j - i));
    i = j;
  }
  return parts;
}

std::string LowerMethod(const std::string& m) {
  std::string out = m;
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string VerbFor(const std::string& method, bool has_name, bool watch) {
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
  info.verb = LowerMethod(req.method);
  std::vector<std::string> parts = SplitPath(req.path);
  if (parts.empty() || (parts[0] != "api" && parts[0] != "apis")) return info;
  info.api_prefix = parts[0];
  size_t i = 1;
  if (info.api_prefix == "apis") {
    if (parts.size() < 2) {
      info.is_discovery = true;
      return info;
    }
    info.group = parts[i++];
  }
  if (parts.size() <= i) {
    info.is_discovery = true;
    return info;
  }
  info.version = parts[i++];
  if (parts.size() <= i) {
    info.is_discovery = true;
    return info;
  }
  info.resource_request = true;
  bool watch = false;
  if (parts[i] == "watch") {  // legacy /watch/ paths
    watch = true;
    ++i;
  }
  std::vector<std::string> rest(parts.begin() + static_cast<long>(i), parts.end());
  // namespaces/{ns}/{resource}/... unless the resource is namespaces itself.
  // (/namespaces/{name}/status and /finalize address the namespace itself.)
  if (rest.size() >= 3 && rest[0] == "namespaces" && rest[2] != "status" && rest[2] != "finalize") {
    info.ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
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
