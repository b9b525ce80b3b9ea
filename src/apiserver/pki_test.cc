#include "apiserver/pki.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "apiserver/auth.h"
#include "apiserver/certs.h"

namespace flotilla::apiserver {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

std::string MakeTempDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/pki_test.XXXXXX";
  char* dir = mkdtemp(tmpl.data());
  EXPECT_NE(dir, nullptr);
  return tmpl;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Runs a shell command; returns its exit status and standard output.
std::pair<int, std::string> RunShell(const std::string& cmd) {
  FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  return {pclose(pipe), out};
}

int Mode(const std::string& path) {
  struct stat st = {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

certs::X509Ptr Cert(const std::string& pem) {
  auto cert = certs::CertFromPem(pem);
  EXPECT_TRUE(cert.ok()) << cert.status().ToString();
  return cert.ok() ? std::move(*cert) : nullptr;
}

// An independent chain check with X509_verify_cert at `at`.
bool ChainVerifies(const std::string& leaf_pem, const std::string& ca_pem, TimePoint at) {
  certs::X509Ptr leaf = Cert(leaf_pem), ca = Cert(ca_pem);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca.get());
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf.get(), nullptr);
  X509_STORE_CTX_set_time(ctx, 0, std::chrono::system_clock::to_time_t(at));
  bool ok = X509_verify_cert(ctx) == 1;
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return ok;
}

class PkiTest : public ::testing::Test {
 protected:
  ~PkiTest() override { std::filesystem::remove_all(dir_); }

  PkiOptions Options() {
    PkiOptions opts;
    opts.dir = dir_ + "/pki";
    opts.hosts = {"flotilla.example.com", "10.0.0.7"};
    opts.clock = &clock_;
    return opts;
  }
  Pki Ensure(const PkiOptions& opts) {
    auto pki = EnsurePki(opts);
    EXPECT_TRUE(pki.ok()) << pki.status().ToString();
    return pki.ok() ? *pki : Pki();
  }
  long long UnixNow() {
    return std::chrono::duration_cast<std::chrono::seconds>(clock_.Now().time_since_epoch())
        .count();
  }

