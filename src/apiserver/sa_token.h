// Service account tokens: the signed, expiring, audience-bound JWTs that
// TokenRequest (`kubectl create token`) hands out, as kube-apiserver makes
// them: ES256 over the claims iss, sub ("system:serviceaccount:NS:NAME"),
// aud, exp, iat, nbf and "kubernetes.io" {namespace, serviceaccount {name,
// uid}}, with a kid naming the signing key. The signing key is an EC P-256
// key kept under the data dir like the CA key (pki.h).
//
// Verification checks the signature, the issuer, exp and nbf against a
// given time, and that an audience is accepted; whether the service account
// still exists is the caller's check (the token carries its uid).
//
// Thread-safe once made.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace flotilla::apiserver {

// kube-apiserver's usual --service-account-issuer, also the default audience.
inline constexpr std::string_view kServiceAccountIssuer =
    "https://kubernetes.default.svc.cluster.local";

struct ServiceAccountClaims {
  std::string ns, name, uid;  // the service account
  std::vector<std::string> audiences;
  TimePoint issued, expiry;
};

class ServiceAccountTokens {
 public:
  // `key_pem`: the EC P-256 private key (PKCS#8 or SEC1 PEM).
  static StatusOr<std::unique_ptr<ServiceAccountTokens>> FromKeyPem(
      std::string_view key_pem, std::string issuer = std::string(kServiceAccountIssuer));
  ~ServiceAccountTokens();

  StatusOr<std::string> Issue(const ServiceAccountClaims& claims) const;
  // Unauthorized with the reason when the token is not valid at `now` for
  // one of `accepted_audiences`.
  StatusOr<ServiceAccountClaims> Verify(std::string_view token, TimePoint now,
                                        const std::vector<std::string>& accepted_audiences) const;

  const std::string& issuer() const { return issuer_; }

 private:
  ServiceAccountTokens() = default;

  struct Key;
  std::unique_ptr<Key> key_;
  std::string issuer_;
  std::string kid_;
};

// Whether `token` has a JWT's shape (three base64url parts), so that the
// authenticator does not try to verify static tokens as JWTs.
bool LooksLikeJwt(std::string_view token);

// When the JWT `token` was issued and when it expires, as its claims iat
// and exp say, unverified: for its holder, to know when to renew it.
// nullopt for anything else.
std::optional<std::pair<TimePoint, TimePoint>> JwtLifetime(std::string_view token);

}  // namespace flotilla::apiserver
