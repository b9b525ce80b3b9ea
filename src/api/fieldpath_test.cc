#include "api/fieldpath.h"

#include <gtest/gtest.h>

namespace flotilla::api::fieldpath {
namespace {

Path P(std::initializer_list<Element> e) { return Path(e); }

TEST(FieldPath, ElementsPrintAndSerializeAsKubernetes) {
  json::object key{{"protocol", "TCP"}, {"containerPort", 80}};
  Element k = Element::Key(key);
  EXPECT_EQ(k.Serialize(), R"(k:{"containerPort":80,"protocol":"TCP"})");
  EXPECT_EQ(k.String(), R"([containerPort=80,protocol="TCP"])");
  EXPECT_EQ(Element::Value("a").Serialize(), R"(v:"a")");
  EXPECT_EQ(Element::Value("a").String(), R"([="a"])");
  EXPECT_EQ(Element::Index(3).String(), "[3]");
  EXPECT_EQ(PathString(P({Element::Field("spec"), Element::Field("containers"),
                          Element::Key({{"name", "nginx"}}), Element::Field("image")})),
            R"(.spec.containers[name="nginx"].image)");
  for (const std::string& s : {std::string("f:spec"), k.Serialize(), std::string("v:1"),
                               std::string("i:0")}) {
    auto e = Element::Parse(s);
    ASSERT_TRUE(e.ok()) << s;
    EXPECT_EQ(e->Serialize(), s);
  }
  for (const char* bad : {"", "x", "q:a", "k:[1]", "k:{", "i:x", "v:{"}) {
    EXPECT_FALSE(Element::Parse(bad).ok()) << bad;
  }
}

TEST(FieldPath, SetOperations) {
  Element spec = Element::Field("spec"), a = Element::Field("a"), b = Element::Field("b");
  Set x, y;
  x.Insert({spec, a});
  x.Insert({spec, b});
  x.Insert({spec});
  y.Insert({spec, b});
  EXPECT_TRUE(x.Has({spec}));
  EXPECT_FALSE(y.Has({spec}));
  EXPECT_EQ(x.Size(), 3u);
  Set d = x.Difference(y);
  EXPECT_TRUE(d.Has({spec, a}));
  EXPECT_FALSE(d.Has({spec, b}));
  EXPECT_TRUE(d.Has({spec}));
  Set i = x.Intersection(y);
  EXPECT_EQ(i.Size(), 1u);
  EXPECT_TRUE(i.Has({spec, b}));
  Set u = y.Union(d);
  EXPECT_EQ(u, x);
  Set only_spec;
  only_spec.Insert({spec});
  EXPECT_TRUE(x.RecursiveDifference(only_spec).Empty());
  EXPECT_EQ(x.Difference(only_spec).Size(), 2u);
}

TEST(FieldPath, FieldsV1RoundTrip) {
  const char* text =
      R"({"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}},"f:replicas":{}}})";
  auto parsed = ParseJson(text);
  ASSERT_TRUE(parsed.ok());
  auto set = Set::FromFieldsV1(*parsed);
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_TRUE(set->Has({Element::Field("metadata"), Element::Field("labels")}));
  EXPECT_FALSE(set->Has({Element::Field("metadata")}));
  EXPECT_TRUE(set->Has({Element::Field("spec"), Element::Field("containers"),
                        Element::Key({{"name", "nginx"}})}));
  EXPECT_EQ(set->Size(), 6u);
  EXPECT_EQ(json::value(set->ToFieldsV1()), *parsed);
  EXPECT_FALSE(Set::FromFieldsV1(json::value("x")).ok());
  EXPECT_FALSE(Set::FromFieldsV1(*ParseJson(R"({"z:a":{}})")).ok());
}

}  // namespace
}  // namespace flotilla::api::fieldpath