  std::string dir_ = MakeTempDir();
  FakeClock clock_;
};

TEST_F(PkiTest, FirstStartCreatesAVerifyingChain) {
  Pki pki = Ensure(Options());
  EXPECT_EQ(Mode(dir_ + "/pki"), 0700);
  EXPECT_EQ(Mode(pki.ca_key_path), 0600);
  EXPECT_EQ(Mode(pki.serving_key_path), 0600);
  EXPECT_EQ(Mode(pki.token_file_path), 0600);
  EXPECT_EQ(Slurp(pki.ca_cert_path), pki.ca_cert_pem);

  std::string serving = Slurp(pki.serving_cert_path);
  EXPECT_TRUE(ChainVerifies(serving, pki.ca_cert_pem, clock_.Now()));
  EXPECT_TRUE(ChainVerifies(pki.admin_cert_pem, pki.ca_cert_pem, clock_.Now()));
  EXPECT_FALSE(
      ChainVerifies(serving, pki.ca_cert_pem, clock_.Now() + std::chrono::hours(24 * 400)));

  certs::X509Ptr ca = Cert(pki.ca_cert_pem);
  EXPECT_THAT(certs::SubjectEntries(ca.get(), NID_commonName),
              ElementsAre("flotilla-ca@" + std::to_string(UnixNow())));
  EXPECT_EQ(X509_check_ca(ca.get()), 1);
  EXPECT_GE(certs::NotAfter(ca.get()), clock_.Now() + std::chrono::hours(24 * 3649));

  certs::X509Ptr leaf = Cert(serving);
  EXPECT_THAT(certs::CertSans(leaf.get()),
              UnorderedElementsAre("DNS:localhost", "DNS:flotilla.example.com", "IP:127.0.0.1",
                                   "IP:::1", "IP:10.0.0.7"));
  EXPECT_EQ(X509_check_ca(leaf.get()), 0);
  EXPECT_EQ(X509_check_host(leaf.get(), "flotilla.example.com", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(leaf.get(), "10.0.0.7", 0), 1);
  EXPECT_NE(X509_check_host(leaf.get(), "other.example.com", 0, 0, nullptr), 1);
  EXPECT_TRUE(certs::KeyMatches(leaf.get(), certs::KeyFromPem(Slurp(pki.serving_key_path))->get()));
  EXPECT_EQ(X509_check_purpose(leaf.get(), X509_PURPOSE_SSL_SERVER, 0), 1);

  certs::X509Ptr admin = Cert(pki.admin_cert_pem);
  EXPECT_THAT(certs::SubjectEntries(admin.get(), NID_commonName), ElementsAre("flotilla-admin"));
  EXPECT_THAT(certs::SubjectEntries(admin.get(), NID_organizationName),
              ElementsAre("system:masters"));
  EXPECT_EQ(X509_check_purpose(admin.get(), X509_PURPOSE_SSL_CLIENT, 0), 1);
  EXPECT_NE(X509_check_purpose(admin.get(), X509_PURPOSE_SSL_SERVER, 0), 1);
}

TEST_F(PkiTest, OpensslCliReadsAndVerifiesTheFiles) {
  Pki pki = Ensure(Options());
  std::string attime = " -attime " + std::to_string(UnixNow());
  auto [code, out] = RunShell("openssl verify" + attime + " -CAfile " + pki.ca_cert_path + " " +
                              pki.serving_cert_path);
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, HasSubstr(": OK"));
  auto [text_code, text] = RunShell("openssl x509 -noout -text -in " + pki.serving_cert_path);
  EXPECT_EQ(text_code, 0) << text;
  EXPECT_THAT(text, HasSubstr("DNS:flotilla.example.com"));
  EXPECT_THAT(text, HasSubstr("IP Address:10.0.0.7"));
  EXPECT_THAT(text, HasSubstr("TLS Web Server Authentication"));
  auto [key_code, key_out] = RunShell("openssl pkey -noout -in " + pki.serving_key_path);
  EXPECT_EQ(key_code, 0) << key_out;
  auto [ca_code, ca_out] = RunShell("openssl x509 -noout -text -in " + pki.ca_cert_path);
  EXPECT_EQ(ca_code, 0) << ca_out;
  EXPECT_THAT(ca_out, HasSubstr("CA:TRUE"));
}

TEST_F(PkiTest, SecondStartReusesEverything) {
  Pki first = Ensure(Options());
  std::string serving = Slurp(first.serving_cert_path);
  clock_.Advance(std::chrono::hours(24 * 100));
  Pki second = Ensure(Options());
  EXPECT_EQ(second.ca_cert_pem, first.ca_cert_pem);
  EXPECT_EQ(Slurp(second.serving_cert_path), serving);
  EXPECT_EQ(second.admin_cert_pem, first.admin_cert_pem);
  EXPECT_EQ(second.admin_key_pem, first.admin_key_pem);
  EXPECT_EQ(second.admin_token, first.admin_token);
  EXPECT_EQ(second.readonly_token, first.readonly_token);
}

TEST_F(PkiTest, ChangedSansReissueOnlyTheServingCert) {
  Pki first = Ensure(Options());
  std::string serving = Slurp(first.serving_cert_path);
  PkiOptions opts = Options();
  opts.hosts.push_back("fd00::5");
  Pki second = Ensure(opts);
  EXPECT_EQ(second.ca_cert_pem, first.ca_cert_pem);
  EXPECT_EQ(second.admin_cert_pem, first.admin_cert_pem);
  std::string reissued = Slurp(second.serving_cert_path);
  EXPECT_NE(reissued, serving);
  EXPECT_THAT(certs::CertSans(Cert(reissued).get()), testing::Contains("IP:fd00::5"));
  EXPECT_TRUE(ChainVerifies(reissued, first.ca_cert_pem, clock_.Now()));
  // The same set in another spelling and order is not a change.
  opts.hosts = {"FD00::5", "10.0.0.7", "Flotilla.Example.COM", "localhost"};
  Ensure(opts);
  EXPECT_EQ(Slurp(second.serving_cert_path), reissued);
}

TEST_F(PkiTest, CertsExpiringWithinThirtyDaysAreReissued) {
  Pki first = Ensure(Options());
  std::string serving = Slurp(first.serving_cert_path);
  clock_.Advance(std::chrono::hours(24 * 340));
  Pki second = Ensure(Options());
  EXPECT_EQ(second.ca_cert_pem, first.ca_cert_pem);
  EXPECT_NE(Slurp(second.serving_cert_path), serving);
  EXPECT_NE(second.admin_cert_pem, first.admin_cert_pem);
  EXPECT_TRUE(ChainVerifies(Slurp(second.serving_cert_path), first.ca_cert_pem,
                            clock_.Now() + std::chrono::hours(24 * 300)));
}

TEST_F(PkiTest, TokenFileAuthenticatesTheBuiltInUsers) {
  Pki pki = Ensure(Options());
  EXPECT_EQ(pki.admin_token.size(), 64u);
  EXPECT_EQ(pki.readonly_token.size(), 64u);
  EXPECT_NE(pki.admin_token, pki.readonly_token);
  auto auth = Authenticator::FromTokenFile(pki.token_file_path);
  ASSERT_TRUE(auth.ok()) << auth.status().ToString();
  auto admin = (*auth)->Authenticate("Bearer " + pki.admin_token, nullptr);
  ASSERT_TRUE(admin.has_value());
  EXPECT_EQ(admin->name, "flotilla-admin");
  EXPECT_THAT(admin->groups, ElementsAre("system:masters", "system:authenticated"));
  auto viewer = (*auth)->Authenticate("Bearer " + pki.readonly_token, nullptr);
  ASSERT_TRUE(viewer.has_value());
  EXPECT_EQ(viewer->name, "flotilla-viewer");
  EXPECT_THAT(viewer->groups, ElementsAre("flotilla:viewers", "system:authenticated"));
}

TEST_F(PkiTest, MissingBuiltInTokenRowIsAddedAndOtherRowsKept) {
  Pki first = Ensure(Options());
  std::ofstream(first.token_file_path, std::ios::trunc)
      << "mytoken,ci-bot,ci-bot,\"flotilla:viewers\"\n"
      << first.admin_token << ",flotilla-admin,flotilla-admin,\"system:masters\"";
  Pki second = Ensure(Options());
  EXPECT_EQ(second.admin_token, first.admin_token);
  EXPECT_NE(second.readonly_token, first.readonly_token);
  auto auth = Authenticator::FromTokenFile(second.token_file_path);
  ASSERT_TRUE(auth.ok()) << auth.status().ToString();
  EXPECT_EQ((*auth)->Authenticate("Bearer mytoken", nullptr)->name, "ci-bot");
  EXPECT_EQ((*auth)->Authenticate("Bearer " + second.readonly_token, nullptr)->name,
            "flotilla-viewer");
}

TEST_F(PkiTest, CaCertificateWithoutKeyIsAnError) {
  Pki pki = Ensure(Options());
  std::filesystem::remove(pki.ca_key_path);
  auto again = EnsurePki(Options());
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(), HasSubstr("ca.key"));
}

