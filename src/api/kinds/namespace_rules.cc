// networking.k8s.io/v1 NetworkPolicy and v1 LimitRange, the rules a
// namespace carries: defaults (pkg/apis/networking/v1 and core/v1
// defaults.go), validation, columns and registration.
#include <arpa/inet.h>

#include <array>
#include <map>

#include "api/kinds/resources.h"
#include "api/kinds/util.h"
#include "api/labels.h"
#include "api/resources.h"
#include "api/validation.h"

namespace flotilla::api::kinds {
namespace {

using Causes = std::vector<StatusCause>;

void Append(Causes& out, Causes more) {
  for (StatusCause& c : more) out.push_back(std::move(c));
}

// SetDefaults_NetworkPolicy: protocol TCP on every port; policyTypes
// Ingress, plus Egress when there are egress rules.
void DefaultNetworkPolicy(json::object& obj) {
  json::object& spec = EnsureObject(obj, "spec");
  for (std::string_view direction : {"ingress", "egress"}) {
    json::array* rules = MutableArray(spec, direction);
    if (rules == nullptr) continue;
    for (json::value& rule : *rules) {
      if (!rule.is_object()) continue;
      json::array* ports = MutableArray(rule.get_object(), "ports");
      if (ports == nullptr) continue;
      for (json::value& port : *ports) {
        if (port.is_object()) SetIfUnset(port.get_object(), "protocol", "TCP");
      }
    }
  }
  const json::array* types = GetArray(spec, "policyTypes");
  if (types == nullptr || types->empty()) {
    json::array defaulted{json::string("Ingress")};
    const json::array* egress = GetArray(spec, "egress");
    if (egress != nullptr && !egress->empty()) defaulted.push_back(json::string("Egress"));
    spec["policyTypes"] = std::move(defaulted);
  }
}

// An IP network: its address bytes and prefix length.
struct Network {
  std::array<unsigned char, 16> bytes{};
  int size = 0;  // 4 or 16
  int prefix = 0;
};

std::optional<Network> ParseCidr(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos || slash + 1 == text.size()) return std::nullopt;
  Network n;
  std::string ip(text.substr(0, slash));
  if (inet_pton(AF_INET, ip.c_str(), n.bytes.data()) == 1) {
    n.size = 4;
  } else if (inet_pton(AF_INET6, ip.c_str(), n.bytes.data()) == 1) {
    n.size = 16;
  } else {
    return std::nullopt;
  }
  for (char c : text.substr(slash + 1)) {
    if (c < '0' || c > '9' || n.prefix > 128) return std::nullopt;
    n.prefix = n.prefix * 10 + (c - '0');
  }
  if (n.prefix > n.size * 8) return std::nullopt;
  return n;
}

// Whether `outer` holds the address of `inner`.
bool Contains(const Network& outer, const Network& inner) {
  if (outer.size != inner.size) return false;
  for (int bit = 0; bit < outer.prefix; ++bit) {
    int mask = 0x80 >> (bit % 8);
    if ((outer.bytes[bit / 8] & mask) != (inner.bytes[bit / 8] & mask)) return false;
  }
  return true;
}

constexpr std::string_view kNotACidr =
    "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

void CheckIpBlock(const json::object& block, const std::string& path, Causes& out) {
  std::string cidr = StringAt(block, "cidr");
  if (cidr.empty()) {
    out.push_back(FieldRequired(Child(path, "cidr"), ""));
    return;
  }
  std::optional<Network> outer = ParseCidr(cidr);
  if (!outer) {
    out.push_back(FieldInvalid(Child(path, "cidr"), json::string(cidr), kNotACidr));
    return;
  }
  const json::array* except = GetArray(block, "except");
  for (size_t i = 0; except != nullptr && i < except->size(); ++i) {
    std::string text = except->at(i).is_string() ? std::string(except->at(i).get_string()) : "";
    std::string at = Index(Child(path, "except"), i);
    std::optional<Network> inner = ParseCidr(text);
    if (!inner) {
      out.push_back(FieldInvalid(at, json::string(text), kNotACidr));
    } else if (!Contains(*outer, *inner) || outer->prefix >= inner->prefix) {
      out.push_back(FieldInvalid(at, json::string(text), "must be a strict subset of `cidr`"));
    }
  }
}

void CheckPeer(const json::object& peer, const std::string& path, Causes& out) {
  int peers = 0;
  for (std::string_view selector : {"podSelector", "namespaceSelector"}) {
    const json::value* s = peer.if_contains(selector);
    if (s == nullptr || s->is_null()) continue;
    ++peers;
    Append(out, ValidateLabelSelector(*s, Child(path, selector)));
  }
  const json::object* block = GetObject(peer, "ipBlock");
  if (block != nullptr) {
    ++peers;
    CheckIpBlock(*block, Child(path, "ipBlock"), out);
  }
  if (peers == 0) {
    out.push_back(FieldRequired(path, "must specify a peer"));
  } else if (peers > 1 && block != nullptr) {
    out.push_back(FieldForbidden(path, "may not specify both ipBlock and another peer"));
  }
}

void CheckPort(const json::object& port, const std::string& path, Causes& out) {
  const json::value* protocol = port.if_contains("protocol");
  if (protocol != nullptr && !protocol->is_null()) {
    std::string p = protocol->is_string() ? std::string(protocol->get_string()) : "";
    if (p != "TCP" && p != "UDP" && p != "SCTP") {
      out.push_back(FieldNotSupported(Child(path, "protocol"), *protocol, {"TCP", "UDP", "SCTP"}));
    }
  }
  const json::value* number = port.if_contains("port");
  std::optional<int64_t> end = GetInt(port, "endPort");
  std::string end_path = Child(path, "endPort");
  auto check_range = [&](int64_t n, const std::string& at) {
    if (n < 1 || n > 65535) {
      out.push_back(FieldInvalid(at, n, "must be between 1 and 65535, inclusive"));
    }
  };
  if (number == nullptr || number->is_null()) {
    if (end) {
      out.push_back(
          FieldInvalid(end_path, *end, "may not be specified when `port` is not specified"));
    }
  } else if (number->is_int64()) {
    check_range(number->get_int64(), Child(path, "port"));
    if (end) {
      if (*end < number->get_int64()) {
        out.push_back(
            FieldInvalid(end_path, number->get_int64(), "must be greater than or equal to `port`"));
      }
      check_range(*end, end_path);
    }
  } else if (number->is_string()) {
    if (end) {
      out.push_back(
          FieldInvalid(end_path, *end, "may not be specified when `port` is non-numeric"));
    }
    for (const std::string& msg : IsValidPortName(number->get_string())) {
      out.push_back(FieldInvalid(Child(path, "port"), *number, msg));
    }
  }
}

Causes ValidateNetworkPolicy(const json::object& obj, const json::object*) {
  Causes out;
  const json::object& spec = ObjectOr(obj, "spec");
  const json::value* pod_selector = spec.if_contains("podSelector");
  if (pod_selector != nullptr) {
    Append(out, ValidateLabelSelector(*pod_selector, "spec.podSelector"));
  }
  for (const auto& [direction, peers] :
       {std::pair<std::string_view, std::string_view>{"ingress", "from"}, {"egress", "to"}}) {
    const json::array* rules = GetArray(spec, direction);
    for (size_t i = 0; rules != nullptr && i < rules->size(); ++i) {
      if (!rules->at(i).is_object()) continue;
      const json::object& rule = rules->at(i).get_object();
      std::string path = Index(Child("spec", direction), i);
      const json::array* ports = GetArray(rule, "ports");
      for (size_t j = 0; ports != nullptr && j < ports->size(); ++j) {
        if (ports->at(j).is_object()) {
          CheckPort(ports->at(j).get_object(), Index(Child(path, "ports"), j), out);
        }
      }
      const json::array* list = GetArray(rule, peers);
      for (size_t j = 0; list != nullptr && j < list->size(); ++j) {
        if (list->at(j).is_object()) {
          CheckPeer(list->at(j).get_object(), Index(Child(path, peers), j), out);
        }
      }
    }
  }
  const json::array* types = GetArray(spec, "policyTypes");
  if (types != nullptr && types->size() > 2) {
    out.push_back(InvalidRepr("spec.policyTypes", GoStringSlice(spec.if_contains("policyTypes")),
                              "may not specify more than two policyTypes"));
  } else {
    for (size_t i = 0; types != nullptr && i < types->size(); ++i) {
      const json::value& t = types->at(i);
      if (!t.is_string() || (t.get_string() != "Ingress" && t.get_string() != "Egress")) {
        out.push_back(FieldNotSupported(Index("spec.policyTypes", i), t, {"Ingress", "Egress"}));
      }
    }
  }
  return out;
}

// SetDefaults_LimitRangeItem: a Container item's default limit is its max,
// its default request its default limit, else its min.
void DefaultLimitRange(json::object& obj) {
  json::array* limits = MutableArray(EnsureObject(obj, "spec"), "limits");
  if (limits == nullptr) return;
  for (json::value& v : *limits) {
    if (!v.is_object() || StringAt(v.get_object(), "type") != "Container") continue;
    json::object& item = v.get_object();
    auto fill = [&](std::string_view into, std::string_view from) {
      const json::object* source = GetObject(item, from);
      if (source == nullptr || source->empty()) return;
      json::object target = ObjectOr(item, into);
      for (const auto& [key, value] : *source) {
        if (!target.contains(key)) target[key] = value;
      }
      item[into] = std::move(target);
    };
    fill("default", "max");
    fill("defaultRequest", "default");
    fill("defaultRequest", "min");
  }
}

Causes ValidateLimitRange(const json::object& obj, const json::object*) {
  Causes out;
  const json::array* limits = ArrayAt(obj, "spec.limits");
  for (size_t i = 0; limits != nullptr && i < limits->size(); ++i) {
    if (!limits->at(i).is_object()) continue;
    const json::object& item = limits->at(i).get_object();
    std::string path = Index("spec.limits", i);
    std::string type = StringAt(item, "type");
    if (type.empty()) {
      out.push_back(FieldRequired(Child(path, "type"), ""));
    } else if (type != "Pod" && type != "Container" && type != "PersistentVolumeClaim" &&
               type.find('/') == std::string::npos) {
      out.push_back(FieldNotSupported(Child(path, "type"), json::string(type),
                                      {"Container", "PersistentVolumeClaim", "Pod"}));
    }
    if (type == "Pod") {
      for (std::string_view field : {"default", "defaultRequest"}) {
        const json::object* o = GetObject(item, field);
        if (o != nullptr && !o->empty()) {
          out.push_back(
              FieldForbidden(Child(path, field), "may not be specified when `type` is 'Pod'"));
        }
      }
    }
    // Every quantity, by field and resource.
    std::map<std::string, std::map<std::string, std::pair<int64_t, std::string>>> q;
    for (std::string_view field :
         {"max", "min", "default", "defaultRequest", "maxLimitRequestRatio"}) {
      const json::object* o = GetObject(item, field);
      if (o == nullptr) continue;
      for (const auto& [key, value] : *o) {
        std::optional<int64_t> milli = QuantityValue(value, 1000);
        std::string at = Key(Child(path, field), key);
        if (!milli) {
          out.push_back(FieldInvalid(at, value,
                                     "quantities must match the regular expression "
                                     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"));
          continue;
        }
        q[std::string(field)][std::string(key)] = {*milli, QuantityString(&value)};
      }
    }
    for (const auto& entry : q["min"]) {
      // Named, not bound: a lambda below uses them (clang 14 cannot capture bindings).
      const std::string& key = entry.first;
      const std::pair<int64_t, std::string>& lo = entry.second;
      auto check = [&](std::string_view high, std::string_view at_field, std::string_view what) {
        auto hi = q[std::string(high)].find(key);
        if (hi == q[std::string(high)].end() || lo.first <= hi->second.first) return;
        out.push_back(FieldInvalid(Key(Child(path, at_field), key), json::string(lo.second),
                                   "min value " + lo.second + " is greater than " +
                                       std::string(what) + " value " + hi->second.second));
      };
      check("max", "min", "max");
      check("defaultRequest", "defaultRequest", "default request");
      check("default", "default", "default");
    }
    for (const auto& [key, request] : q["defaultRequest"]) {
      for (const auto& [high, what] :
           {std::pair<std::string, std::string>{"max", "max"}, {"default", "default limit"}}) {
        auto hi = q[high].find(key);
        if (hi == q[high].end() || request.first <= hi->second.first) continue;
        out.push_back(FieldInvalid(Key(Child(path, "defaultRequest"), key),
                                   json::string(request.second),
                                   "default request value " + request.second + " is greater than " +
                                       what + " value " + hi->second.second));
      }
    }
    for (const auto& [key, limit] : q["default"]) {
      auto hi = q["max"].find(key);
      if (hi == q["max"].end() || limit.first <= hi->second.first) continue;
      out.push_back(FieldInvalid(
          Key(Child(path, "default"), key), json::string(limit.second),
          "default value " + limit.second + " is greater than max value " + hi->second.second));
    }
    for (const auto& [key, ratio] : q["maxLimitRequestRatio"]) {
      if (ratio.first < 1000) {
        out.push_back(FieldInvalid(Key(Child(path, "maxLimitRequestRatio"), key),
                                   json::string(ratio.second),
                                   "ratio " + ratio.second + " is less than 1"));
      }
    }
  }
  return out;
}

json::value CreatedAt(const json::object& obj, TimePoint) {
  return json::string(StringAt(obj, "metadata.creationTimestamp"));
}

}  // namespace

Resource NetworkPolicyResource() {
  Resource r = MakeResource("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", true,
                            "io.k8s.api.networking.v1.NetworkPolicy");
  r.short_names = {"netpol"};
  r.default_fn = DefaultNetworkPolicy;
  r.validate_fn = ValidateNetworkPolicy;
  r.columns = {NameColumn(),
               Column("Pod-Selector", "string",
                      "Selects the pods to which this NetworkPolicy object applies.", 0,
                      [](const json::object& obj, TimePoint) -> json::value {
                        return json::string(FormatLabelSelector(Find(obj, "spec.podSelector")));
                      }),
               AgeColumn()};
  return r;
}

Resource LimitRangeResource() {
  Resource r =
      MakeResource("", "v1", "LimitRange", "limitranges", true, "io.k8s.api.core.v1.LimitRange");
  r.short_names = {"limits"};
  r.default_fn = DefaultLimitRange;
  r.validate_fn = ValidateLimitRange;
  r.columns = {NameColumn(), Column("Created At", "date", "", 0, CreatedAt)};
  return r;
}

}  // namespace flotilla::api::kinds
