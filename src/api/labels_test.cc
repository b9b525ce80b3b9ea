#include "api/labels.h"

#include <gtest/gtest.h>

namespace flotilla::api {
namespace {

json::object Labels(std::initializer_list<std::pair<std::string, std::string>> kv) {
  json::object out;
  for (const auto& [k, v] : kv) out[k] = v;
  return out;
}

struct ParseCase {
  std::string selector;
  std::string canonical;  // ToString() after parsing
};

TEST(LabelSelectorParse, CanonicalForms) {
  const ParseCase cases[] = {
      {"", ""},
      {"a=b", "a=b"},
      {"a==b", "a==b"},
      {"a!=b", "a!=b"},
      {"  a = b ,  c  ", "a=b,c"},
      {"x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()"},
      {"env in (qa, prod)", "env in (prod,qa)"},
      {"!canary", "!canary"},
      {"b=1,a=2", "a=2,b=1"},
      {"replicas>2", "replicas>2"},
      {"replicas<10", "replicas<10"},
      {"a=", "a="},
      {"a in (in),in=notin", "a in (in),in=notin"},
      {"example.com/app=web", "example.com/app=web"},
      {"x in (b,a,b)", "x in (a,b)"},
  };
  for (const ParseCase& c : cases) {
    StatusOr<LabelSelector> s = LabelSelector::Parse(c.selector);
    ASSERT_TRUE(s.ok()) << c.selector << ": " << s.status().ToString();
    EXPECT_EQ(s->ToString(), c.canonical) << c.selector;
  }
}

struct ErrorCase {
  std::string selector;
  std::string message;
};

TEST(LabelSelectorParse, ErrorsAreBadRequestWithApimachineryMessages) {
  const std::string kNamePart =
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
      "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
      "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  const ErrorCase cases[] = {
      {"a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"},
      {"a in b", "unable to parse requirement: found 'b' expected: '('"},
      {"a in (b", "unable to parse requirement: found '', expected: ',' or ')'"},
      {"a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"},
      {"a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"},
      {"a notin", "unable to parse requirement: found '' expected: '('"},
      {",a", "found ',', expected: !, identifier, or 'end of string'"},
      {"a,", "found '', expected: identifier after ','"},
      {"a,,b", "found ',', expected: identifier after ','"},
      {"a=b c", "found 'c', expected: ',' or 'end of string'"},
      {"!a=b", "found '=', expected: ',' or 'end of string'"},
      {"a=(b)", "unable to parse requirement: found '(', expected: identifier"},
      {"=b", "found '=', expected: !, identifier, or 'end of string'"},
      {"!", "unable to parse requirement: found '', expected: identifier"},
      {"-a=b", "unable to parse requirement: <nil>: Invalid value: \"-a\": " + kNamePart},
      {"a>b",
       "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, "
       "the value must be an integer"},
      {"a>=1", "unable to parse requirement: found '=', expected: identifier"},
      {"a=-b",
       "unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid label must be "
       "an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
       "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
       "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
  };
  for (const ErrorCase& c : cases) {
    StatusOr<LabelSelector> s = LabelSelector::Parse(c.selector);
    ASSERT_FALSE(s.ok()) << c.selector;
    EXPECT_EQ(s.status().reason(), Reason::kBadRequest) << c.selector;
    EXPECT_EQ(s.status().message(), c.message) << c.selector;
  }
}

struct MatchCase {
  std::string selector;
  json::object labels;
  bool matches;
};

TEST(LabelSelectorMatches, Operators) {
  const json::object web = Labels({{"app", "web"}, {"tier", "front"}, {"replicas", "3"}});
  const MatchCase cases[] = {
      {"", {}, true},
      {"app=web", web, true},
      {"app==web", web, true},
      {"app=db", web, false},
      {"app!=db", web, true},
      {"missing!=x", web, true},
      {"app in (db,web)", web, true},
      {"app notin (db,web)", web, false},
      {"missing notin (x)", web, true},
      {"missing in (x)", web, false},
      {"app", web, true},
      {"missing", web, false},
      {"!missing", web, true},
      {"!app", web, false},
      {"replicas>2", web, true},
      {"replicas>3", web, false},
      {"replicas<4", web, true},
      {"app>1", web, false},  // not an integer label value
      {"missing>1", web, false},
      {"app=web,tier=back", web, false},
      {"app=web,tier=front", web, true},
      {"missing=", web, false},
      {"missing in ()", web, false},
  };
  for (const MatchCase& c : cases) {
    StatusOr<LabelSelector> s = LabelSelector::Parse(c.selector);
    ASSERT_TRUE(s.ok()) << c.selector;
    EXPECT_EQ(s->Matches(&c.labels), c.matches) << c.selector;
  }
}

TEST(LabelSelectorMatches, NullLabelsAreEmpty) {
  EXPECT_TRUE(LabelSelector::Parse("!a")->Matches(nullptr));
  EXPECT_FALSE(LabelSelector::Parse("a")->Matches(nullptr));
  EXPECT_TRUE(LabelSelector().Matches(nullptr));
  EXPECT_FALSE(LabelSelector::Nothing().Matches(nullptr));
}

TEST(LabelSelectorMatches, MatchesObjectReadsMetadataLabels) {
  json::object obj = {{"metadata", {{"labels", {{"app", "web"}}}}}};
  EXPECT_TRUE(LabelSelector::Parse("app=web")->MatchesObject(obj));
  EXPECT_FALSE(LabelSelector::Parse("app=db")->MatchesObject(obj));
  EXPECT_FALSE(LabelSelector::Parse("app")->MatchesObject(json::object()));
}

TEST(LabelSelector, RequiresExactMatch) {
  LabelSelector s = *LabelSelector::Parse("a=1,b in (2),c in (3,4),d!=5");
  EXPECT_EQ(s.RequiresExactMatch("a"), "1");
  EXPECT_EQ(s.RequiresExactMatch("b"), "2");
  EXPECT_EQ(s.RequiresExactMatch("c"), std::nullopt);
  EXPECT_EQ(s.RequiresExactMatch("d"), std::nullopt);
  EXPECT_EQ(s.RequiresExactMatch("e"), std::nullopt);
}

TEST(LabelSelectorFromJson, NullIsNothingEmptyIsEverything) {
  StatusOr<LabelSelector> nothing = LabelSelector::FromJson(nullptr, "spec.selector");
  ASSERT_TRUE(nothing.ok());
  EXPECT_TRUE(nothing->MatchesNothing());
  json::value null_value;
  EXPECT_TRUE(LabelSelector::FromJson(&null_value, "spec.selector")->MatchesNothing());
  json::value empty = json::object();
  StatusOr<LabelSelector> everything = LabelSelector::FromJson(&empty, "spec.selector");
  ASSERT_TRUE(everything.ok());
  EXPECT_TRUE(everything->Empty());
  EXPECT_TRUE(everything->Matches(nullptr));
}

TEST(LabelSelectorFromJson, ConvertsMatchLabelsAndExpressions) {
  json::value sel = ParseJson(R"({
    "matchLabels": {"app": "web"},
    "matchExpressions": [
      {"key": "tier", "operator": "In", "values": ["front", "edge"]},
      {"key": "canary", "operator": "DoesNotExist"},
      {"key": "zone", "operator": "NotIn", "values": ["b"]},
      {"key": "team", "operator": "Exists"}
    ]})")
                        .value();
  StatusOr<LabelSelector> s = LabelSelector::FromJson(&sel, "spec.selector");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->ToString(), "app=web,!canary,team,tier in (edge,front),zone notin (b)");
  json::object yes = Labels({{"app", "web"}, {"tier", "edge"}, {"team", "x"}});
  json::object no = Labels({{"app", "web"}, {"tier", "edge"}, {"team", "x"}, {"canary", "1"}});
  EXPECT_TRUE(s->Matches(&yes));
  EXPECT_FALSE(s->Matches(&no));
}

