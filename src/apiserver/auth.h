// Authentication and authorization for the API server.
//
// Authentication follows kube-apiserver's order: a verified TLS client
// certificate (CN = user name, each O = a group) first, then a bearer token
// from the static token file. Anonymous requests are not authenticated; the
// server answers them 401.
//
// A bearer token that is no static token goes to the token validator, when
// one is set (service account tokens, sa_token.h; bootstrap tokens,
// bootstrap_token.h).
//
// Authorization is RBAC (rbac.h, rbac_authorizer.h); this header holds the
// request attributes it decides on. docs/security.md has the details.
#pragma once

#include <openssl/x509.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/token_file.h"
#include "base/status.h"

namespace flotilla::apiserver {

inline constexpr std::string_view kGroupMasters = "system:masters";
inline constexpr std::string_view kGroupViewers = "flotilla:viewers";
inline constexpr std::string_view kGroupAuthenticated = "system:authenticated";

struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;  // includes "system:authenticated"
};

class Authenticator {
 public:
  // Reads a kube-apiserver style static token file (token_file.h). Errors
  // name the file and line.
  static StatusOr<std::unique_ptr<Authenticator>> FromTokenFile(const std::string& path);
  // The same from file contents; `source` names them in errors.
  static StatusOr<std::unique_ptr<Authenticator>> FromTokenCsv(std::string_view text,
                                                               std::string_view source);

  // `authorization`: the Authorization header value, "" when absent. The
  // scheme "Bearer" is case-insensitive; the token is the next space-separated
  // word. `peer_cert`: the TLS client certificate, already verified against
  // the CA by the TLS layer, or nullptr; a certificate with an empty CN is not
  // a credential. Returns nullopt when no valid credential was presented.
  // A token is compared with every known token, each byte of each, so
  // timing reveals neither the token nor which one matched (only whether
  // its length is one a known token has).
  // `why`, when not null, gets the validator's reason a token was refused
  // (an expired bootstrap token), for the 401's message; else stays as it is.
  // Thread-safe.
  std::optional<UserInfo> Authenticate(std::string_view authorization, X509* peer_cert,
                                       std::string* why = nullptr) const;

  // Validates bearer tokens the token file does not hold; nullopt: not
  // authenticated, with the reason in `why` (never null) where the
  // validator may tell it. REQUIRES: set before the first Authenticate.
  using TokenValidator =
      std::function<std::optional<UserInfo>(std::string_view token, std::string* why)>;
  void SetTokenValidator(TokenValidator validator) { token_validator_ = std::move(validator); }

 private:
  Authenticator() = default;

  std::optional<UserInfo> FromBearer(std::string_view authorization, std::string* why) const;

  struct Entry {
    std::string token;
    UserInfo user;
  };
  // One per distinct token; every lookup compares against all of them.
  std::vector<Entry> entries_;
  TokenValidator token_validator_;
};

struct RequestAttributes {
  // Resource requests: get list watch create update patch delete
  // deletecollection. Non-resource requests: the lower-cased HTTP method.
  std::string verb;
  std::string group;  // "" for the core group
  std::string resource, subresource, ns, name;
  bool resource_request = true;
  std::string path;  // the request path, used for non-resource requests
};

struct Decision {
  bool allowed = false;
  std::string reason;  // why, for logs and SubjectAccessReview status
};

// The Forbidden Status message exactly as kube-apiserver writes it, e.g.
// `configmaps "x" is forbidden: User "flotilla-viewer" cannot create resource
// "configmaps" in API group "" in the namespace "default"`, or for paths
// `forbidden: User "u" cannot get path "/metrics"`.
std::string ForbiddenMessage(const UserInfo& user, const RequestAttributes& attrs);

}  // namespace flotilla::apiserver
