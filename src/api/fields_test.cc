#include "api/fields.h"

#include <gtest/gtest.h>

#include <map>

namespace flotilla::api {
namespace {

struct FieldSelectorCase {
  std::string selector;
  std::string canonical;
  std::vector<FieldRequirement> requirements;
};

TEST(FieldSelectorParse, TermsAndEscapes) {
  const FieldSelectorCase cases[] = {
      {"", "", {}},
      {"metadata.name=web", "metadata.name=web", {{"metadata.name", true, "web"}}},
      {"a==b", "a=b", {{"a", true, "b"}}},
      {"a!=b", "a!=b", {{"a", false, "b"}}},
      {"c=d,a=b", "a=b,c=d", {{"a", true, "b"}, {"c", true, "d"}}},
      {"a=b,", "a=b", {{"a", true, "b"}}},
      {"a=", "a=", {{"a", true, ""}}},
      {R"(a=x\,y)", R"(a=x\,y)", {{"a", true, "x,y"}}},
      {R"(a=x\=y\\z)", R"(a=x\=y\\z)", {{"a", true, R"(x=y\z)"}}},
      {R"(a=b\,c,d!=e)", R"(a=b\,c,d!=e)", {{"a", true, "b,c"}, {"d", false, "e"}}},
  };
  for (const FieldSelectorCase& c : cases) {
    StatusOr<FieldSelector> s = FieldSelector::Parse(c.selector);
    ASSERT_TRUE(s.ok()) << c.selector << ": " << s.status().ToString();
    EXPECT_EQ(s->ToString(), c.canonical) << c.selector;
    ASSERT_EQ(s->requirements().size(), c.requirements.size()) << c.selector;
    for (size_t i = 0; i < c.requirements.size(); ++i) {
      EXPECT_EQ(s->requirements()[i].field, c.requirements[i].field) << c.selector;
      EXPECT_EQ(s->requirements()[i].equals, c.requirements[i].equals) << c.selector;
      EXPECT_EQ(s->requirements()[i].value, c.requirements[i].value) << c.selector;
    }
  }
}

TEST(FieldSelectorParse, Errors) {
  const std::pair<std::string, std::string> cases[] = {
      {"a", "invalid selector: 'a'; can't understand 'a'"},
      {"a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"},
      {R"(a=b\x)", R"(invalid field selector: invalid escape sequence: \x)"},
      {R"(a=b\)", R"(invalid field selector: invalid escape sequence: \)"},
      {"a=b=c", "invalid field selector: unescaped character in value: 61"},
      {"a==b=c", "invalid field selector: unescaped character in value: 61"},
      {"a!==b", "invalid field selector: unescaped character in value: 61"},
      {R"(a=\é)", "invalid field selector: invalid escape sequence: \\é"},
  };
  for (const auto& [selector, message] : cases) {
    StatusOr<FieldSelector> s = FieldSelector::Parse(selector);
    ASSERT_FALSE(s.ok()) << selector;
    EXPECT_EQ(s.status().reason(), Reason::kBadRequest);
    EXPECT_EQ(s.status().message(), message) << selector;
  }
}

TEST(FieldSelector, MatchesThroughGetter) {
  std::map<std::string, std::string> fields = {{"metadata.name", "web"},
                                               {"status.phase", "Running"}};
  FieldGetter get = [&fields](std::string_view f) -> std::optional<std::string> {
    auto it = fields.find(std::string(f));
    if (it == fields.end()) return std::nullopt;
    return it->second;
  };
  const std::pair<std::string, bool> cases[] = {
      {"", true},
      {"metadata.name=web", true},
      {"metadata.name==web", true},
      {"metadata.name=db", false},
      {"metadata.name!=db", true},
      {"metadata.name=web,status.phase!=Running", false},
      {"metadata.name=web,status.phase=Running", true},
      {"spec.nodeName=", true},  // unknown fields read as ""
      {"spec.nodeName!=", false},
  };
  for (const auto& [selector, want] : cases) {
    EXPECT_EQ(FieldSelector::Parse(selector)->Matches(get), want) << selector;
  }
}

TEST(FieldSelector, FieldsAndRequireSupported) {
  FieldSelector s = *FieldSelector::Parse("spec.foo=1,metadata.name=a,metadata.name!=b");
  EXPECT_EQ(s.Fields(), (std::vector<std::string>{"metadata.name", "spec.foo"}));
  Status st = s.RequireSupported([](std::string_view f) { return f.starts_with("metadata."); });
  EXPECT_EQ(st.reason(), Reason::kBadRequest);
  EXPECT_EQ(st.message(), "field label not supported: spec.foo");
  EXPECT_TRUE(s.RequireSupported([](std::string_view) { return true; }).ok());
}

TEST(FieldSelector, RequiresExactMatch) {
  FieldSelector s = *FieldSelector::Parse("metadata.name!=x,metadata.name=y");
  EXPECT_EQ(s.RequiresExactMatch("metadata.name"), "y");
  EXPECT_EQ(s.RequiresExactMatch("metadata.namespace"), std::nullopt);
}

TEST(FieldSelector, EscapeRoundTrips) {
  const std::string value = R"(a,b=c\d)";
  EXPECT_EQ(EscapeFieldValue(value), R"(a\,b\=c\\d)");
  StatusOr<FieldSelector> s = FieldSelector::Parse("f=" + EscapeFieldValue(value));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->requirements()[0].value, value);
}

TEST(ObjectMetaFieldGetter, NameAndNamespaceOnly) {
  json::object obj = {{"metadata", {{"name", "web"}, {"namespace", "prod"}}},
                      {"spec", {{"x", "y"}}}};
  EXPECT_EQ(ObjectMetaFieldGetter(obj, "metadata.name"), "web");
  EXPECT_EQ(ObjectMetaFieldGetter(obj, "metadata.namespace"), "prod");
  EXPECT_EQ(ObjectMetaFieldGetter(obj, "spec.x"), std::nullopt);
  EXPECT_EQ(ObjectMetaFieldGetter(json::object(), "metadata.namespace"), "");
  FieldGetter get = MetadataFieldGetter(obj);
  EXPECT_TRUE(FieldSelector::Parse("metadata.namespace=prod")->Matches(get));
  EXPECT_FALSE(FieldSelector::Parse("metadata.name=db")->Matches(get));
}

}  // namespace
}  // namespace flotilla::api