struct InvalidCase {
  std::string selector;
  std::vector<std::pair<std::string, std::string>> causes;  // field, type
};

TEST(LabelSelectorFromJson, ValidationCauses) {
  const InvalidCase cases[] = {
      {R"({"matchLabels": {"-x": "y"}})", {{"spec.selector.matchLabels", "FieldValueInvalid"}}},
      {R"({"matchLabels": {"x": "-y"}})", {{"spec.selector.matchLabels", "FieldValueInvalid"}}},
      {R"({"matchExpressions": [{"key": "a", "operator": "In"}]})",
       {{"spec.selector.matchExpressions[0].values", "FieldValueRequired"}}},
      {R"({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})",
       {{"spec.selector.matchExpressions[0].values", "FieldValueForbidden"}}},
      {R"({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})",
       {{"spec.selector.matchExpressions[0].operator", "FieldValueInvalid"}}},
      {R"({"matchExpressions": [{"key": "a b", "operator": "In", "values": ["-"]}]})",
       {{"spec.selector.matchExpressions[0].key", "FieldValueInvalid"},
        {"spec.selector.matchExpressions[0].values[0]", "FieldValueInvalid"}}},
      {R"({"matchLabels": {"x": 1}})", {{"spec.selector.matchLabels.x", "FieldValueTypeInvalid"}}},
      {R"("app=web")", {{"spec.selector", "FieldValueTypeInvalid"}}},
  };
  for (const InvalidCase& c : cases) {
    json::value sel = ParseJson(c.selector).value();
    StatusOr<LabelSelector> s = LabelSelector::FromJson(&sel, "spec.selector");
    ASSERT_FALSE(s.ok()) << c.selector;
    EXPECT_EQ(s.status().reason(), Reason::kInvalid) << c.selector;
    ASSERT_EQ(s.status().causes().size(), c.causes.size())
        << c.selector << " " << s.status().message();
    for (size_t i = 0; i < c.causes.size(); ++i) {
      EXPECT_EQ(s.status().causes()[i].field, c.causes[i].first) << c.selector;
      EXPECT_EQ(s.status().causes()[i].type, c.causes[i].second) << c.selector;
    }
  }
}

TEST(LabelSelectorFromJson, MessagesMatchKubernetes) {
  json::value sel = ParseJson(R"({"matchExpressions": [{"key": "a", "operator": "In"}]})").value();
  StatusOr<LabelSelector> s = LabelSelector::FromJson(&sel, "spec.selector");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "spec.selector.matchExpressions[0].values: Required value: must be specified when "
            "`operator` is 'In' or 'NotIn'");
  sel = ParseJson(R"({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})")
            .value();
  s = LabelSelector::FromJson(&sel, "spec.selector");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "spec.selector.matchExpressions[0].operator: Invalid value: \"Gt\": not a valid "
            "selector operator");
}

}  // namespace
}  // namespace flotilla::api
