#include "api/kinds/pod_spec.h"

#include <set>

#include "api/validation.h"

namespace flotilla::api::kinds {
namespace {

constexpr int64_t kDefaultMode = 0644;  // 420, as kube-apiserver writes it

// parsers.ParseImageName's tag: "latest" when the reference names neither a
// tag nor a digest; "" when it cannot be parsed (uppercase repository).
std::string ImageTag(std::string_view image) {
  if (image.empty()) return "";
  size_t at = image.find('@');
  std::string_view name = image.substr(0, at);
  size_t slash = name.find('/');
  std::string_view first = name.substr(0, slash);
  bool has_domain = slash != std::string_view::npos &&
                    (first.find_first_of(".:") != std::string_view::npos || first == "localhost");
  std::string_view repo = has_domain ? name.substr(slash + 1) : name;
  size_t colon = repo.rfind(':');
  for (char c : repo.substr(0, colon)) {
    if (c >= 'A' && c <= 'Z') return "";
  }
  if (colon != std::string_view::npos) return std::string(repo.substr(colon + 1));
  return at == std::string_view::npos ? "latest" : "";
}

void DefaultHttpGet(json::object& handler) {
  if (json::object* get = MutableObject(handler, "httpGet")) {
    SetIfEmpty(*get, "path", "/");
    SetIfEmpty(*get, "scheme", "HTTP");
  }
}

void DefaultProbe(json::object& container, std::string_view key) {
  json::object* probe = MutableObject(container, key);
  if (probe == nullptr) return;
  for (auto [field, value] : {std::pair{"timeoutSeconds", 1}, std::pair{"periodSeconds", 10},
                              std::pair{"successThreshold", 1}, std::pair{"failureThreshold", 3}}) {
    if (IntOr(*probe, field, 0) == 0) (*probe)[field] = value;
  }
  DefaultHttpGet(*probe);
  if (json::object* grpc = MutableObject(*probe, "grpc")) SetIfUnset(*grpc, "service", "");
}

void DefaultEnv(json::object& container) {
  ForEachObject(container, "env", [](json::object& env) {
    json::object* from = MutableObject(env, "valueFrom");
    json::object* ref = from ? MutableObject(*from, "fieldRef") : nullptr;
    if (ref != nullptr) SetIfEmpty(*ref, "apiVersion", "v1");
  });
}

void DefaultContainer(json::object& c) {
  SetIfEmpty(c, "terminationMessagePath", "/dev/termination-log");
  SetIfEmpty(c, "terminationMessagePolicy", "File");
  SetIfEmpty(c, "imagePullPolicy",
             ImageTag(StringAt(c, "image")) == "latest" ? "Always" : "IfNotPresent");
  SetIfUnset(c, "resources", json::object());
  ForEachObject(c, "ports", [](json::object& p) { SetIfEmpty(p, "protocol", "TCP"); });
  for (std::string_view probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    DefaultProbe(c, probe);
  }
  if (json::object* lifecycle = MutableObject(c, "lifecycle")) {
    for (std::string_view hook : {"postStart", "preStop"}) {
      if (json::object* h = MutableObject(*lifecycle, hook)) DefaultHttpGet(*h);
    }
  }
  DefaultEnv(c);
}

void DefaultVolume(json::object& volume) {
  bool has_source = false;
  for (const auto& [key, value] : volume) {
    if (key != "name" && !value.is_null()) has_source = true;
  }
  if (!has_source) volume["emptyDir"] = json::object();
  for (std::string_view source : {"secret", "configMap", "downwardAPI", "projected"}) {
    if (json::object* s = MutableObject(volume, source))
      SetIfUnset(*s, "defaultMode", kDefaultMode);
  }
  if (json::object* host_path = MutableObject(volume, "hostPath")) {
    SetIfUnset(*host_path, "type", "");
  }
}

void CopyLimitsToRequests(json::object& container) {
  json::object* resources = MutableObject(container, "resources");
  const json::object* found = resources ? GetObject(*resources, "limits") : nullptr;
  if (found == nullptr || found->empty()) return;
  json::object limits = *found;  // adding "requests" may move the map it points into
  json::object& requests = EnsureObject(*resources, "requests");
  for (const auto& [key, value] : limits) {
    if (!requests.contains(key)) requests[key] = value;
  }
}

void CheckSupported(const json::object& o, std::string_view key, const std::string& path,
                    const std::vector<std::string>& supported, Causes& out) {
  const json::value* v = o.if_contains(key);
  std::string s = StringAt(o, key);
  if (s.empty()) {
    out.push_back(FieldRequired(Child(path, key), ""));
  } else if (std::find(supported.begin(), supported.end(), s) == supported.end()) {
    out.push_back(FieldNotSupported(Child(path, key), *v, supported));
  }
}

void ValidateName(const json::object& o, const std::string& path, Causes& out) {
  std::string name = StringAt(o, "name");
  if (name.empty()) {
    out.push_back(FieldRequired(Child(path, "name"), ""));
    return;
  }
  for (std::string& msg : IsDNS1123Label(name)) {
    out.push_back(FieldInvalid(Child(path, "name"), json::string(name), msg));
  }
}

void ValidatePortNumber(const json::object& port, std::string_view key, const std::string& path,
                        bool required, Causes& out) {
  std::optional<int64_t> n = GetInt(port, key);
  if (!n || *n == 0) {
    if (required) out.push_back(FieldRequired(Child(path, key), ""));
    return;
  }
  if (*n < 1 || *n > 65535) {
    out.push_back(FieldInvalid(Child(path, key), *n, "must be between 1 and 65535, inclusive"));
  }
}

void ValidateContainerPorts(const json::object& c, const std::string& path, Causes& out) {
  std::set<std::string> names;
  std::vector<const json::object*> ports = ObjectsAt(c, "ports");
  for (size_t i = 0; i < ports.size(); ++i) {
    std::string at = Index(Child(path, "ports"), i);
    std::string name = StringAt(*ports[i], "name");
    if (!name.empty()) {
      std::vector<std::string> msgs = IsValidPortName(name);
      for (std::string& msg : msgs) {
        out.push_back(FieldInvalid(Child(at, "name"), json::string(name), msg));
      }
      if (msgs.empty() && !names.insert(name).second) {
        out.push_back(FieldDuplicate(Child(at, "name"), json::string(name)));
      }
    }
    ValidatePortNumber(*ports[i], "containerPort", at, true, out);
    ValidatePortNumber(*ports[i], "hostPort", at, false, out);
    CheckSupported(*ports[i], "protocol", at, {"SCTP", "TCP", "UDP"}, out);
  }
}

void ValidateVolumeMounts(const json::object& c, const std::string& path,
                          const std::set<std::string>& volumes, Causes& out) {
  std::vector<const json::object*> mounts = ObjectsAt(c, "volumeMounts");
  for (size_t i = 0; i < mounts.size(); ++i) {
    std::string at = Index(Child(path, "volumeMounts"), i);
    std::string name = StringAt(*mounts[i], "name");
    if (name.empty()) out.push_back(FieldRequired(Child(at, "name"), ""));
    if (!volumes.contains(name)) {
      out.push_back(
          StatusCause{"FieldValueNotFound", "Not found: " + QuoteGo(name), Child(at, "name")});
    }
    if (StringAt(*mounts[i], "mountPath").empty()) {
      out.push_back(FieldRequired(Child(at, "mountPath"), ""));
    }
  }
}

void ValidateContainers(const json::object& spec, std::string_view key, const std::string& path,
                        const std::set<std::string>& volumes, std::set<std::string>& names,
                        Causes& out) {
  std::vector<const json::object*> containers = ObjectsAt(spec, key);
  std::string list_path = Child(path, key);
  if (containers.empty() && key == "containers") {
    out.push_back(FieldRequired(list_path, ""));
    return;
  }
  for (size_t i = 0; i < containers.size(); ++i) {
    const json::object& c = *containers[i];
    std::string at = Index(list_path, i);
    ValidateName(c, at, out);
    if (StringAt(c, "image").empty()) out.push_back(FieldRequired(Child(at, "image"), ""));
    CheckSupported(c, "terminationMessagePolicy", at, {"File", "FallbackToLogsOnError"}, out);
    ValidateContainerPorts(c, at, out);
    ValidateVolumeMounts(c, at, volumes, out);
    CheckSupported(c, "imagePullPolicy", at, {"Always", "IfNotPresent", "Never"}, out);
    std::string name = StringAt(c, "name");
    if (!names.insert(name).second) {
      out.push_back(FieldDuplicate(Child(at, "name"), json::string(name)));
    }
  }
}

std::set<std::string> ValidateVolumes(const json::object& spec, const std::string& path,
                                      Causes& out) {
  std::set<std::string> names;
  std::vector<const json::object*> volumes = ObjectsAt(spec, "volumes");
  for (size_t i = 0; i < volumes.size(); ++i) {
    std::string at = Index(Child(path, "volumes"), i);
    ValidateName(*volumes[i], at, out);
    std::string name = StringAt(*volumes[i], "name");
    if (!names.insert(name).second) {
      out.push_back(FieldDuplicate(Child(at, "name"), json::string(name)));
    }
  }
  return names;
}

}  // namespace

void DefaultPodSpec(json::object& spec) {
  SetIfEmpty(spec, "dnsPolicy", "ClusterFirst");
  SetIfEmpty(spec, "restartPolicy", "Always");
  SetIfUnset(spec, "securityContext", json::object());
  SetIfUnset(spec, "terminationGracePeriodSeconds", 30);
  SetIfEmpty(spec, "schedulerName", "default-scheduler");
  ForEachObject(spec, "initContainers", DefaultContainer);
  ForEachObject(spec, "containers", DefaultContainer);
  ForEachObject(spec, "volumes", DefaultVolume);
}

void DefaultPodOnlySpec(json::object& spec) {
  ForEachObject(spec, "initContainers", CopyLimitsToRequests);
  ForEachObject(spec, "containers", CopyLimitsToRequests);
  SetIfUnset(spec, "enableServiceLinks", true);
}

void DefaultPodTemplate(json::object& template_spec) {
  if (json::object* spec = MutableObject(template_spec, "spec")) DefaultPodSpec(*spec);
}

void ValidatePodSpec(const json::object& spec, const std::string& path, Causes& out) {
  std::set<std::string> volumes = ValidateVolumes(spec, path, out);
  std::set<std::string> names;
  ValidateContainers(spec, "containers", path, volumes, names, out);
  ValidateContainers(spec, "initContainers", path, volumes, names, out);
  CheckSupported(spec, "restartPolicy", path, {"Always", "OnFailure", "Never"}, out);
  CheckSupported(spec, "dnsPolicy", path,
                 {"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"}, out);
}

void ValidatePodTemplate(const json::object& template_spec, const std::string& path, Causes& out) {
  const json::object* meta = GetObject(template_spec, "metadata");
  if (meta != nullptr) {
    for (StatusCause& c : ValidateLabels(meta->if_contains("labels"), Child(path, "labels"))) {
      out.push_back(std::move(c));
    }
  }
  const json::object* spec = GetObject(template_spec, "spec");
  ValidatePodSpec(spec ? *spec : EmptyObject(), Child(path, "spec"), out);
}

}  // namespace flotilla::api::kinds
