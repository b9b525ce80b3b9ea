// ES256 service account JWTs (sa_token.h).
#include "apiserver/sa_token.h"

#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include <algorithm>

#include "apiserver/certs.h"
#include "base/base64.h"
#include "base/json.h"

namespace flotilla::apiserver {

struct ServiceAccountTokens::Key {
  certs::PkeyPtr pkey;
};

namespace {

constexpr size_t kCoordinate = 32;  // P-256

std::string Base64Url(std::string_view data) {
  std::string s = Base64Encode(data);
  for (char& c : s) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!s.empty() && s.back() == '=') s.pop_back();
  return s;
}

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  std::string s(text);
  for (char& c : s) {
    if (c == '+' || c == '/' || c == '=') return std::nullopt;
    c = c == '-' ? '+' : c == '_' ? '/' : c;
  }
  while (s.size() % 4 != 0) s += '=';
  return Base64Decode(s);
}

int64_t UnixSeconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

TimePoint FromUnix(int64_t s) { return TimePoint(std::chrono::seconds(s)); }

Status Unauthorized(std::string why) {
  return Status::Unauthorized("invalid bearer token, " + why);
}

// The DER ECDSA signature as JWS's raw r || s.
StatusOr<std::string> DerToRaw(const std::string& der) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
  if (sig == nullptr) return Status::Internal("signing produced no ECDSA signature");
  std::string raw(2 * kCoordinate, '\0');
  const BIGNUM* r = ECDSA_SIG_get0_r(sig);
  const BIGNUM* s = ECDSA_SIG_get0_s(sig);
  BN_bn2binpad(r, reinterpret_cast<unsigned char*>(raw.data()), kCoordinate);
  BN_bn2binpad(s, reinterpret_cast<unsigned char*>(raw.data()) + kCoordinate, kCoordinate);
  ECDSA_SIG_free(sig);
  return raw;
}

std::optional<std::string> RawToDer(std::string_view raw) {
  if (raw.size() != 2 * kCoordinate) return std::nullopt;
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw.data());
  ECDSA_SIG* sig = ECDSA_SIG_new();
  BIGNUM* r = BN_bin2bn(bytes, kCoordinate, nullptr);
  BIGNUM* s = BN_bin2bn(bytes + kCoordinate, kCoordinate, nullptr);
  ECDSA_SIG_set0(sig, r, s);
  unsigned char* der = nullptr;
  int len = i2d_ECDSA_SIG(sig, &der);
  ECDSA_SIG_free(sig);
  if (len <= 0) return std::nullopt;
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(len));
  OPENSSL_free(der);
  return out;
}

std::vector<std::string> Audiences(const json::value* aud) {
  std::vector<std::string> out;
  if (aud == nullptr) return out;
  if (aud->is_string()) out.emplace_back(aud->get_string());
  if (aud->is_array()) {
    for (const json::value& a : aud->get_array()) {
      if (a.is_string()) out.emplace_back(a.get_string());
    }
  }
  return out;
}

}  // namespace

ServiceAccountTokens::~ServiceAccountTokens() = default;

StatusOr<std::unique_ptr<ServiceAccountTokens>> ServiceAccountTokens::FromKeyPem(
    std::string_view key_pem, std::string issuer) {
  FLOTILLA_ASSIGN_OR_RETURN(certs::PkeyPtr pkey, certs::KeyFromPem(key_pem));
  if (EVP_PKEY_get_base_id(pkey.get()) != EVP_PKEY_EC || EVP_PKEY_get_bits(pkey.get()) != 256) {
    return Status::Invalid("the service account signing key must be an EC P-256 key");
  }
  unsigned char* der = nullptr;
  int len = i2d_PUBKEY(pkey.get(), &der);
  if (len <= 0) return Status::Internal("cannot encode the service account public key");
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(der, static_cast<size_t>(len), digest);
  OPENSSL_free(der);
  std::unique_ptr<ServiceAccountTokens> t(new ServiceAccountTokens());
  t->key_ = std::make_unique<Key>(Key{std::move(pkey)});
  t->issuer_ = std::move(issuer);
  t->kid_ = Base64Url(std::string_view(reinterpret_cast<char*>(digest), sizeof digest));
  return t;
}

