// X.509 building blocks over OpenSSL 3. Every OpenSSL object is owned by a
// unique_ptr from the moment it is created; OpenSSL failures become Internal
// statuses carrying the library's first queued error.
#include "apiserver/certs.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>
#include <ctime>

namespace flotilla::apiserver::certs {
namespace {

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct BnDeleter {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
struct GeneralNamesDeleter {
  void operator()(GENERAL_NAMES* g) const { GENERAL_NAMES_free(g); }
};
struct StoreDeleter {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct StoreCtxDeleter {
  void operator()(X509_STORE_CTX* c) const { X509_STORE_CTX_free(c); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, GeneralNamesDeleter>;

// The first queued OpenSSL error as text; clears the queue.
std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

Status SslFailure(std::string_view what) {
  return Status::Internal(std::string(what) + ": " + OpenSslError());
}

time_t ToTimeT(TimePoint t) { return std::chrono::system_clock::to_time_t(t); }

bool ValidDnsName(std::string_view host) {
  if (host.empty() || host.size() > 253 || host.front() == '.' || host.front() == '-') return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '*';
  });
}

// The address bytes of `host` (4 or 16) when it is an IP literal, else "".
std::string IpBytes(std::string_view host) {
  std::string s(host);
  unsigned char buf[16];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1) return std::string(reinterpret_cast<char*>(buf), 4);
  if (inet_pton(AF_INET6, s.c_str(), buf) == 1) {
    return std::string(reinterpret_cast<char*>(buf), 16);
  }
  return "";
}

std::string IpText(const unsigned char* bytes, int len) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (len != 4 && len != 16) return "";
  inet_ntop(len == 4 ? AF_INET : AF_INET6, bytes, buf, sizeof buf);
  return buf;
}

Status SetSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return SslFailure("RAND_bytes");
  bytes[0] = (bytes[0] & 0x7f) | 0x40;  // positive and never zero, as RFC 5280 asks
  std::unique_ptr<BIGNUM, BnDeleter> bn(BN_bin2bn(bytes, sizeof bytes, nullptr));
  if (!bn || !BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert))) {
    return SslFailure("serial number");
  }
  return {};
}

Status AddNameEntry(X509_NAME* name, const char* field, const std::string& value) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(value.data());
  if (X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, bytes, static_cast<int>(value.size()),
                                 -1, 0) != 1) {
    return SslFailure("subject entry " + std::string(field) + "=" + value);
  }
  return {};
}

Status SetSubject(X509* cert, const CertSpec& spec) {
  X509_NAME* name = X509_get_subject_name(cert);
  for (const auto& o : spec.organizations) {
    if (!o.empty()) FLOTILLA_RETURN_IF_ERROR(AddNameEntry(name, "O", o));
  }
  if (spec.common_name.empty()) return {};
  return AddNameEntry(name, "CN", spec.common_name);
}

Status AddConfExtension(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, ctx, nid, value);
  if (ext == nullptr) return SslFailure(std::string("extension ") + value);
  int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  return ok == 1 ? Status() : SslFailure(std::string("extension ") + value);
}

StatusOr<GENERAL_NAME*> MakeGeneralName(const std::string& host) {
  GENERAL_NAME* gen = GENERAL_NAME_new();
  if (gen == nullptr) return SslFailure("GENERAL_NAME_new");
  std::string ip = IpBytes(host);
  ASN1_STRING* value = ip.empty() ? ASN1_IA5STRING_new() : ASN1_OCTET_STRING_new();
  const std::string& data = ip.empty() ? host : ip;
  if (value == nullptr || ASN1_STRING_set(value, data.data(), static_cast<int>(data.size())) != 1) {
    ASN1_STRING_free(value);
    GENERAL_NAME_free(gen);
    return SslFailure("subjectAltName " + host);
  }
  GENERAL_NAME_set0_value(gen, ip.empty() ? GEN_DNS : GEN_IPADD, value);
  return gen;
}

Status AddSubjectAltNames(X509* cert, const std::vector<std::string>& hosts) {
  GeneralNamesPtr names(sk_GENERAL_NAME_new_null());
  if (!names) return SslFailure("GENERAL_NAMES");
  for (const auto& host : hosts) {
    if (IpBytes(host).empty() && !ValidDnsName(host)) {
      return Status::Invalid("\"" + host + "\" is neither an IP address nor a DNS name");
    }
    FLOTILLA_ASSIGN_OR_RETURN(GENERAL_NAME * gen, MakeGeneralName(host));
    if (sk_GENERAL_NAME_push(names.get(), gen) == 0) {
      GENERAL_NAME_free(gen);
      return SslFailure("subjectAltName");
    }
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1) {
    return SslFailure("subjectAltName");
  }
  return {};
}

Status AddExtensions(X509* cert, X509* issuer, const CertSpec& spec) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer != nullptr ? issuer : cert, cert, nullptr, nullptr, 0);
  FLOTILLA_RETURN_IF_ERROR(AddConfExtension(cert, &ctx, NID_subject_key_identifier, "hash"));
  if (spec.kind == CertKind::kCa) {
    FLOTILLA_RETURN_IF_ERROR(
        AddConfExtension(cert, &ctx, NID_basic_constraints, "critical,CA:TRUE"));
    return AddConfExtension(cert, &ctx, NID_key_usage,
                            "critical,digitalSignature,keyCertSign,cRLSign");
  }
  FLOTILLA_RETURN_IF_ERROR(
      AddConfExtension(cert, &ctx, NID_basic_constraints, "critical,CA:FALSE"));
  FLOTILLA_RETURN_IF_ERROR(
      AddConfExtension(cert, &ctx, NID_key_usage, "critical,digitalSignature"));
  if (issuer != nullptr) {
    FLOTILLA_RETURN_IF_ERROR(
        AddConfExtension(cert, &ctx, NID_authority_key_identifier, "keyid:always"));
  }
  if (spec.kind == CertKind::kClient) {
    return AddConfExtension(cert, &ctx, NID_ext_key_usage, "clientAuth");
  }
  FLOTILLA_RETURN_IF_ERROR(AddConfExtension(cert, &ctx, NID_ext_key_usage, "serverAuth"));
  return AddSubjectAltNames(cert, spec.hosts);
}

