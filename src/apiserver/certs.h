// X.509 building blocks for the PKI (pki.h): RAII owners for OpenSSL objects,
// EC P-256 key generation, certificate issuing, PEM encoding and decoding, and
// the checks EnsurePki needs to decide whether a stored certificate can be
// reused. Nothing here touches the file system or reads the clock: times are
// passed in.
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace flotilla::apiserver::certs {

struct PkeyDeleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;
using X509Ptr = std::unique_ptr<X509, X509Deleter>;

enum class CertKind { kCa, kServer, kClient };

struct CertSpec {
  CertKind kind = CertKind::kClient;
  std::string common_name;                 // no CN entry when empty
  std::vector<std::string> organizations;  // one O= entry each, in order
  std::vector<std::string> hosts;          // subjectAltNames; kServer only
  TimePoint not_before;
  TimePoint not_after;
};

// A fresh EC P-256 key pair.
StatusOr<PkeyPtr> GenerateKey();

// Issues a certificate for the public half of `key` as described by `spec`,
// signed with `issuer_key`. `issuer` is the issuing CA certificate, or nullptr
// for a self-signed certificate (then `issuer_key` must be `key`).
// Hosts that are neither IP addresses nor DNS names are Invalid.
StatusOr<X509Ptr> Issue(const CertSpec& spec, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key);

StatusOr<std::string> CertToPem(X509* cert);
StatusOr<std::string> KeyToPem(EVP_PKEY* key);  // unencrypted PKCS#8
StatusOr<X509Ptr> CertFromPem(std::string_view pem);
StatusOr<PkeyPtr> KeyFromPem(std::string_view pem);

// The canonical form of a SAN as CanonicalSans/CertSans compare them:
// "IP:<address as inet_ntop prints it>" or "DNS:<lower-cased name>".
// Empty when `host` is neither an IP address nor a valid DNS name.
std::string CanonicalSan(std::string_view host);
// The certificate's subjectAltNames in canonical form, sorted.
std::vector<std::string> CertSans(X509* cert);

// The certificate's notAfter.
TimePoint NotAfter(X509* cert);
// The values of the subject's entries with `nid` (NID_commonName,
// NID_organizationName), in order.
std::vector<std::string> SubjectEntries(X509* cert, int nid);

// True when `cert` chains to `ca` and is valid at `at`.
bool VerifiesAgainst(X509* cert, X509* ca, TimePoint at);
// "sha256:" and the hex SHA-256 of the certificate's DER
// SubjectPublicKeyInfo: the pin `kubeadm join --discovery-token-ca-cert-hash`
// takes, and `flotilla agent --ca-cert-hash`.
std::string PublicKeyPin(X509* cert);

// True when `key` is the private half of `cert`'s public key.
bool KeyMatches(X509* cert, EVP_PKEY* key);

}  // namespace flotilla::apiserver::certs
