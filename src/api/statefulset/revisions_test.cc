// Revision data, names and hashing: stable under field order, changed by
// the template and by the collision count.
#include "api/statefulset/revisions.h"

#include <gtest/gtest.h>

#include "api/hash.h"

namespace flotilla::api::statefulset {
namespace {

json::object Set(std::string_view image) {
  StatusOr<json::object> o = ParseJsonObject(
      R"({"metadata":{"name":"web","namespace":"default","uid":"u1"},
          "spec":{"template":{"metadata":{"labels":{"app":"nginx"}},
          "spec":{"containers":[{"name":"nginx","image":")" +
      std::string(image) + R"("}]}}}})");
  EXPECT_TRUE(o.ok());
  return *o;
}

TEST(Revisions, CanonicalJsonSortsKeysAtEveryDepth) {
  StatusOr<json::value> v = ParseJson(R"({"b":1,"a":{"d":[{"z":1,"y":2}],"c":"x"}})");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(CanonicalJson(*v), R"({"a":{"c":"x","d":[{"y":2,"z":1}]},"b":1})");
}

TEST(Revisions, NameIsSetNameAndHashOfTheTemplate) {
  json::object a = NewRevision(Set("nginx:1.25"), 1, 0);
  json::object again = NewRevision(Set("nginx:1.25"), 7, 0);
  json::object b = NewRevision(Set("nginx:1.26"), 2, 0);
  std::string name = std::string(a.at("metadata").at("name").as_string());
  EXPECT_TRUE(name.starts_with("web-"));
  EXPECT_EQ(name.find_first_of("aeiou01", 4), std::string::npos) << name;
  EXPECT_EQ(a.at("metadata").at("name"), again.at("metadata").at("name"));
  EXPECT_TRUE(EqualRevision(a, again));
  EXPECT_NE(a.at("metadata").at("name"), b.at("metadata").at("name"));
  EXPECT_FALSE(EqualRevision(a, b));
  EXPECT_NE(a.at("metadata").at("name"),
            NewRevision(Set("nginx:1.25"), 1, 1).at("metadata").at("name"));
  EXPECT_EQ(a.at("metadata").at("labels").at("app"), "nginx");
  EXPECT_EQ(a.at("revision"), 1);
}

TEST(Revisions, ApplyRevisionRestoresTheTemplate) {
  json::object old_rev = NewRevision(Set("nginx:1.25"), 1, 0);
  json::object restored = ApplyRevision(Set("nginx:1.26"), old_rev);
  EXPECT_EQ(restored.at("spec").at("template").at("spec").at("containers").at(0).at("image"),
            "nginx:1.25");
  EXPECT_FALSE(restored.at("spec").at("template").as_object().contains("$patch"));
}

}  // namespace
}  // namespace flotilla::api::statefulset
