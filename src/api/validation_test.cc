#include "api/validation.h"

#include <gtest/gtest.h>

namespace flotilla::api {
namespace {

const std::string kSubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const std::string kLabelMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const std::string kDNS1035Msg =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const std::string kNamePartMsg =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

using Check = std::vector<std::string> (*)(std::string_view);

struct FormatCase {
  Check check;
  std::string value;
  std::vector<std::string> errors;
};

TEST(FormatChecks, Table) {
  const std::string long63(63, 'a'), long64(64, 'a');
  const std::string long253 = long63 + "." + long63 + "." + long63 + "." + std::string(61, 'a');
  const FormatCase cases[] = {
      {IsDNS1123Subdomain, "example.com", {}},
      {IsDNS1123Subdomain, "a", {}},
      {IsDNS1123Subdomain, long253, {}},
      {IsDNS1123Subdomain, long253 + "a", {"must be no more than 253 characters"}},
      {IsDNS1123Subdomain, "X_y", {kSubdomainMsg}},
      {IsDNS1123Subdomain, "", {kSubdomainMsg}},
      {IsDNS1123Subdomain, "a..b", {kSubdomainMsg}},
      {IsDNS1123Subdomain, "-a", {kSubdomainMsg}},
      {IsDNS1123Label, "my-name", {}},
      {IsDNS1123Label, "123", {}},
      {IsDNS1123Label, long63, {}},
      {IsDNS1123Label, long64, {"must be no more than 63 characters"}},
      {IsDNS1123Label, "a.b", {"must not contain dots"}},
      {IsDNS1123Label, "a-", {kLabelMsg}},
      {IsDNS1035Label, "web", {}},
      {IsDNS1035Label, "1web", {kDNS1035Msg}},
      {IsQualifiedName, "app", {}},
      {IsQualifiedName, "example.com/My_App.v1", {}},
      {IsQualifiedName, "-app", {kNamePartMsg}},
      {IsQualifiedName, "/app", {"prefix part must be non-empty"}},
      {IsQualifiedName, "Example.com/app", {"prefix part " + kSubdomainMsg}},
      {IsQualifiedName, "example.com/", {"name part must be non-empty", kNamePartMsg}},
      {IsQualifiedName, long64, {"name part must be no more than 63 characters"}},
      {IsQualifiedName,
       "a/b/c",
       {"a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
        "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with "
        "an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}},
      {IsValidLabelValue, "", {}},
      {IsValidLabelValue, "My_Value.1", {}},
      {IsValidLabelValue, long64, {"must be no more than 63 characters"}},
      {IsValidPathSegmentName, "a b", {}},
      {IsValidPathSegmentName, "..", {"may not be '..'"}},
      {IsValidPathSegmentName, "a/b%", {"may not contain '/'", "may not contain '%'"}},
  };
  for (const FormatCase& c : cases) {
    EXPECT_EQ(c.check(c.value), c.errors) << c.value;
  }
}

TEST(NameValidators, GenerateNamePrefixMayEndInDash) {
  EXPECT_TRUE(NameIsDNSSubdomain("web-", true).empty());
  EXPECT_FALSE(NameIsDNSSubdomain("web-", false).empty());
  EXPECT_TRUE(NameIsDNSLabel("ns-", true).empty());
  EXPECT_TRUE(NameIsDNS1035Label("svc-", true).empty());
  EXPECT_FALSE(NameIsDNS1035Label("1svc-", true).empty());
  EXPECT_TRUE(ValidatePathSegmentName("..", true).empty());
  EXPECT_FALSE(ValidatePathSegmentName("..", false).empty());
}

TEST(Causes, RenderLikeFieldError) {
  StatusCause c = FieldInvalid("spec.replicas", -1, "must be greater than or equal to 0");
  EXPECT_EQ(c.type, "FieldValueInvalid");
  EXPECT_EQ(c.field, "spec.replicas");
  EXPECT_EQ(c.message, "Invalid value: -1: must be greater than or equal to 0");
  EXPECT_EQ(FieldInvalid("a", "x\"y\n", "bad").message, "Invalid value: \"x\\\"y\\n\": bad");
  EXPECT_EQ(FieldInvalid("a", 1.5, "bad").message, "Invalid value: 1.5: bad");
  EXPECT_EQ(FieldInvalid("a", 2.5e6, "bad").message, "Invalid value: 2.5e+06: bad");
  EXPECT_EQ(FieldInvalid("a", json::array{"x", 1}, "bad").message, "Invalid value: [\"x\",1]: bad");
  EXPECT_EQ(FieldRequired("metadata.namespace", "").message, "Required value");
  EXPECT_EQ(FieldRequired("a", "why").message, "Required value: why");
  EXPECT_EQ(FieldForbidden("a", "not allowed on this type").message,
            "Forbidden: not allowed on this type");
  EXPECT_EQ(FieldTooLong("a", 262144).message, "Too long: may not be more than 262144 bytes");
  EXPECT_EQ(FieldTooLong("a", 262144).type, "FieldValueTooLong");
  EXPECT_EQ(FieldNotSupported("spec.type", "Foo", {"A", "B"}).message,
            "Unsupported value: \"Foo\": supported values: \"A\", \"B\"");
  EXPECT_EQ(FieldDuplicate("a", "x").message, "Duplicate value: \"x\"");
  EXPECT_EQ(FieldTypeInvalid("a", true, "string").message,
            "Invalid value: true: must be of type string");
}

TEST(QuoteGo, Escapes) {
  EXPECT_EQ(QuoteGo("plain"), "\"plain\"");
  EXPECT_EQ(QuoteGo("tab\there"), "\"tab\\there\"");
  EXPECT_EQ(QuoteGo(std::string("nul\0", 4)), "\"nul\\x00\"");
  EXPECT_EQ(QuoteGo("h\xc3\xa9"), "\"h\xc3\xa9\"");  // valid UTF-8 kept
  EXPECT_EQ(QuoteGo("\xff"), "\"\\xff\"");
}

TEST(FormatInvalidMessage, AggregatesLikeKubeApiserver) {
  std::vector<StatusCause> causes = {
      FieldInvalid("metadata.name", "X_y", kSubdomainMsg),
      FieldInvalid("spec.replicas", -1, "must be greater than or equal to 0"),
  };
  EXPECT_EQ(FormatInvalidMessage("Deployment.apps", "X_y", causes),
            "Deployment.apps \"X_y\" is invalid: [metadata.name: Invalid value: \"X_y\": " +
                kSubdomainMsg +
                ", spec.replicas: Invalid value: -1: must be greater than or equal to 0]");
  EXPECT_EQ(FormatInvalidMessage("Service", "s", {causes[1]}),
            "Service \"s\" is invalid: spec.replicas: Invalid value: -1: must be greater than or "
            "equal to 0");
  EXPECT_EQ(FormatInvalidMessage("Service", "s", {causes[1], causes[1]}),
            FormatInvalidMessage("Service", "s", {causes[1]}));
  EXPECT_EQ(FormatInvalidMessage("Pod", "p", {}), "Pod \"p\" is invalid");
  Status st = InvalidStatus("Service", "s", causes);
  EXPECT_EQ(st.reason(), Reason::kInvalid);
  EXPECT_EQ(st.code(), 422);
  EXPECT_EQ(st.causes().size(), 2u);
}

}  // namespace
}  // namespace flotilla::api
