#include "apiserver/discovery.h"

#include "apiserver/objects.h"
#include "base/intern.h"
#include "base/json.h"

namespace flotilla::apiserver {
namespace {

const std::vector<std::string> kSubresourceVerbs = {"get", "patch", "update"};
// kube-apiserver's for nodes/proxy: a proxy takes every method.
const std::vector<std::string> kProxyVerbs = {"create", "delete", "get", "patch", "update"};
const std::vector<std::string> kTunnelVerbs = {"create"};  // and register's
// A pod's streamed subresources and their options' kinds, as kube lists them.
const std::pair<const char*, const char*> kConnectSubresources[] = {
    {"attach", "PodAttachOptions"},
    {"exec", "PodExecOptions"},
    {"portforward", "PodPortForwardOptions"}};

json::array LegacyResources(const api::Registry& reg, const std::string& group,
                            const std::string& version) {
  json::array out;
  for (const auto& r : reg.All()) {
    if (r->group != group || r->version != version) continue;
    json::object e{{"name", r->plural},
                   {"singularName", r->singular},
                   {"namespaced", r->namespaced},
                   {"kind", r->kind},
                   {"verbs", ToJsonArray(r->verbs)}};
    if (!r->short_names.empty()) e["shortNames"] = ToJsonArray(r->short_names);
    if (!r->categories.empty()) e["categories"] = ToJsonArray(r->categories);
    out.push_back(std::move(e));
    if (r->has_status) {
      out.push_back(json::object{{"name", r->plural + "/status"},
                                 {"singularName", ""},
                                 {"namespaced", r->namespaced},
                                 {"kind", r->kind},
                                 {"verbs", ToJsonArray(kSubresourceVerbs)}});
    }
    if (HasBinding(*r)) {
      out.push_back(json::object{{"name", r->plural + "/binding"},
                                 {"singularName", ""},
                                 {"namespaced", r->namespaced},
                                 {"kind", "Binding"},
                                 {"verbs", json::array{"create"}}});
    }
    if (HasLog(*r)) {
      out.push_back(json::object{{"name", r->plural + "/log"},
                                 {"singularName", ""},
                                 {"namespaced", r->namespaced},
                                 {"kind", r->kind},
                                 {"verbs", json::array{"get"}}});
      for (const auto& [sub, kind] : kConnectSubresources) {
        out.push_back(json::object{{"name", r->plural + "/" + sub},
                                   {"singularName", ""},
                                   {"namespaced", r->namespaced},
                                   {"kind", kind},
                                   {"verbs", json::array{"create", "get"}}});
      }
    }
    if (HasEviction(*r)) {
      out.push_back(json::object{{"name", r->plural + "/eviction"},
                                 {"singularName", ""},
                                 {"namespaced", r->namespaced},
                                 {"group", "policy"},
                                 {"version", "v1"},
                                 {"kind", "Eviction"},
                                 {"verbs", json::array{"create"}}});
    }
    if (r->has_scale) {
      out.push_back(json::object{{"name", r->plural + "/scale"},
                                 {"singularName", ""},
                                 {"namespaced", r->namespaced},
                                 {"group", "autoscaling"},
                                 {"version", "v1"},
                                 {"kind", "Scale"},
                                 {"verbs", ToJsonArray(kSubresourceVerbs)}});
    }
    if (r->has_proxy) {
      out.push_back(json::object{{"name", r->plural + "/proxy"},
                                 {"singularName", ""},
                                 {"namespaced", r->namespaced},
                                 {"kind", r->kind + "ProxyOptions"},
                                 {"verbs", ToJsonArray(kProxyVerbs)}});
    }
    if (r->has_agent) {
      out.push_back(json::object{{"name", r->plural + "/tunnel"},
                                 {"singularName", ""},
                                 {"namespaced", r->namespaced},
                                 {"kind", r->kind + "TunnelOptions"},
                                 {"verbs", ToJsonArray(kTunnelVerbs)}});
      out.push_back(json::object{{"name", r->plural + "/register"},
                                 {"singularName", ""},
                                 {"namespaced", r->namespaced},
                                 {"group", "authentication.k8s.io"},
                                 {"version", "v1"},
                                 {"kind", "TokenRequest"},
                                 {"verbs", ToJsonArray(kTunnelVerbs)}});
    }
  }
  return out;
}

json::object GroupEntry(const std::string& group, const std::vector<std::string>& versions) {
  json::array vs;
  for (const auto& v : versions)
    vs.push_back(json::object{{"groupVersion", group + "/" + v}, {"version", v}});
  return json::object{{"name", group}, {"versions", vs}, {"preferredVersion", vs.front()}};
}

json::object AggregatedVersion(const api::Registry& reg, const std::string& group,
                               const std::string& version) {
  json::array resources;
  for (const auto& r : reg.All()) {
    if (r->group != group || r->version != version) continue;
    json::array subs;
    if (r->has_status) {
      subs.push_back(json::object{
          {"subresource", "status"},
          {"responseKind", {{"group", group}, {"version", version}, {"kind", r->kind}}},
          {"verbs", ToJsonArray(kSubresourceVerbs)}});
    }
    if (HasBinding(*r)) {
      subs.push_back(
          json::object{{"subresource", "binding"},
                       {"responseKind", {{"group", ""}, {"version", "v1"}, {"kind", "Binding"}}},
                       {"verbs", json::array{"create"}}});
    }
    if (HasLog(*r)) {
      subs.push_back(json::object{
          {"subresource", "log"},
          {"responseKind", {{"group", group}, {"version", version}, {"kind", r->kind}}},
          {"verbs", json::array{"get"}}});
      for (const auto& [sub, kind] : kConnectSubresources) {
        subs.push_back(
            json::object{{"subresource", sub},
                         {"responseKind", {{"group", group}, {"version", version}, {"kind", kind}}},
                         {"verbs", json::array{"create", "get"}}});
      }
    }
    if (HasEviction(*r)) {
      subs.push_back(json::object{
          {"subresource", "eviction"},
          {"responseKind", {{"group", "policy"}, {"version", "v1"}, {"kind", "Eviction"}}},
          {"verbs", json::array{"create"}}});
    }
    if (r->has_scale) {
      subs.push_back(json::object{
          {"subresource", "scale"},
          {"responseKind", {{"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"}}},
          {"verbs", ToJsonArray(kSubresourceVerbs)}});
    }
    if (r->has_proxy) {
      subs.push_back(json::object{
          {"subresource", "proxy"},
          {"responseKind",
           {{"group", group}, {"version", version}, {"kind", r->kind + "ProxyOptions"}}},
          {"verbs", ToJsonArray(kProxyVerbs)}});
    }
    if (r->has_agent) {
      subs.push_back(json::object{
          {"subresource", "tunnel"},
          {"responseKind",
           {{"group", group}, {"version", version}, {"kind", r->kind + "TunnelOptions"}}},
          {"verbs", ToJsonArray(kTunnelVerbs)}});
      subs.push_back(json::object{
          {"subresource", "register"},
          {"responseKind",
           {{"group", "authentication.k8s.io"}, {"version", "v1"}, {"kind", "TokenRequest"}}},
          {"verbs", ToJsonArray(kTunnelVerbs)}});
    }
    json::object e{{"resource", r->plural},
                   {"responseKind", {{"group", group}, {"version", version}, {"kind", r->kind}}},
                   {"scope", r->namespaced ? "Namespaced" : "Cluster"},
                   {"singularResource", r->singular},
                   {"verbs", ToJsonArray(r->verbs)}};
    if (!r->short_names.empty()) e["shortNames"] = ToJsonArray(r->short_names);
    if (!r->categories.empty()) e["categories"] = ToJsonArray(r->categories);
    if (!subs.empty()) e["subresources"] = std::move(subs);
    resources.push_back(std::move(e));
  }
  return json::object{{"version", version}, {"resources", resources}, {"freshness", "Current"}};
}

std::string AggregatedList(const api::Registry& reg, bool core) {
  json::array items;
  for (const auto& [group, versions] : reg.Groups()) {
    if (group.empty() != core) continue;
    json::array vs;
    for (const auto& v : versions) vs.push_back(AggregatedVersion(reg, group, v));
    items.push_back(json::object{{"metadata", {{"name", group}}}, {"versions", vs}});
  }
  return json::serialize(json::object{{"kind", "APIGroupDiscoveryList"},
                                      {"apiVersion", "apidiscovery.k8s.io/v2"},
                                      {"metadata", json::object()},
                                      {"items", items}});
}

}  // namespace

Discovery::Discovery(const api::Registry& reg) {
  json::array groups;
  for (const auto& [group, versions] : reg.Groups()) {
    for (const auto& v : versions) {
      std::string gv = group.empty() ? v : group + "/" + v;
      std::string path = group.empty() ? "/api/" + v : "/apis/" + gv;
      legacy_[path] =
          Intern(json::serialize(json::object{{"kind", "APIResourceList"},
                                              {"apiVersion", "v1"},
                                              {"groupVersion", gv},
                                              {"resources", LegacyResources(reg, group, v)}}));
    }
    if (group.empty()) {
      legacy_["/api"] = Intern(json::serialize(json::object{
          {"kind", "APIVersions"},
          {"versions", ToJsonArray(versions)},
          {"serverAddressByClientCIDRs",
           json::array{json::object{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", ""}}}}}));
      continue;
    }
    json::object entry = GroupEntry(group, versions);
    legacy_["/apis/" + group] =
        Intern(json::serialize(json::object{{"kind", "APIGroup"},
                                            {"apiVersion", "v1"},
                                            {"name", group},
                                            {"versions", entry["versions"]},
                                            {"preferredVersion", entry["preferredVersion"]}}));
    groups.push_back(std::move(entry));
  }
  legacy_["/apis"] = Intern(json::serialize(
      json::object{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}}));
  aggregated_["/api"] = Intern(AggregatedList(reg, true));
  aggregated_["/apis"] = Intern(AggregatedList(reg, false));
}

const std::string* Discovery::Legacy(const std::string& path) const {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto it = legacy_.find(p);
  return it == legacy_.end() ? nullptr : it->second.get();
}

const std::string* Discovery::Aggregated(const std::string& path) const {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto it = aggregated_.find(p);
  return it == aggregated_.end() ? nullptr : it->second.get();
}

bool WantsAggregatedDiscovery(const std::string& accept) {
  return accept.find("g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList") != std::string::npos;
}

}  // namespace flotilla::apiserver
