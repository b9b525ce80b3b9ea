// Any bytes as a bearer token, and as the claims of a token the server
// signs. Untrusted tokens: LooksLikeJwt and Verify refuse everything that is
// not a token this key signed, and never crash. Signed claims: whatever
// names, uid and audiences a TokenRequest carries (as valid UTF-8, which the
// API guarantees), Verify reads back exactly what Issue wrote.
#include <string>
#include <vector>

#include "apiserver/sa_token.h"
#include "base/utf8.h"
#include "fuzz/targets.h"

namespace flotilla::fuzz {
namespace {

// A fixed P-256 key: the target must be deterministic.
constexpr char kKey[] = R"(-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgzGtreFOCNFUFZaIF
0lpfvoWJX6s7KuuJzu0AP33s2+uhRANCAATTAVrHr1JjOKZVXsvMxJqyG/bJE2mr
qwJqAHYF2FoU0ydMGGUkY9xkOUH5dDUqKd+cC8N15vw2ZZYstx8Ow8HX
-----END PRIVATE KEY-----
)";

const apiserver::ServiceAccountTokens& Tokens() {
  static const auto* tokens = [] {
    auto t = apiserver::ServiceAccountTokens::FromKeyPem(kKey);
    if (!t.ok()) Broken("the fixed signing key does not load", t.status().ToString());
    return t->release();
  }();
  return *tokens;
}

std::vector<std::string> Split(std::string_view text, char sep) {
  std::vector<std::string> out(1);
  for (char c : text) {
    if (c == sep) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

}  // namespace

void ServiceAccountToken(std::span<const uint8_t> data) {
  const std::vector<std::string> api{std::string(apiserver::kServiceAccountIssuer)};
  const TimePoint now = TimePoint(std::chrono::seconds(1'800'000'000));
  std::string_view text = AsText(data);
  if (text.empty() || text[0] != '!') {
    (void)apiserver::LooksLikeJwt(text);
    if (Tokens().Verify(text, now, api).ok()) Broken("an unsigned token verifies", text);
    return;
  }
  // "!ns\0name\0uid\0aud1\0aud2...": claims the server signs.
  std::vector<std::string> parts = Split(ToValidUtf8(text.substr(1)), '\0');
  parts.resize(std::max<size_t>(parts.size(), 3));
  apiserver::ServiceAccountClaims claims{parts[0], parts[1], parts[2],
                                         {},       now,      now + std::chrono::hours(1)};
  claims.audiences.assign(parts.begin() + 3, parts.end());
  if (claims.audiences.empty()) claims.audiences = api;
  auto token = Tokens().Issue(claims);
  if (!token.ok()) Broken("signing failed", token.status().ToString());
  auto back = Tokens().Verify(*token, now, claims.audiences);
  bool named = !claims.ns.empty() && !claims.name.empty();
  if (back.ok() != named) Broken("a signed token's verification", *token);
  if (back.ok() && (back->ns != claims.ns || back->name != claims.name || back->uid != claims.uid ||
                    back->audiences != claims.audiences)) {
    Broken("a signed token reads back different claims", *token);
  }
}

}  // namespace flotilla::fuzz
