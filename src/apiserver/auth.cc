// Authentication (static tokens, client certificates) and the fixed
// authorization policy. See auth.h for the contracts and docs/security.md for
// the rules in prose.
#include "apiserver/auth.h"

#include <openssl/objects.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "api/validation.h"
#include "apiserver/certs.h"
#include "apiserver/sa_token.h"

namespace flotilla::apiserver {
namespace {

// Whether `token` is `known`, in time that depends on the lengths alone:
// a token of another length differs at once (as Go's
// subtle.ConstantTimeCompare), one of the same length is compared in full,
// eight bytes at a time, whatever the content (kube-apiserver's token file
// looks tokens up in a map, whose timing depends on the content).
bool SameToken(std::string_view known, std::string_view token) {
  if (known.size() != token.size()) return false;
  uint64_t diff = 0;
  size_t i = 0;
  for (; i + 8 <= known.size(); i += 8) {
    uint64_t a, b;
    std::memcpy(&a, known.data() + i, 8);
    std::memcpy(&b, token.data() + i, 8);
    diff |= a ^ b;
  }
  for (; i < known.size(); ++i) diff |= static_cast<unsigned char>(known[i] ^ token[i]);
  return diff == 0;
}

bool HasGroup(const UserInfo& user, std::string_view group) {
  return std::find(user.groups.begin(), user.groups.end(), group) != user.groups.end();
}

UserInfo Authenticated(UserInfo user) {
  if (!HasGroup(user, kGroupAuthenticated)) user.groups.emplace_back(kGroupAuthenticated);
  return user;
}

std::string_view TrimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

// The user a verified client certificate names: the last CN (as Go's
// crypto/x509 reads it) and every O as a group.
std::optional<UserInfo> FromCertificate(X509* cert) {
  if (cert == nullptr) return std::nullopt;
  std::vector<std::string> cns = certs::SubjectEntries(cert, NID_commonName);
  if (cns.empty() || cns.back().empty()) return std::nullopt;
  return Authenticated(UserInfo{cns.back(), "", certs::SubjectEntries(cert, NID_organizationName)});
}

bool IsBearerScheme(std::string_view scheme) {
  constexpr std::string_view kBearer = "bearer";
  return scheme.size() == kBearer.size() &&
         std::equal(scheme.begin(), scheme.end(), kBearer.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

}  // namespace

StatusOr<std::unique_ptr<Authenticator>> Authenticator::FromTokenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::Internal("cannot read token file " + path + ": " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return FromTokenCsv(text.str(), "token file " + path);
}

StatusOr<std::unique_ptr<Authenticator>> Authenticator::FromTokenCsv(std::string_view text,
                                                                     std::string_view source) {
  FLOTILLA_ASSIGN_OR_RETURN(std::vector<TokenEntry> parsed, ParseTokenCsv(text, source));
  std::unique_ptr<Authenticator> auth(new Authenticator());
  std::map<std::string, size_t> index;  // token -> position in entries_
  for (auto& e : parsed) {
    Entry entry{e.token, Authenticated(UserInfo{e.user, e.uid, std::move(e.groups)})};
    auto [it, inserted] = index.emplace(entry.token, auth->entries_.size());
    if (inserted) {
      auth->entries_.push_back(std::move(entry));
    } else {
      auth->entries_[it->second] = std::move(entry);  // a later duplicate wins
    }
  }
  return auth;
}

std::optional<UserInfo> Authenticator::Authenticate(std::string_view authorization, X509* peer_cert,
                                                    std::string* why) const {
  if (std::optional<UserInfo> user = FromCertificate(peer_cert)) return user;
  return FromBearer(authorization, why);
}

std::optional<UserInfo> Authenticator::FromBearer(std::string_view authorization,
                                                  std::string* why) const {
  std::string_view header = TrimSpace(authorization);
  size_t space = header.find(' ');
  if (space == std::string_view::npos || !IsBearerScheme(header.substr(0, space))) {
    return std::nullopt;
  }
  std::string_view rest = header.substr(space + 1);
  std::string_view token = rest.substr(0, rest.find(' '));
  if (token.empty()) return std::nullopt;
  const Entry* match = nullptr;
  for (const Entry& e : entries_) {
    // No early exit: every entry is compared, whatever matches.
    match = SameToken(e.token, token) ? &e : match;
  }
  if (match != nullptr) return match->user;
  if (!token_validator_) return std::nullopt;
  std::string reason;
  std::optional<UserInfo> user = token_validator_(token, &reason);
  if (!user && why != nullptr && !reason.empty()) *why = std::move(reason);
  return user;
}

std::string ForbiddenMessage(const UserInfo& user, const RequestAttributes& attrs) {
  if (!attrs.resource_request) {
    return "forbidden: User " + api::QuoteGo(user.name) + " cannot " + attrs.verb + " path " +
           api::QuoteGo(attrs.path);
  }
  std::string qualified = attrs.group.empty() ? attrs.resource : attrs.resource + "." + attrs.group;
  std::string prefix = attrs.name.empty()
                           ? qualified + " is forbidden: "
                           : qualified + " " + api::QuoteGo(attrs.name) + " is forbidden: ";
  std::string resource =
      attrs.subresource.empty() ? attrs.resource : attrs.resource + "/" + attrs.subresource;
  std::string scope =
      attrs.ns.empty() ? " at the cluster scope" : " in the namespace " + api::QuoteGo(attrs.ns);
  return prefix + "User " + api::QuoteGo(user.name) + " cannot " + attrs.verb + " resource " +
         api::QuoteGo(resource) + " in API group " + api::QuoteGo(attrs.group) + scope;
}

}  // namespace flotilla::apiserver
