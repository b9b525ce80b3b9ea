// Authentication (static tokens, client certificates) and the fixed
// authorization policy. See auth.h for the contracts and docs/security.md for
// the rules in prose.
#include "apiserver/auth.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "apiserver/certs.h"

namespace flotilla::apiserver {
namespace {

std::string Sha256(std::string_view data) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  return std::string(reinterpret_cast<char*>(md), sizeof md);
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

// Go's %q for the strings Kubernetes puts in messages.
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

bool IsBearerScheme(std::string_view scheme) {
  constexpr std::string_view kBearer = "bearer";
  return scheme.size() == kBearer.size() &&
         std::equal(scheme.begin(), scheme.end(), kBearer.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

bool IsReadVerb(std::string_view verb) {
  return verb == "get" || verb == "list" || verb == "watch";
}

// Paths Kubernetes' system:discovery and system:public-info-viewer roles open
// to every authenticated user.
bool IsPublicPath(std::string_view path) {
  static constexpr std::array<std::string_view, 8> kExact = {
      "/api", "/apis", "/healthz", "/livez", "/readyz", "/version", "/version/", "/openapi"};
  static constexpr std::array<std::string_view, 3> kPrefix = {"/api/", "/apis/", "/openapi/"};
  if (std::find(kExact.begin(), kExact.end(), path) != kExact.end()) return true;
  return std::any_of(kPrefix.begin(), kPrefix.end(),
                     [&](std::string_view p) { return path.substr(0, p.size()) == p; });
}

// What system:basic-user grants: asking what one may do oneself.
bool IsSelfReview(const RequestAttributes& a) {
  if (a.verb != "create" || !a.subresource.empty()) return false;
  if (a.group == "authorization.k8s.io") {
    return a.resource == "selfsubjectaccessreviews" || a.resource == "selfsubjectrulesreviews";
  }
  return a.group == "authentication.k8s.io" && a.resource == "selfsubjectreviews";
}

std::string Describe(const UserInfo& user) {
  std::string groups;
  for (const auto& g : user.groups) groups += (groups.empty() ? "" : ", ") + Quote(g);
  return "user " + Quote(user.name) + " (groups [" + groups + "])";
}

std::string NoRule(const UserInfo& user, const RequestAttributes& a) {
  std::string what =
      a.resource_request
          ? Quote(a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource)
          : "path " + Quote(a.path);
  return "no rule allows " + Describe(user) + " to " + a.verb + " " + what;
}

Decision AuthorizeNonResource(const UserInfo& user, const RequestAttributes& a) {
  bool read = a.verb == "get" || a.verb == "head";
  if (read && HasGroup(user, kGroupAuthenticated) && IsPublicPath(a.path)) {
    return {true, "allowed: " + Quote(a.path) + " is open to every authenticated user"};
  }
  if (read && HasGroup(user, kGroupViewers)) {
    return {true, "allowed: group \"flotilla:viewers\" may read every path"};
  }
  return {false, NoRule(user, a)};
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
  std::map<std::string, size_t> index;  // digest -> position in entries_
  for (auto& e : parsed) {
    Entry entry{Sha256(e.token), Authenticated(UserInfo{e.user, e.uid, std::move(e.groups)})};
    auto [it, inserted] = index.emplace(entry.digest, auth->entries_.size());
    if (inserted) {
      auth->entries_.push_back(std::move(entry));
    } else {
      auth->entries_[it->second] = std::move(entry);  // a later duplicate wins
    }
  }
  return auth;
}

std::optional<UserInfo> Authenticator::Authenticate(std::string_view authorization,
                                                    X509* peer_cert) const {
  if (std::optional<UserInfo> user = FromCertificate(peer_cert)) return user;
  return FromBearer(authorization);
}

std::optional<UserInfo> Authenticator::FromBearer(std::string_view authorization) const {
  std::string_view header = TrimSpace(authorization);
  size_t space = header.find(' ');
  if (space == std::string_view::npos || !IsBearerScheme(header.substr(0, space))) {
    return std::nullopt;
  }
  std::string_view rest = header.substr(space + 1);
  std::string_view token = rest.substr(0, rest.find(' '));
  if (token.empty()) return std::nullopt;
  std::string digest = Sha256(token);
  const Entry* match = nullptr;
  for (const Entry& e : entries_) {
    // No early exit: every entry is compared, whatever matches.
    bool equal = CRYPTO_memcmp(e.digest.data(), digest.data(), digest.size()) == 0;
    match = equal ? &e : match;
  }
  if (match == nullptr) return std::nullopt;
  return match->user;
}

Decision Authorize(const UserInfo& user, const RequestAttributes& attrs) {
  if (HasGroup(user, kGroupMasters)) {
    return {true, "allowed: group \"system:masters\" may do everything"};
  }
  if (!attrs.resource_request) return AuthorizeNonResource(user, attrs);
  if (HasGroup(user, kGroupAuthenticated) && IsSelfReview(attrs)) {
    return {true, "allowed: every authenticated user may review their own access"};
  }
  if (HasGroup(user, kGroupViewers) && IsReadVerb(attrs.verb)) {
    // Secrets hold member cluster credentials; reading them is not viewing.
    if (attrs.group.empty() && attrs.resource == "secrets") {
      return {false, "group \"flotilla:viewers\" may not read secrets"};
    }
    return {true, "allowed: group \"flotilla:viewers\" may get, list and watch"};
  }
  return {false, NoRule(user, attrs)};
}

std::string ForbiddenMessage(const UserInfo& user, const RequestAttributes& attrs) {
  if (!attrs.resource_request) {
    return "forbidden: User " + Quote(user.name) + " cannot " + attrs.verb + " path " +
           Quote(attrs.path);
  }
  std::string qualified = attrs.group.empty() ? attrs.resource : attrs.resource + "." + attrs.group;
  std::string prefix = attrs.name.empty() ? qualified + " is forbidden: "
                                          : qualified + " " + Quote(attrs.name) + " is forbidden: ";
  std::string resource =
      attrs.subresource.empty() ? attrs.resource : attrs.resource + "/" + attrs.subresource;
  std::string scope =
      attrs.ns.empty() ? " at the cluster scope" : " in the namespace " + Quote(attrs.ns);
  return prefix + "User " + Quote(user.name) + " cannot " + attrs.verb + " resource " +
         Quote(resource) + " in API group " + Quote(attrs.group) + scope;
}

}  // namespace flotilla::apiserver
