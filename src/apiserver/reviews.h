// The requests the server answers rather than stores, as kube-apiserver does:
// - authorization.k8s.io/v1 SelfSubjectAccessReview, SubjectAccessReview,
//   LocalSubjectAccessReview ("may this user do this?", `kubectl auth
//   can-i`) and SelfSubjectRulesReview (`kubectl auth can-i --list`);
// - authentication.k8s.io/v1 SelfSubjectReview (who am I, `kubectl auth
//   whoami`) and TokenReview (who a token is);
// - the serviceaccounts/token subresource: a TokenRequest that returns a
//   signed, expiring service account token (`kubectl create token`).
// The caller has authorized the create itself.
#pragma once

#include "apiserver/auth.h"
#include "apiserver/rbac_authorizer.h"
#include "apiserver/resource_handler.h"
#include "apiserver/sa_token.h"

namespace flotilla::apiserver {

struct ReviewServices {
  const RbacAuthorizer& rbac;
  const Authenticator* authenticator = nullptr;  // null: TokenReview answers unauthenticated
  const ServiceAccountTokens* tokens = nullptr;  // null: TokenRequest is 404
  std::vector<std::string> audiences;            // accepted by the API server
};

// Whether `ctx` is one of the requests above; answers it when it is.
bool ServeReview(ResourceContext& ctx, const UserInfo& user, const ReviewServices& services);

// The user a service account token names, with the groups Kubernetes gives
// service accounts (system:serviceaccounts, system:serviceaccounts:NS,
// system:authenticated); nullopt when the token is invalid at `now` or its
// service account no longer exists with the uid the token carries.
std::optional<UserInfo> AuthenticateServiceAccountToken(std::string_view token,
                                                        const ServiceAccountTokens& tokens,
                                                        const std::vector<std::string>& audiences,
                                                        Objects& objects);

// The token validator of a server (Authenticator::SetTokenValidator): a
// bootstrap token (bootstrap_token.h) by its Secret, a JWT as a service
// account token. `tokens` and `objects` must outlive it.
Authenticator::TokenValidator ServerTokenValidator(const ServiceAccountTokens& tokens,
                                                   std::vector<std::string> audiences,
                                                   Objects& objects);

// The groups of a service account user.
std::vector<std::string> ServiceAccountGroups(std::string_view ns);

}  // namespace flotilla::apiserver
