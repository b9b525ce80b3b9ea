// coordination.k8s.io/v1 Lease and federation/v1beta1 Cluster.
#include <arpa/inet.h>

#include <algorithm>

#include "api/kinds/resources.h"
#include "api/kinds/util.h"
#include "api/validation.h"

namespace flotilla::api::kinds {
namespace {

// ValidateLeaseSpec.
Causes ValidateLease(const json::object& obj, const json::object*) {
  Causes out;
  std::optional<int64_t> duration = IntAt(obj, "spec.leaseDurationSeconds");
  if (duration && *duration <= 0) {
    out.push_back(FieldInvalid("spec.leaseDurationSeconds", *duration, "must be greater than 0"));
  }
  std::optional<int64_t> transitions = IntAt(obj, "spec.leaseTransitions");
  if (transitions && *transitions < 0) {
    out.push_back(
        FieldInvalid("spec.leaseTransitions", *transitions, "must be greater than or equal to 0"));
  }
  if (!StringAt(obj, "spec.preferredHolder").empty() &&
      StringAt(obj, "spec.holderIdentity").empty()) {
    out.push_back(FieldForbidden("spec.preferredHolder",
                                 "may only be specified if `holderIdentity` is specified"));
  }
  return out;
}

bool IsCIDR(std::string_view cidr) {
  size_t slash = cidr.find('/');
  if (slash == std::string_view::npos || slash + 1 == cidr.size()) return false;
  std::string ip(cidr.substr(0, slash));
  unsigned char buf[16];
  int max_bits = inet_pton(AF_INET, ip.c_str(), buf) == 1    ? 32
                 : inet_pton(AF_INET6, ip.c_str(), buf) == 1 ? 128
                                                             : -1;
  int bits = 0;
  for (char c : cidr.substr(slash + 1)) {
    if (c < '0' || c > '9' || bits > 128) return false;
    bits = bits * 10 + (c - '0');
  }
  return max_bits >= 0 && bits <= max_bits;
}

// A member cluster needs an address to reach it at and the Secret holding its
// credentials (seed 003: clusters are first-class API objects).
Causes ValidateCluster(const json::object& obj, const json::object*) {
  Causes out;
  std::vector<const json::object*> addresses = ObjectsAt(obj, "spec.serverAddressByClientCIDRs");
  if (addresses.empty()) out.push_back(FieldRequired("spec.serverAddressByClientCIDRs", ""));
  for (size_t i = 0; i < addresses.size(); ++i) {
    std::string at = Index("spec.serverAddressByClientCIDRs", i);
    if (StringAt(*addresses[i], "serverAddress").empty()) {
      out.push_back(FieldRequired(Child(at, "serverAddress"), ""));
    }
    std::string cidr = StringAt(*addresses[i], "clientCIDR");
    if (!cidr.empty() && !IsCIDR(cidr)) {
      out.push_back(
          FieldInvalid(Child(at, "clientCIDR"), json::string(cidr),
                       "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"));
    }
  }
  // An agent-connected cluster has no Secret: its agent holds the
  // member's credentials (federation/cluster/tunnel.h).
  std::string connection = StringAt(obj, "spec.connection");
  if (!connection.empty() && connection != "Direct" && connection != "Agent") {
    out.push_back(
        FieldNotSupported("spec.connection", json::string(connection), {"Agent", "Direct"}));
  }
  if (connection != "Agent" && StringAt(obj, "spec.secretRef.name").empty()) {
    out.push_back(FieldRequired("spec.secretRef.name", ""));
  }
  std::vector<const json::object*> taints = ObjectsAt(obj, "spec.taints");
  for (size_t i = 0; i < taints.size(); ++i) {
    std::string at = Index("spec.taints", i);
    if (StringAt(*taints[i], "key").empty()) out.push_back(FieldRequired(Child(at, "key"), ""));
    std::string effect = StringAt(*taints[i], "effect");
    static const std::vector<std::string> kEffects = {"NoSchedule", "PreferNoSchedule",
                                                      "NoExecute"};
    if (effect.empty()) {
      out.push_back(FieldRequired(Child(at, "effect"), ""));
    } else if (std::find(kEffects.begin(), kEffects.end(), effect) == kEffects.end()) {
      out.push_back(FieldNotSupported(Child(at, "effect"), json::string(effect), kEffects));
    }
  }
  return out;
}

// READY: the status of the Ready condition, "Unknown" without one.
json::value ClusterReady(const json::object& obj, TimePoint) {
  for (const json::object* c : ObjectsAt(obj, "status.conditions")) {
    if (StringAt(*c, "type") == "Ready") {
      std::string status = StringAt(*c, "status");
      return json::string(status.empty() ? "Unknown" : status);
    }
  }
  return json::string("Unknown");
}

json::value ClusterZones(const json::object& obj, TimePoint) {
  std::string out;
  if (const json::array* zones = ArrayAt(obj, "status.zones")) {
    for (const json::value& z : *zones) {
      if (z.is_string()) out += (out.empty() ? "" : ",") + std::string(z.get_string());
    }
  }
  return json::string(out.empty() ? "<none>" : out);
}

}  // namespace

Resource LeaseResource() {
  Resource r = MakeResource("coordination.k8s.io", "v1", "Lease", "leases", true,
                            "io.k8s.api.coordination.v1.Lease");
  r.validate_fn = ValidateLease;
  r.columns = {NameColumn(),
               Column("Holder", "string",
                      "holderIdentity contains the identity of the holder of a current lease.", 0,
                      [](const json::object& obj, TimePoint) -> json::value {
                        return json::string(StringAt(obj, "spec.holderIdentity"));
                      }),
               AgeColumn()};
  return r;
}

Resource ClusterResource() {
  Resource r = MakeResource("federation", "v1beta1", "Cluster", "clusters", false,
                            "io.flotilla.federation.v1beta1.Cluster");
  r.has_status = true;
  r.has_proxy = true;
  r.has_agent = true;
  r.validate_fn = ValidateCluster;
  r.columns = {
      NameColumn(),
      Column("Ready", "string", "Status of the cluster's Ready condition.", 0, ClusterReady),
      Column("Scheduling", "string",
             "Draining when the cluster is drained (spec.draining), Disabled when it is "
             "cordoned (spec.unschedulable), else Enabled.",
             0,
             [](const json::object& obj, TimePoint) -> json::value {
               auto set = [&](const char* path) {
                 const json::value* v = Find(obj, path);
                 return v != nullptr && v->is_bool() && v->get_bool();
               };
               return json::string(set("spec.draining")        ? "Draining"
                                   : set("spec.unschedulable") ? "Disabled"
                                                               : "Enabled");
             }),
      Column("Zones", "string", "Zones the cluster's nodes are in.", 0, ClusterZones),
      Column("Region", "string", "Region the cluster is in.", 0,
             [](const json::object& obj, TimePoint) -> json::value {
               std::string region = StringAt(obj, "status.region");
               return json::string(region.empty() ? "<none>" : region);
             }),
      AgeColumn()};
  return r;
}

}  // namespace flotilla::api::kinds
