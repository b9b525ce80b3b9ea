// EnsurePki: creates or reuses the files under PkiOptions::dir. Every file is
// written to a temporary name, synced and renamed, so a crash leaves either
// the old file or the new one. The CA key is written before the CA
// certificate, and leaves only after both, so a key without a certificate
// means nothing was ever issued by it and it can be replaced.
#include "apiserver/pki.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "apiserver/auth.h"
#include "apiserver/certs.h"
#include "apiserver/token_file.h"
#include "base/file.h"

namespace flotilla::apiserver {
namespace {

using std::chrono::hours;

constexpr Duration kCaValidity = hours(24 * 3650);
constexpr Duration kLeafValidity = hours(24 * 365);
constexpr Duration kRenewBefore = hours(24 * 30);
constexpr Duration kBackdate = hours(1);  // tolerates clients whose clocks run behind

struct Paths {
  std::string ca_crt, ca_key, serving_crt, serving_key, admin_crt, admin_key, tokens, sa_key;
};

Paths PathsIn(const std::string& dir) {
  auto p = [&](const char* name) { return (std::filesystem::path(dir) / name).string(); };
  return {p("ca.crt"),    p("ca.key"),    p("serving.crt"), p("serving.key"),
          p("admin.crt"), p("admin.key"), p("tokens.csv"),  p("service-account.key")};
}

Status ErrnoStatus(std::string_view what, const std::string& path) {
  return Status::Internal(std::string(what) + " " + path + ": " + std::strerror(errno));
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

Status EnsureDir(const std::string& dir) {
  if (dir.empty()) return Status::Invalid("PKI directory is empty");
  if (Exists(dir)) return {};
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::Internal("cannot create " + dir + ": " + ec.message());
  if (::chmod(dir.c_str(), 0700) != 0) return ErrnoStatus("cannot chmod", dir);
  return {};
}

StatusOr<std::string> RandomToken() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return Status::Internal("RAND_bytes failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

struct Ca {
  certs::X509Ptr cert;
  certs::PkeyPtr key;
  std::string cert_pem;
};

StatusOr<Ca> LoadCa(const std::string& cert_path, const std::string& key_path) {
  FLOTILLA_ASSIGN_OR_RETURN(std::string cert_pem, ReadFile(cert_path));
  FLOTILLA_ASSIGN_OR_RETURN(std::string key_pem, ReadFile(key_path));
  StatusOr<certs::X509Ptr> cert = certs::CertFromPem(cert_pem);
  if (!cert.ok()) return Status::Internal(cert_path + ": " + cert.status().message());
  StatusOr<certs::PkeyPtr> key = certs::KeyFromPem(key_pem);
  if (!key.ok()) return Status::Internal(key_path + ": " + key.status().message());
  if (!certs::KeyMatches(cert->get(), key->get())) {
    return Status::Internal(key_path + " is not the key of " + cert_path);
  }
  return Ca{std::move(*cert), std::move(*key), std::move(cert_pem)};
}

StatusOr<Ca> CreateCa(const Paths& paths, const std::string& common_name, TimePoint now) {
  FLOTILLA_ASSIGN_OR_RETURN(certs::PkeyPtr key, certs::GenerateKey());
  long long unix_now =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  certs::CertSpec spec{certs::CertKind::kCa,
                       common_name + "-ca@" + std::to_string(unix_now),
                       {},
                       {},
                       now - kBackdate,
                       now + kCaValidity};
  FLOTILLA_ASSIGN_OR_RETURN(certs::X509Ptr cert, certs::Issue(spec, key.get(), nullptr, key.get()));
  FLOTILLA_ASSIGN_OR_RETURN(std::string key_pem, certs::KeyToPem(key.get()));
  FLOTILLA_ASSIGN_OR_RETURN(std::string cert_pem, certs::CertToPem(cert.get()));
  FLOTILLA_RETURN_IF_ERROR(WriteFileAtomic(paths.ca_key, key_pem, 0600));
  FLOTILLA_RETURN_IF_ERROR(WriteFileAtomic(paths.ca_crt, cert_pem, 0644));
  return Ca{std::move(cert), std::move(key), std::move(cert_pem)};
}

StatusOr<Ca> EnsureCa(const Paths& paths, const std::string& common_name, TimePoint now) {
  if (Exists(paths.ca_crt)) {
    if (!Exists(paths.ca_key)) {
      return Status::Internal(paths.ca_crt + " exists but its key " + paths.ca_key +
                              " is missing; restore it or remove the certificate to start over");
    }
    return LoadCa(paths.ca_crt, paths.ca_key);
  }
  return CreateCa(paths, common_name, now);
}

struct Leaf {
  std::string cert_pem, key_pem;
};

StatusOr<Leaf> IssueLeaf(const certs::CertSpec& spec, const Ca& ca) {
  FLOTILLA_ASSIGN_OR_RETURN(certs::PkeyPtr key, certs::GenerateKey());
  FLOTILLA_ASSIGN_OR_RETURN(certs::X509Ptr cert,
                            certs::Issue(spec, key.get(), ca.cert.get(), ca.key.get()));
  FLOTILLA_ASSIGN_OR_RETURN(std::string cert_pem, certs::CertToPem(cert.get()));
  FLOTILLA_ASSIGN_OR_RETURN(std::string key_pem, certs::KeyToPem(key.get()));
  return Leaf{std::move(cert_pem), std::move(key_pem)};
}

// The stored leaf when it can be kept (see EnsurePki), else nullopt.
std::optional<Leaf> ReusableLeaf(const std::string& cert_path, const std::string& key_path,
                                 const certs::CertSpec& spec, const Ca& ca, TimePoint now) {
  StatusOr<std::string> cert_pem = ReadFile(cert_path);
  StatusOr<std::string> key_pem = ReadFile(key_path);
  if (!cert_pem.ok() || !key_pem.ok()) return std::nullopt;
  StatusOr<certs::X509Ptr> cert = certs::CertFromPem(*cert_pem);
  StatusOr<certs::PkeyPtr> key = certs::KeyFromPem(*key_pem);
  if (!cert.ok() || !key.ok() || !certs::KeyMatches(cert->get(), key->get()) ||
      !certs::VerifiesAgainst(cert->get(), ca.cert.get(), now) ||
      certs::NotAfter(cert->get()) < now + kRenewBefore) {
    return std::nullopt;
  }
  if (spec.kind == certs::CertKind::kServer) {
    std::vector<std::string> want;
    for (const auto& h : spec.hosts) want.push_back(certs::CanonicalSan(h));
    std::sort(want.begin(), want.end());
    if (certs::CertSans(cert->get()) != want) return std::nullopt;
  }
  return Leaf{std::move(*cert_pem), std::move(*key_pem)};
}

StatusOr<Leaf> EnsureLeaf(const std::string& cert_path, const std::string& key_path,
                          const certs::CertSpec& spec, const Ca& ca, TimePoint now) {
  if (std::optional<Leaf> kept = ReusableLeaf(cert_path, key_path, spec, ca, now)) return *kept;
  FLOTILLA_ASSIGN_OR_RETURN(Leaf leaf, IssueLeaf(spec, ca));
  FLOTILLA_RETURN_IF_ERROR(WriteFileAtomic(key_path, leaf.key_pem, 0600));
  FLOTILLA_RETURN_IF_ERROR(WriteFileAtomic(cert_path, leaf.cert_pem, 0644));
  return leaf;
}

// localhost, 127.0.0.1, ::1 and `extra`, without duplicates (compared in
// canonical form). Invalid for a host that is neither an IP nor a DNS name.
StatusOr<std::vector<std::string>> ServingHosts(const std::vector<std::string>& extra) {
  std::vector<std::string> hosts = {"localhost", "127.0.0.1", "::1"};
  hosts.insert(hosts.end(), extra.begin(), extra.end());
  std::vector<std::string> out, seen;
  for (const auto& h : hosts) {
    std::string canonical = certs::CanonicalSan(h);
    if (canonical.empty()) {
      return Status::Invalid("serving certificate host \"" + h +
                             "\" is neither an IP address nor a DNS name");
    }
    if (std::find(seen.begin(), seen.end(), canonical) != seen.end()) continue;
    seen.push_back(canonical);
    out.push_back(h);
  }
  return out;
}

// Fills pki->admin_token and readonly_token from the token file, creating the
// file or adding the missing built-in rows.
Status EnsureTokens(const std::string& path, Pki* pki) {
  std::string text;
  if (Exists(path)) {
    FLOTILLA_ASSIGN_OR_RETURN(text, ReadFile(path));
  }
  FLOTILLA_ASSIGN_OR_RETURN(std::vector<TokenEntry> entries,
                            ParseTokenCsv(text, "token file " + path));
  bool changed = false;
  auto ensure = [&](std::string_view user, std::string_view group, std::string* token) -> Status {
    auto it = std::find_if(entries.begin(), entries.end(),
                           [&](const TokenEntry& e) { return e.user == user; });
    if (it != entries.end()) {
      *token = it->token;
      return {};
    }
    FLOTILLA_ASSIGN_OR_RETURN(*token, RandomToken());
    if (!text.empty() && text.back() != '\n') text += '\n';
    std::vector<std::string> groups;
    if (!group.empty()) groups.emplace_back(group);
    text += FormatTokenCsvLine({*token, std::string(user), std::string(user), std::move(groups)});
    changed = true;
    return {};
  };
  FLOTILLA_RETURN_IF_ERROR(ensure(kAdminUser, kGroupMasters, &pki->admin_token));
  FLOTILLA_RETURN_IF_ERROR(ensure(kViewerUser, kGroupViewers, &pki->readonly_token));
  FLOTILLA_RETURN_IF_ERROR(ensure(kControllerUser, "", &pki->controller_token));
  FLOTILLA_RETURN_IF_ERROR(ensure(kRegistrarUser, "", &pki->registrar_token));
  return changed ? WriteFileAtomic(path, text, 0600) : Status();
}

// The service account signing key: made once, kept like the CA key.
StatusOr<std::string> EnsureSigningKey(const std::string& path) {
  if (Exists(path)) return ReadFile(path);
  FLOTILLA_ASSIGN_OR_RETURN(certs::PkeyPtr key, certs::GenerateKey());
  FLOTILLA_ASSIGN_OR_RETURN(std::string pem, certs::KeyToPem(key.get()));
  FLOTILLA_RETURN_IF_ERROR(WriteFileAtomic(path, pem, 0600));
  return pem;
}

}  // namespace

StatusOr<Pki> EnsurePki(const PkiOptions& opts) {
  TimePoint now = (opts.clock != nullptr ? *opts.clock : RealClock()).Now();
  FLOTILLA_ASSIGN_OR_RETURN(std::vector<std::string> hosts, ServingHosts(opts.hosts));
  FLOTILLA_RETURN_IF_ERROR(EnsureDir(opts.dir));
  Paths paths = PathsIn(opts.dir);
  FLOTILLA_ASSIGN_OR_RETURN(Ca ca, EnsureCa(paths, opts.common_name, now));

  certs::CertSpec serving{certs::CertKind::kServer, opts.common_name, {},
                          std::move(hosts),         now - kBackdate,  now + kLeafValidity};
  FLOTILLA_ASSIGN_OR_RETURN(Leaf serving_leaf,
                            EnsureLeaf(paths.serving_crt, paths.serving_key, serving, ca, now));
  certs::CertSpec admin{
      certs::CertKind::kClient, std::string(kAdminUser), {std::string(kGroupMasters)}, {},
      now - kBackdate,          now + kLeafValidity};
  FLOTILLA_ASSIGN_OR_RETURN(Leaf admin_leaf,
                            EnsureLeaf(paths.admin_crt, paths.admin_key, admin, ca, now));

  Pki pki;
  pki.ca_cert_pem = ca.cert_pem;
  pki.ca_cert_path = paths.ca_crt;
  pki.ca_key_path = paths.ca_key;
  pki.serving_cert_path = paths.serving_crt;
  pki.serving_key_path = paths.serving_key;
  pki.admin_cert_pem = std::move(admin_leaf.cert_pem);
  pki.admin_key_pem = std::move(admin_leaf.key_pem);
  pki.token_file_path = paths.tokens;
  FLOTILLA_RETURN_IF_ERROR(EnsureTokens(paths.tokens, &pki));
  FLOTILLA_ASSIGN_OR_RETURN(pki.service_account_key_pem, EnsureSigningKey(paths.sa_key));
  return pki;
}

StatusOr<std::pair<std::string, std::string>> IssueClientCert(
    const Pki& pki, std::string_view user, const std::vector<std::string>& groups, Clock& clock) {
  if (user.empty()) return Status::Invalid("a client certificate needs a user name");
  FLOTILLA_ASSIGN_OR_RETURN(std::string key_pem, ReadFile(pki.ca_key_path));
  StatusOr<certs::X509Ptr> cert = certs::CertFromPem(pki.ca_cert_pem);
  StatusOr<certs::PkeyPtr> key = certs::KeyFromPem(key_pem);
  if (!cert.ok() || !key.ok()) {
    return Status::Internal("cannot load the CA: " +
                            (cert.ok() ? key.status() : cert.status()).message());
  }
  TimePoint now = clock.Now();
  certs::CertSpec spec{certs::CertKind::kClient, std::string(user),  groups, {},
                       now - kBackdate,          now + kLeafValidity};
  FLOTILLA_ASSIGN_OR_RETURN(Leaf leaf, IssueLeaf(spec, Ca{std::move(*cert), std::move(*key), ""}));
  return std::make_pair(std::move(leaf.cert_pem), std::move(leaf.key_pem));
}

}  // namespace flotilla::apiserver