TEST_F(PkiTest, BadHostIsInvalid) {
  PkiOptions opts = Options();
  opts.hosts = {"not a host"};
  auto pki = EnsurePki(opts);
  ASSERT_FALSE(pki.ok());
  EXPECT_EQ(pki.status().reason(), Reason::kInvalid);
  EXPECT_THAT(pki.status().message(), HasSubstr("not a host"));
  EXPECT_FALSE(std::filesystem::exists(opts.dir));
}

TEST_F(PkiTest, IssueClientCertNamesUserAndGroups) {
  Pki pki = Ensure(Options());
  auto issued = IssueClientCert(pki, "member-a", {"flotilla:members", "team-x"}, clock_);
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  certs::X509Ptr cert = Cert(issued->first);
  EXPECT_THAT(certs::SubjectEntries(cert.get(), NID_commonName), ElementsAre("member-a"));
  EXPECT_THAT(certs::SubjectEntries(cert.get(), NID_organizationName),
              ElementsAre("flotilla:members", "team-x"));
  EXPECT_TRUE(ChainVerifies(issued->first, pki.ca_cert_pem, clock_.Now()));
  EXPECT_TRUE(certs::KeyMatches(cert.get(), certs::KeyFromPem(issued->second)->get()));
  EXPECT_EQ(X509_check_purpose(cert.get(), X509_PURPOSE_SSL_CLIENT, 0), 1);

  auto unnamed = IssueClientCert(pki, "", {}, clock_);
  EXPECT_FALSE(unnamed.ok());
}

}  // namespace
}  // namespace flotilla::apiserver
