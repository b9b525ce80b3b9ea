// Bootstrap tokens, as kube-apiserver authenticates them (`kubeadm token`):
// a bearer token "ID.SECRET" (6 and 16 characters of [a-z0-9]) is valid
// while the Secret kube-system/bootstrap-token-ID of type
// bootstrap.kubernetes.io/token holds that token-secret, says
// usage-bootstrap-authentication "true", and its `expiration` (RFC 3339,
// optional) has not passed. The user is "system:bootstrap:ID" in the groups
// system:bootstrappers, the Secret's auth-extra-groups (each must start
// with "system:bootstrappers:") and system:authenticated.
//
// Flotilla's agents register with one (docs/federation.md, "Registering an
// agent with a bootstrap token"); deleting the Secret revokes the token.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/auth.h"
#include "apiserver/objects.h"
#include "base/clock.h"
#include "base/json.h"

namespace flotilla::apiserver {

inline constexpr std::string_view kBootstrapTokenSecretType = "bootstrap.kubernetes.io/token";
inline constexpr std::string_view kBootstrapTokenSecretPrefix = "bootstrap-token-";
inline constexpr std::string_view kBootstrapTokenNamespace = "kube-system";
inline constexpr std::string_view kGroupBootstrappers = "system:bootstrappers";

struct BootstrapToken {
  std::string id, secret;
  std::string String() const { return id + "." + secret; }
};

// The token `text` spells, or nullopt when it is not "ID.SECRET".
std::optional<BootstrapToken> ParseBootstrapToken(std::string_view text);
// A new token from the system's random source.
BootstrapToken NewBootstrapToken();

struct BootstrapTokenSpec {
  BootstrapToken token;
  std::optional<TimePoint> expiration;  // none: never expires
  std::string description;
  std::vector<std::string> extra_groups;  // each "system:bootstrappers:..."
};

// The Secret that makes `spec.token` valid (its data base64-encoded).
json::object BootstrapTokenSecret(const BootstrapTokenSpec& spec);

// The bootstrap token Secret's data field `key`, decoded; "" when absent or
// not base64.
std::string BootstrapTokenData(const json::object& secret, std::string_view key);

// When the bootstrap token Secret `secret` expires: nullopt when it has no
// expiration; TimePoint::min() when it has one that cannot be read (taken as
// passed, as Kubernetes takes it).
std::optional<TimePoint> BootstrapTokenExpiration(const json::object& secret);

// The user the bootstrap token `token` names, when its Secret in `objects`
// makes it valid now; nullopt otherwise, with the reason in `why` (when
// not null) once the caller has shown the token's secret: an expired token
// says so, an unknown one or a wrong secret is only "invalid".
std::optional<UserInfo> AuthenticateBootstrapToken(const BootstrapToken& token, Objects& objects,
                                                   std::string* why);

}  // namespace flotilla::apiserver
