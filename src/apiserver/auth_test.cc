#include "apiserver/auth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "apiserver/auth_test_util.h"
#include "apiserver/certs.h"

namespace flotilla::apiserver {
namespace {

using ::flotilla::apiserver::testing::Path;
using ::flotilla::apiserver::testing::Resource;
using ::flotilla::apiserver::testing::User;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kTokens[] =
    "admintok,flotilla-admin,admin-uid,\"system:masters\"\n"
    "viewtok,flotilla-viewer,viewer-uid,\"flotilla:viewers\"\n"
    "multitok,multi,multi-uid,\"g1,g2\"\n"
    "plaintok,plain,plain-uid\n";

std::unique_ptr<Authenticator> MakeAuthenticator(std::string_view csv = kTokens) {
  auto auth = Authenticator::FromTokenCsv(csv, "test tokens");
  EXPECT_TRUE(auth.ok()) << auth.status().ToString();
  return auth.ok() ? std::move(*auth) : nullptr;
}

// A self-signed client certificate with the given subject; the TLS layer's
// verification is not the authenticator's business.
certs::X509Ptr ClientCert(const std::string& cn, const std::vector<std::string>& orgs) {
  auto key = certs::GenerateKey();
  EXPECT_TRUE(key.ok());
  FakeClock clock;
  certs::CertSpec spec{certs::CertKind::kClient,           cn, orgs, {}, clock.Now(),
                       clock.Now() + std::chrono::hours(1)};
  auto cert = certs::Issue(spec, key->get(), nullptr, key->get());
  EXPECT_TRUE(cert.ok()) << cert.status().ToString();
  return std::move(*cert);
}

TEST(AuthenticatorTest, ATokenMatchesOnlyWholeWhateverByteDiffers) {
  // 43 characters: five whole words of eight bytes and a tail of three.
  const std::string token = "Qk7xP2mZ9aLr4TbW8cYd1NvE6hJs3GuF5oKi0yRqXwV";
  ASSERT_EQ(token.size(), 43u);
  auto auth = MakeAuthenticator(token + ",long,long-uid\nshort,short,short-uid\n");
  ASSERT_TRUE(auth->Authenticate("Bearer " + token, nullptr).has_value());
  for (size_t i = 0; i < token.size(); ++i) {
    std::string other = token;
    other[i] = other[i] == 'a' ? 'b' : 'a';
    EXPECT_FALSE(auth->Authenticate("Bearer " + other, nullptr).has_value()) << "byte " << i;
  }
  EXPECT_FALSE(auth->Authenticate("Bearer " + token.substr(0, 40), nullptr).has_value());
  EXPECT_FALSE(auth->Authenticate("Bearer " + token + "x", nullptr).has_value());
  EXPECT_FALSE(auth->Authenticate("Bearer shor", nullptr).has_value());
  EXPECT_FALSE(auth->Authenticate("Bearer shorts", nullptr).has_value());
  auto user = auth->Authenticate("Bearer short", nullptr);
  ASSERT_TRUE(user.has_value());
  EXPECT_EQ(user->name, "short");
}

TEST(AuthenticatorTest, BearerTokensWithGroups) {
  auto auth = MakeAuthenticator();
  auto admin = auth->Authenticate("Bearer admintok", nullptr);
  ASSERT_TRUE(admin.has_value());
  EXPECT_EQ(admin->name, "flotilla-admin");
  EXPECT_EQ(admin->uid, "admin-uid");
  EXPECT_THAT(admin->groups, ElementsAre("system:masters", "system:authenticated"));
  auto multi = auth->Authenticate("Bearer multitok", nullptr);
  ASSERT_TRUE(multi.has_value());
  EXPECT_THAT(multi->groups, ElementsAre("g1", "g2", "system:authenticated"));
  auto plain = auth->Authenticate("Bearer plaintok", nullptr);
  ASSERT_TRUE(plain.has_value());
  EXPECT_THAT(plain->groups, ElementsAre("system:authenticated"));
}

TEST(AuthenticatorTest, BearerSchemeIsCaseInsensitive) {
  auto auth = MakeAuthenticator();
  for (const char* header : {"bearer viewtok", "BEARER viewtok", "BeArEr viewtok",
                             "  Bearer viewtok  ", "Bearer viewtok trailing"}) {
    auto user = auth->Authenticate(header, nullptr);
    ASSERT_TRUE(user.has_value()) << header;
    EXPECT_EQ(user->name, "flotilla-viewer") << header;
  }
}

TEST(AuthenticatorTest, RejectsMissingOrWrongCredentials) {
  auto auth = MakeAuthenticator();
  for (const char* header : {"", "Bearer", "Bearer ", "Bearer  viewtok", "Basic dXNlcjpwdw==",
                             "Bearer viewtokx", "Bearer VIEWTOK", "Token viewtok", "viewtok"}) {
    EXPECT_FALSE(auth->Authenticate(header, nullptr).has_value()) << "'" << header << "'";
  }
}

TEST(AuthenticatorTest, LaterDuplicateTokenWins) {
  auto auth = MakeAuthenticator("t,first,1\nt,second,2,\"g\"\n");
  auto user = auth->Authenticate("Bearer t", nullptr);
  ASSERT_TRUE(user.has_value());
  EXPECT_EQ(user->name, "second");
  EXPECT_THAT(user->groups, ElementsAre("g", "system:authenticated"));
}

TEST(AuthenticatorTest, ClientCertificateNamesUserAndGroups) {
  auto auth = MakeAuthenticator();
  certs::X509Ptr cert = ClientCert("member-a", {"flotilla:members", "system:masters"});
  auto user = auth->Authenticate("", cert.get());
  ASSERT_TRUE(user.has_value());
  EXPECT_EQ(user->name, "member-a");
  EXPECT_EQ(user->uid, "");
  EXPECT_THAT(user->groups,
              ElementsAre("flotilla:members", "system:masters", "system:authenticated"));
  // As in kube-apiserver, the certificate is tried before the token.
  auto both = auth->Authenticate("Bearer viewtok", cert.get());
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->name, "member-a");
}

TEST(AuthenticatorTest, CertificateWithoutCommonNameFallsBackToToken) {
  auto auth = MakeAuthenticator();
  certs::X509Ptr cert = ClientCert("", {"system:masters"});
  EXPECT_FALSE(auth->Authenticate("", cert.get()).has_value());
  auto user = auth->Authenticate("Bearer viewtok", cert.get());
  ASSERT_TRUE(user.has_value());
  EXPECT_EQ(user->name, "flotilla-viewer");
}

TEST(AuthenticatorTest, TokenFileErrors) {
  auto missing = Authenticator::FromTokenFile("/nonexistent/flotilla/tokens.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/flotilla/tokens.csv"));