std::string BioContents(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(len));
}

// Refuses to prompt for a passphrase: our keys are never encrypted.
int NoPassphrase(char*, int, int, void*) { return 0; }

}  // namespace

StatusOr<PkeyPtr> GenerateKey() {
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return SslFailure("generating an EC P-256 key");
  return key;
}

StatusOr<X509Ptr> Issue(const CertSpec& spec, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key) {
  X509Ptr cert(X509_new());
  if (!cert) return SslFailure("X509_new");
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1) return SslFailure("X509_set_version");
  FLOTILLA_RETURN_IF_ERROR(SetSerial(cert.get()));
  if (ASN1_TIME_set(X509_getm_notBefore(cert.get()), ToTimeT(spec.not_before)) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(cert.get()), ToTimeT(spec.not_after)) == nullptr) {
    return SslFailure("validity");
  }
  if (X509_set_pubkey(cert.get(), key) != 1) return SslFailure("X509_set_pubkey");
  FLOTILLA_RETURN_IF_ERROR(SetSubject(cert.get(), spec));
  X509_NAME* issuer_name = X509_get_subject_name(issuer != nullptr ? issuer : cert.get());
  if (X509_set_issuer_name(cert.get(), issuer_name) != 1) return SslFailure("issuer name");
  FLOTILLA_RETURN_IF_ERROR(AddExtensions(cert.get(), issuer, spec));
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) <= 0) return SslFailure("signing");
  return cert;
}

StatusOr<std::string> CertToPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return SslFailure("encoding certificate");
  return BioContents(bio.get());
}

StatusOr<std::string> KeyToPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return SslFailure("encoding private key");
  }
  return BioContents(bio.get());
}

StatusOr<X509Ptr> CertFromPem(std::string_view pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr) : nullptr);
  if (!cert) return Status::BadRequest("not a PEM certificate: " + OpenSslError());
  return cert;
}

StatusOr<PkeyPtr> KeyFromPem(std::string_view pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PkeyPtr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr) : nullptr);
  if (!key) return Status::BadRequest("not a PEM private key: " + OpenSslError());
  return key;
}

std::string CanonicalSan(std::string_view host) {
  std::string ip = IpBytes(host);
  if (!ip.empty()) {
    return "IP:" + IpText(reinterpret_cast<const unsigned char*>(ip.data()), ip.size());
  }
  if (!ValidDnsName(host)) return "";
  std::string lower(host);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return "DNS:" + lower;
}

std::vector<std::string> CertSans(X509* cert) {
  std::vector<std::string> out;
  GeneralNamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* gen = sk_GENERAL_NAME_value(names.get(), i);
    if (gen->type == GEN_DNS) {
      const ASN1_STRING* s = gen->d.dNSName;
      out.push_back(CanonicalSan(std::string_view(
          reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)), ASN1_STRING_length(s))));
    } else if (gen->type == GEN_IPADD) {
      const ASN1_STRING* s = gen->d.iPAddress;
      out.push_back("IP:" + IpText(ASN1_STRING_get0_data(s), ASN1_STRING_length(s)));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TimePoint NotAfter(X509* cert) {
  std::tm tm = {};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) != 1) return TimePoint();
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::vector<std::string> SubjectEntries(X509* cert, int nid) {
  std::vector<std::string> out;
  X509_NAME* name = X509_get_subject_name(cert);
  for (int i = X509_NAME_get_index_by_NID(name, nid, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(name, nid, i)) {
    unsigned char* utf8 = nullptr;
    int len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i)));
    if (len < 0) continue;
    out.emplace_back(reinterpret_cast<char*>(utf8), static_cast<size_t>(len));
    OPENSSL_free(utf8);
  }
  return out;
}

bool VerifiesAgainst(X509* cert, X509* ca, TimePoint at) {
  std::unique_ptr<X509_STORE, StoreDeleter> store(X509_STORE_new());
  std::unique_ptr<X509_STORE_CTX, StoreCtxDeleter> ctx(X509_STORE_CTX_new());
  if (!store || !ctx || X509_STORE_add_cert(store.get(), ca) != 1 ||
      X509_STORE_CTX_init(ctx.get(), store.get(), cert, nullptr) != 1) {
    ERR_clear_error();
    return false;
  }
  X509_STORE_CTX_set_time(ctx.get(), 0, ToTimeT(at));
  bool ok = X509_verify_cert(ctx.get()) == 1;
  ERR_clear_error();
  return ok;
}

bool KeyMatches(X509* cert, EVP_PKEY* key) {
  bool ok = X509_check_private_key(cert, key) == 1;
  ERR_clear_error();
  return ok;
}

std::string PublicKeyPin(X509* cert) {
  unsigned char* der = nullptr;
  int n = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert), &der);
  if (n <= 0) return "";
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(der, static_cast<size_t>(n), md);
  OPENSSL_free(der);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string pin = "sha256:";
  for (unsigned char b : md) {
    pin += kHex[b >> 4];
    pin += kHex[b & 15];
  }
  return pin;
}

}  // namespace flotilla::apiserver::certs
