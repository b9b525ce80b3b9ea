// Service account JWTs: issue, verify, and every way a token stops being valid.
#include "apiserver/sa_token.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apiserver/certs.h"
#include "base/base64.h"

namespace flotilla::apiserver {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<ServiceAccountTokens> MakeTokens() {
  auto key = certs::GenerateKey();
  EXPECT_TRUE(key.ok());
  auto pem = certs::KeyToPem(key->get());
  EXPECT_TRUE(pem.ok());
  auto tokens = ServiceAccountTokens::FromKeyPem(*pem);
  EXPECT_TRUE(tokens.ok()) << tokens.status().ToString();
  return std::move(*tokens);
}

class SaTokenTest : public ::testing::Test {
 protected:
  std::unique_ptr<ServiceAccountTokens> tokens_ = MakeTokens();
  FakeClock clock_;
  const std::vector<std::string> api_{std::string(kServiceAccountIssuer)};

  std::string Issue(std::vector<std::string> audiences, std::chrono::seconds ttl) {
    ServiceAccountClaims c{
        "team", "bot", "uid-1", std::move(audiences), clock_.Now(), clock_.Now() + ttl};
    auto token = tokens_->Issue(c);
    EXPECT_TRUE(token.ok()) << token.status().ToString();
    return *token;
  }
};

TEST_F(SaTokenTest, RoundTripsTheClaims) {
  std::string token = Issue(api_, std::chrono::hours(1));
  EXPECT_TRUE(LooksLikeJwt(token));
  auto claims = tokens_->Verify(token, clock_.Now(), api_);
  ASSERT_TRUE(claims.ok()) << claims.status().ToString();
  EXPECT_EQ(claims->ns, "team");
  EXPECT_EQ(claims->name, "bot");
  EXPECT_EQ(claims->uid, "uid-1");
  EXPECT_EQ(claims->audiences, api_);
  EXPECT_EQ(claims->expiry - claims->issued, std::chrono::hours(1));
}

TEST_F(SaTokenTest, ExpiresAtItsExpiry) {
  std::string token = Issue(api_, std::chrono::minutes(10));
  clock_.Advance(std::chrono::minutes(10) - std::chrono::seconds(1));
  EXPECT_TRUE(tokens_->Verify(token, clock_.Now(), api_).ok());
  clock_.Advance(std::chrono::seconds(1));
  auto expired = tokens_->Verify(token, clock_.Now(), api_);
  ASSERT_FALSE(expired.ok());
  EXPECT_TRUE(expired.status().Is(Reason::kUnauthorized));
  EXPECT_THAT(expired.status().message(), HasSubstr("expired"));
}

TEST_F(SaTokenTest, OtherAudiencesAreRefused) {
  std::string token = Issue({"vault"}, std::chrono::hours(1));
  EXPECT_THAT(tokens_->Verify(token, clock_.Now(), api_).status().message(),
              HasSubstr("audiences"));
  EXPECT_TRUE(tokens_->Verify(token, clock_.Now(), {"vault"}).ok());
}

TEST_F(SaTokenTest, TamperingAndOtherKeysAreRefused) {
  std::string token = Issue(api_, std::chrono::hours(1));
  // Another signer's token for the same claims.
  auto other = MakeTokens();
  ServiceAccountClaims c{"team", "bot",        "uid-1",
                         api_,   clock_.Now(), clock_.Now() + std::chrono::hours(1)};
  EXPECT_FALSE(tokens_->Verify(*other->Issue(c), clock_.Now(), api_).ok());
  // The payload swapped for one naming another account, signature kept.
  size_t dot1 = token.find('.');
  size_t dot2 = token.find('.', dot1 + 1);
  std::string payload = token.substr(dot1 + 1, dot2 - dot1 - 1);
  std::string forged = token;
  forged[dot1 + 1 + payload.size() / 2] ^= 1;
  EXPECT_FALSE(tokens_->Verify(forged, clock_.Now(), api_).ok());
  for (std::string bad : {std::string("a.b"), std::string("..."), token + ".x", std::string("")}) {
    EXPECT_FALSE(tokens_->Verify(bad, clock_.Now(), api_).ok()) << bad;
  }
  EXPECT_FALSE(LooksLikeJwt("0123456789abcdef"));
}

// What the token's holder reads of it, unverified: when to renew it.
TEST_F(SaTokenTest, ItsHolderReadsItsLifetime) {
  std::string token = Issue(api_, std::chrono::hours(24 * 365));
  auto life = JwtLifetime(token);
  ASSERT_TRUE(life.has_value());
  EXPECT_EQ(life->first, clock_.Now());
  EXPECT_EQ(life->second - life->first, std::chrono::hours(24 * 365));
  for (std::string bad : {std::string("0123456789abcdef"), std::string("a.b.c"),
                          std::string("eyJhIjoxfQ.eyJpYXQiOjV9.x"),  // {"iat":5}: no exp
                          std::string("eyJhIjoxfQ.eyJpYXQiOjUsImV4cCI6NH0.x")}) {  // exp < iat
    EXPECT_FALSE(JwtLifetime(bad).has_value()) << bad;
  }
}

TEST_F(SaTokenTest, OnlyP256KeysSign) {
  EXPECT_FALSE(ServiceAccountTokens::FromKeyPem("not a key").ok());
}

}  // namespace
}  // namespace flotilla::apiserver