  const char* base = std::getenv("TEST_TMPDIR");
  std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/auth_test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  std::string path = tmpl + "/tokens.csv";
  std::ofstream(path) << "a,b,c\nbroken\n";
  auto bad = Authenticator::FromTokenFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr(path + " line 2"));
  std::filesystem::remove_all(tmpl);
}

TEST(ForbiddenMessageTest, MatchesKubeApiserver) {
  UserInfo viewer = User("flotilla-viewer", {"flotilla:viewers"});
  EXPECT_EQ(ForbiddenMessage(viewer, Resource("create", "", "configmaps", "default", "x")),
            "configmaps \"x\" is forbidden: User \"flotilla-viewer\" cannot create resource "
            "\"configmaps\" in API group \"\" in the namespace \"default\"");
  EXPECT_EQ(ForbiddenMessage(viewer, Resource("create", "apps", "deployments", "prod")),
            "deployments.apps is forbidden: User \"flotilla-viewer\" cannot create resource "
            "\"deployments\" in API group \"apps\" in the namespace \"prod\"");
  EXPECT_EQ(ForbiddenMessage(viewer, Resource("list", "", "secrets", "")),
            "secrets is forbidden: User \"flotilla-viewer\" cannot list resource \"secrets\" in "
            "API group \"\" at the cluster scope");
  RequestAttributes scale = Resource("update", "apps", "deployments", "default", "web");
  scale.subresource = "scale";
  EXPECT_EQ(ForbiddenMessage(viewer, scale),
            "deployments.apps \"web\" is forbidden: User \"flotilla-viewer\" cannot update "
            "resource \"deployments/scale\" in API group \"apps\" in the namespace \"default\"");
  EXPECT_EQ(ForbiddenMessage(User("nobody", {}), Path("get", "/metrics")),
            "forbidden: User \"nobody\" cannot get path \"/metrics\"");
  EXPECT_EQ(ForbiddenMessage(User("we\"ird", {}), Path("get", "/a\nb")),
            "forbidden: User \"we\\\"ird\" cannot get path \"/a\\nb\"");
}

}  // namespace
}  // namespace flotilla::apiserver
