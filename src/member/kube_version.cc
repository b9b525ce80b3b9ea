// What older Kubernetes versions serve and write (kube_version.h).
#include "member/kube_version.h"

#include <algorithm>
#include <map>
#include <memory>

#include "api/kinds/kinds.h"
#include "base/mutex.h"

namespace flotilla::member {
namespace {

// Service fields newer than 1.19 (spec.ipFamilies and ipFamilyPolicy in
// 1.20, internalTrafficPolicy in 1.21).
const std::vector<KubeVersion::Field> kServiceFieldsAfter119 = {
    {"Service", "spec.ipFamilies"},
    {"Service", "spec.ipFamilyPolicy"},
    {"Service", "spec.internalTrafficPolicy"},
};

const std::vector<KubeVersion>& Profiles() {
  static const std::vector<KubeVersion> kProfiles = {
      // The release Federation v1 was built against (../realmember runs it).
      {.name = "1.10",
       .git_version = "v1.10.13",
       .missing_group_versions = {"autoscaling/v2", "apiextensions.k8s.io/v1", "policy/v1"},
       .unknown_fields = kServiceFieldsAfter119,
       .null_template_creation_timestamp = true},
      {.name = "1.19",
       .git_version = "v1.19.16",
       .missing_group_versions = {"autoscaling/v2", "policy/v1"},
       .unknown_fields = kServiceFieldsAfter119,
       .null_template_creation_timestamp = true},
      // policy/v1 is GA from 1.21, autoscaling/v2 from 1.23.
      {.name = "1.25", .git_version = "v1.25.16", .null_template_creation_timestamp = true},
  };
  return kProfiles;
}

// Erases the field at dotted `path` from `obj`.
void Erase(json::object& obj, std::string_view path) {
  json::object* at = &obj;
  size_t dot;
  while ((dot = path.find('.')) != std::string_view::npos) {
    json::value* next = at->if_contains(path.substr(0, dot));
    if (next == nullptr || !next->is_object()) return;
    at = &next->get_object();
    path.remove_prefix(dot + 1);
  }
  at->erase(path);
}

// The writes of `version`: what it drops, and its template metadata.
void Rewrite(const KubeVersion& version, json::object& obj) {
  std::string_view kind = GetString(obj, "kind").value_or("");
  for (const KubeVersion::Field& f : version.unknown_fields) {
    if (f.kind == kind) Erase(obj, f.path);
  }
  if (!version.null_template_creation_timestamp) return;
  json::value* spec = obj.if_contains("spec");
  json::value* tmpl =
      spec != nullptr && spec->is_object() ? spec->get_object().if_contains("template") : nullptr;
  if (tmpl == nullptr || !tmpl->is_object()) return;
  json::object& meta = EnsureObject(tmpl->get_object(), "metadata");
  if (!meta.contains("creationTimestamp")) meta["creationTimestamp"] = nullptr;
}

std::unique_ptr<api::Registry> Build(const KubeVersion* version) {
  // The foundation kinds are registered together; a member copies all of
  // them but the federation's own group.
  api::Registry foundation;
  api::RegisterFoundationKinds(foundation);
  api::RegisterMemberKinds(foundation);
  auto out = std::make_unique<api::Registry>();
  for (const auto& res : foundation.All()) {
    if (res->group == "federation") continue;
    if (version != nullptr && !version->Serves(res->ApiVersion())) continue;
    api::Resource r = *res;
    if (version != nullptr) {
      r.default_fn = [version, inner = r.default_fn](json::object& obj) {
        if (inner) inner(obj);
        Rewrite(*version, obj);
      };
    }
    out->Add(std::move(r));
  }
  return out;
}

}  // namespace

bool KubeVersion::Serves(std::string_view api_version) const {
  return std::find(missing_group_versions.begin(), missing_group_versions.end(), api_version) ==
         missing_group_versions.end();
}

const KubeVersion* FindKubeVersion(std::string_view name) {
  for (const KubeVersion& v : Profiles()) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

std::vector<std::string> KubeVersionNames() {
  std::vector<std::string> out;
  for (const KubeVersion& v : Profiles()) out.push_back(v.name);
  return out;
}

const api::Registry& MemberRegistry(const KubeVersion* version) {
  static Mutex mu;
  static std::map<const KubeVersion*, std::unique_ptr<api::Registry>> built;
  MutexLock lock(mu);
  std::unique_ptr<api::Registry>& r = built[version];
  if (!r) r = Build(version);
  return *r;
}

}  // namespace flotilla::member
