// The Kubernetes versions a simulated member can present itself as
// (`flotilla member --kube-version`): what a real kube-apiserver of that
// version serves and how it writes objects back. Real servers default
// fields, drop the ones their version does not know and serialize some
// differently, so a federation tested only against members that echo its
// bytes would never see that; these profiles let the suites see it without
// a real cluster (docs/member.md, "Kubernetes versions").
//
// A profile changes the member's API only: the group versions it serves,
// the fields it keeps, the template metadata it writes and /version. Its
// controllers run as before, except those that need an API the version
// does not serve (no HPA controller without autoscaling/v2).
//
// Pure data; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/registry.h"

namespace flotilla::member {

struct KubeVersion {
  std::string name;         // "1.19", as --kube-version takes it
  std::string git_version;  // "v1.19.16", what /version reports
  // API group versions it does not serve ("autoscaling/v2").
  std::vector<std::string> missing_group_versions;
  // Fields it does not know, by kind and dotted path: a write's value is
  // dropped, as an older server's decoder drops unknown fields.
  struct Field {
    std::string kind, path;
  };
  std::vector<Field> unknown_fields;
  // Pod templates come back with "creationTimestamp": null in their
  // metadata (every release through today's serializes the zero time so).
  bool null_template_creation_timestamp = false;

  bool Serves(std::string_view api_version) const;
};

// The profile named `name`; null when there is none. "" is today's
// member (no profile).
const KubeVersion* FindKubeVersion(std::string_view name);
// The names --kube-version takes, oldest first.
std::vector<std::string> KubeVersionNames();

// The kinds a member serves: the foundation kinds without
// federation/v1beta1, and the member kinds, as `version` serves and writes
// them (null: today's member). Built once per version, shared read-only.
const api::Registry& MemberRegistry(const KubeVersion* version = nullptr);

}  // namespace flotilla::member