StatusOr<std::string> ServiceAccountTokens::Issue(const ServiceAccountClaims& c) const {
  json::object header{{"alg", "ES256"}, {"kid", kid_}};
  json::array aud;
  for (const std::string& a : c.audiences) aud.emplace_back(a);
  json::object payload{
      {"aud", std::move(aud)},
      {"exp", UnixSeconds(c.expiry)},
      {"iat", UnixSeconds(c.issued)},
      {"iss", issuer_},
      {"nbf", UnixSeconds(c.issued)},
      {"sub", "system:serviceaccount:" + c.ns + ":" + c.name},
      {"kubernetes.io",
       {{"namespace", c.ns}, {"serviceaccount", {{"name", c.name}, {"uid", c.uid}}}}}};
  std::string signing_input =
      Base64Url(json::serialize(header)) + "." + Base64Url(json::serialize(payload));
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  size_t len = 0;
  std::string der;
  bool ok = EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key_->pkey.get()) == 1 &&
            EVP_DigestSign(ctx, nullptr, &len, nullptr, 0) == 1;
  if (ok) {
    der.resize(len);
    ok = EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(der.data()), &len,
                        reinterpret_cast<const unsigned char*>(signing_input.data()),
                        signing_input.size()) == 1;
    der.resize(len);
  }
  EVP_MD_CTX_free(ctx);
  if (!ok) return Status::Internal("signing a service account token failed");
  FLOTILLA_ASSIGN_OR_RETURN(std::string raw, DerToRaw(der));
  return signing_input + "." + Base64Url(raw);
}

StatusOr<ServiceAccountClaims> ServiceAccountTokens::Verify(
    std::string_view token, TimePoint now, const std::vector<std::string>& accepted) const {
  size_t first = token.find('.');
  size_t second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) {
    return Unauthorized("not a JWT");
  }
  std::string_view signing_input = token.substr(0, second);
  auto header = Base64UrlDecode(token.substr(0, first));
  auto payload = Base64UrlDecode(token.substr(first + 1, second - first - 1));
  auto raw = Base64UrlDecode(token.substr(second + 1));
  if (!header || !payload || !raw) return Unauthorized("malformed JWT");
  auto head = ParseJsonObject(*header);
  if (!head.ok() || StringAt(*head, "alg") != "ES256") return Unauthorized("unsupported algorithm");
  std::optional<std::string> der = RawToDer(*raw);
  if (!der) return Unauthorized("malformed signature");
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool valid =
      EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key_->pkey.get()) == 1 &&
      EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(der->data()), der->size(),
                       reinterpret_cast<const unsigned char*>(signing_input.data()),
                       signing_input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  if (!valid) return Unauthorized("signature is invalid");
  auto claims = ParseJsonObject(*payload);
  if (!claims.ok()) return Unauthorized("malformed claims");
  if (StringAt(*claims, "iss") != issuer_) return Unauthorized("unknown issuer");
  ServiceAccountClaims out;
  // "kubernetes.io" holds a dot, so it is looked up as one key.
  const json::object* k8s = GetObject(*claims, "kubernetes.io");
  const json::object none;
  const json::object& private_claims = k8s != nullptr ? *k8s : none;
  out.ns = StringAt(private_claims, "namespace");
  out.name = StringAt(private_claims, "serviceaccount.name");
  out.uid = StringAt(private_claims, "serviceaccount.uid");
  out.audiences = Audiences(claims->if_contains("aud"));
  out.issued = FromUnix(GetInt(*claims, "iat").value_or(0));
  out.expiry = FromUnix(GetInt(*claims, "exp").value_or(0));
  if (out.ns.empty() || out.name.empty() ||
      StringAt(*claims, "sub") != "system:serviceaccount:" + out.ns + ":" + out.name) {
    return Unauthorized("not a service account token");
  }
  if (now >= out.expiry) return Unauthorized("token has expired");
  if (now < FromUnix(GetInt(*claims, "nbf").value_or(0))) {
    return Unauthorized("token is not valid yet");
  }
  bool audience_ok = std::any_of(out.audiences.begin(), out.audiences.end(), [&](const auto& a) {
    return std::find(accepted.begin(), accepted.end(), a) != accepted.end();
  });
  if (!audience_ok) return Unauthorized("token audiences are not accepted");
  return out;
}

bool LooksLikeJwt(std::string_view token) {
  return std::count(token.begin(), token.end(), '.') == 2 &&
         token.find_first_not_of(
             "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") ==
             std::string_view::npos;
}

std::optional<std::pair<TimePoint, TimePoint>> JwtLifetime(std::string_view token) {
  if (!LooksLikeJwt(token)) return std::nullopt;
  size_t first = token.find('.');
  size_t second = token.find('.', first + 1);
  auto payload = Base64UrlDecode(token.substr(first + 1, second - first - 1));
  if (!payload) return std::nullopt;
  auto claims = ParseJsonObject(*payload);
  if (!claims.ok()) return std::nullopt;
  auto iat = GetInt(*claims, "iat");
  auto exp = GetInt(*claims, "exp");
  if (!iat || !exp || *exp <= *iat) return std::nullopt;
  return std::make_pair(TimePoint(std::chrono::seconds(*iat)),
                        TimePoint(std::chrono::seconds(*exp)));
}

}  // namespace flotilla::apiserver
