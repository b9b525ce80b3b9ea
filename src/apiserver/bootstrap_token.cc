// Bootstrap tokens (bootstrap_token.h).
#include "apiserver/bootstrap_token.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "base/base64.h"

namespace flotilla::apiserver {
namespace {

constexpr std::string_view kAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz";
constexpr size_t kIdLength = 6, kSecretLength = 16;

bool TokenChars(std::string_view s, size_t length) {
  if (s.size() != length) return false;
  for (char c : s) {
    if (kAlphabet.find(c) == std::string_view::npos) return false;
  }
  return true;
}

std::string RandomChars(size_t n) {
  std::string out;
  while (out.size() < n) {
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1) std::abort();  // no entropy: nothing is safe
    for (unsigned char b : bytes) {
      // 252 = 7 * 36: the bytes above it are dropped, so every character is
      // equally likely.
      if (b < 252 && out.size() < n) out += kAlphabet[b % kAlphabet.size()];
    }
  }
  return out;
}

}  // namespace

std::optional<BootstrapToken> ParseBootstrapToken(std::string_view text) {
  size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  BootstrapToken token{std::string(text.substr(0, dot)), std::string(text.substr(dot + 1))};
  if (!TokenChars(token.id, kIdLength) || !TokenChars(token.secret, kSecretLength)) {
    return std::nullopt;
  }
  return token;
}

BootstrapToken NewBootstrapToken() { return {RandomChars(kIdLength), RandomChars(kSecretLength)}; }

json::object BootstrapTokenSecret(const BootstrapTokenSpec& spec) {
  json::object data{{"token-id", Base64Encode(spec.token.id)},
                    {"token-secret", Base64Encode(spec.token.secret)},
                    {"usage-bootstrap-authentication", Base64Encode("true")}};
  if (spec.expiration) data["expiration"] = Base64Encode(FormatRfc3339(*spec.expiration));
  if (!spec.description.empty()) data["description"] = Base64Encode(spec.description);
  if (!spec.extra_groups.empty()) {
    std::string groups;
    for (const std::string& g : spec.extra_groups) groups += (groups.empty() ? "" : ",") + g;
    data["auth-extra-groups"] = Base64Encode(groups);
  }
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"metadata",
                       {{"name", std::string(kBootstrapTokenSecretPrefix) + spec.token.id},
                        {"namespace", std::string(kBootstrapTokenNamespace)}}},
                      {"type", std::string(kBootstrapTokenSecretType)},
                      {"data", std::move(data)}};
}

std::string BootstrapTokenData(const json::object& secret, std::string_view key) {
  const json::object* data = GetObject(secret, "data");
  if (data == nullptr) return "";
  auto encoded = GetString(*data, key);
  if (!encoded) return "";
  return Base64Decode(*encoded).value_or("");
}

std::optional<TimePoint> BootstrapTokenExpiration(const json::object& secret) {
  std::string expiration = BootstrapTokenData(secret, "expiration");
  if (expiration.empty()) return std::nullopt;
  TimePoint at;
  return ParseRfc3339(expiration, &at) ? at : TimePoint::min();
}

std::optional<UserInfo> AuthenticateBootstrapToken(const BootstrapToken& token, Objects& objects,
                                                   std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<UserInfo> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  const std::string invalid = "invalid bootstrap token";
  const api::Resource* secrets = objects.registry().Find("", "v1", "secrets");
  if (secrets == nullptr) return fail(invalid);
  auto secret = objects.Get(*secrets, std::string(kBootstrapTokenNamespace),
                            std::string(kBootstrapTokenSecretPrefix) + token.id);
  if (!secret.ok() || StringAt(*secret, "type") != kBootstrapTokenSecretType ||
      !StringAt(*secret, "metadata.deletionTimestamp").empty()) {
    return fail(invalid);
  }
  std::string stored = BootstrapTokenData(*secret, "token-secret");
  // Compared in constant time: timing tells nothing of the secret.
  if (stored.size() != token.secret.size() ||
      CRYPTO_memcmp(stored.data(), token.secret.data(), stored.size()) != 0 ||
      BootstrapTokenData(*secret, "token-id") != token.id) {
    return fail(invalid);
  }
  // The caller holds the token: from here the reason is theirs to read.
  if (BootstrapTokenData(*secret, "usage-bootstrap-authentication") != "true") {
    return fail("bootstrap token " + token.id + " is not for authentication");
  }
  if (std::optional<TimePoint> at = BootstrapTokenExpiration(*secret)) {
    if (*at == TimePoint::min()) {
      return fail("bootstrap token " + token.id + " has an unreadable expiration");
    }
    if (objects.clock().Now() >= *at) {
      return fail("bootstrap token " + token.id + " expired at " + FormatRfc3339(*at));
    }
  }
  UserInfo user{"system:bootstrap:" + token.id, "", {std::string(kGroupBootstrappers)}};
  std::string groups = BootstrapTokenData(*secret, "auth-extra-groups");
  std::string_view rest = groups;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view group = rest.substr(0, comma);
    while (!group.empty() && group.front() == ' ') group.remove_prefix(1);
    while (!group.empty() && group.back() == ' ') group.remove_suffix(1);
    if (!group.starts_with(std::string(kGroupBootstrappers) + ":")) {
      return fail("bootstrap token " + token.id + " names a group outside " +
                  std::string(kGroupBootstrappers) + ": " + std::string(group));
    }
    user.groups.emplace_back(group);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  user.groups.emplace_back(kGroupAuthenticated);
  return user;
}

}  // namespace flotilla::apiserver
