#include "api/patch.h"

#include <gtest/gtest.h>

#include "api/test_util.h"

namespace flotilla::api {
namespace {

using testing::J;

struct MergeCase {
  std::string original, patch, result;
};

// The examples of RFC 7386 appendix A, plus nested null pruning.
TEST(MergePatch, Rfc7386Examples) {
  const MergeCase cases[] = {
      {R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {R"({"a":"b"})", R"({"a":null})", R"({})"},
      {R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
      {R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
      {R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})", R"({"a":{"b":"d"}})"},
      {R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
      {R"({"a":"b"})", R"(["c"])", R"(["c"])"},
      {R"({"a":"foo"})", R"(null)", R"(null)"},
      {R"({"a":"foo"})", R"("bar")", R"("bar")"},
      {R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})"},
      {R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})"},
      {R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})"},
  };
  for (const MergeCase& c : cases) {
    EXPECT_TRUE(JsonEqual(MergePatch(J(c.original), J(c.patch)), J(c.result)))
        << c.original << " + " << c.patch << " = " << ToJson(MergePatch(J(c.original), J(c.patch)));
  }
}

struct JsonPatchCase {
  std::string name, original, patch, result;
};

TEST(JsonPatch, Operations) {
  const JsonPatchCase cases[] = {
      {"add member", R"({"a":1})", R"([{"op":"add","path":"/b","value":2}])", R"({"a":1,"b":2})"},
      {"add replaces member", R"({"a":1})", R"([{"op":"add","path":"/a","value":2}])",
       R"({"a":2})"},
      {"add into array", R"({"a":[1,3]})", R"([{"op":"add","path":"/a/1","value":2}])",
       R"({"a":[1,2,3]})"},
      {"append with -", R"({"a":[1]})", R"([{"op":"add","path":"/a/-","value":2}])",
       R"({"a":[1,2]})"},
      {"add at end index", R"({"a":[1]})", R"([{"op":"add","path":"/a/1","value":2}])",
       R"({"a":[1,2]})"},
      {"add root", R"({"a":1})", R"([{"op":"add","path":"","value":{"b":2}}])", R"({"b":2})"},
      {"remove", R"({"a":1,"b":2})", R"([{"op":"remove","path":"/a"}])", R"({"b":2})"},
      {"remove from array", R"({"a":[1,2,3]})", R"([{"op":"remove","path":"/a/0"}])",
       R"({"a":[2,3]})"},
      {"replace", R"({"a":{"b":1}})", R"([{"op":"replace","path":"/a/b","value":[]}])",
       R"({"a":{"b":[]}})"},
      {"move", R"({"a":{"b":1},"c":{}})", R"([{"op":"move","from":"/a/b","path":"/c/d"}])",
       R"({"a":{},"c":{"d":1}})"},
      {"move within array", R"({"a":[1,2,3]})", R"([{"op":"move","from":"/a/0","path":"/a/-"}])",
       R"({"a":[2,3,1]})"},
      {"move to itself", R"({"a":1})", R"([{"op":"move","from":"/a","path":"/a"}])", R"({"a":1})"},
      {"copy", R"({"a":{"b":1}})", R"([{"op":"copy","from":"/a","path":"/c"}])",
       R"({"a":{"b":1},"c":{"b":1}})"},
      {"copy into own child", R"({"a":{"b":1}})", R"([{"op":"copy","from":"/a","path":"/a/c"}])",
       R"({"a":{"b":1,"c":{"b":1}}})"},
      {"test passes numerically", R"({"a":1})",
       R"([{"op":"test","path":"/a","value":1.0},{"op":"replace","path":"/a","value":2}])",
       R"({"a":2})"},
      {"test deep", R"({"a":{"x":[1,{"y":"z"}]}})",
       R"([{"op":"test","path":"/a","value":{"x":[1,{"y":"z"}]}}])",
       R"({"a":{"x":[1,{"y":"z"}]}})"},
      {"test absent against null", R"({})", R"([{"op":"test","path":"/a","value":null}])", R"({})"},
      {"escaped pointer", R"({"a/b":{"m~n":1}})",
       R"([{"op":"replace","path":"/a~1b/m~0n","value":2}])", R"({"a/b":{"m~n":2}})"},
      {"empty key", R"({"":1})", R"([{"op":"replace","path":"/","value":2}])", R"({"":2})"},
      {"annotation with slash", R"({"metadata":{"annotations":{}}})",
       R"([{"op":"add","path":"/metadata/annotations/example.com~1k","value":"v"}])",
       R"({"metadata":{"annotations":{"example.com/k":"v"}}})"},
      {"empty patch", R"({"a":1})", R"([])", R"({"a":1})"},
  };
  for (const JsonPatchCase& c : cases) {
    StatusOr<json::value> out = JsonPatch(J(c.original), J(c.patch));
    ASSERT_TRUE(out.ok()) << c.name << ": " << out.status().ToString();
    EXPECT_TRUE(JsonEqual(*out, J(c.result))) << c.name << ": " << ToJson(*out);
  }
}

struct JsonPatchError {
  std::string name, original, patch;
  Reason reason;
  std::string message;
};

TEST(JsonPatch, Errors) {
  const JsonPatchError cases[] = {
      {"test fails", R"({"a":1})", R"([{"op":"test","path":"/a","value":2}])", Reason::kInvalid,
       "testing value /a failed: test failed"},
      {"test missing path", R"({})", R"([{"op":"test","path":"/a/b","value":2}])", Reason::kInvalid,
       "test operation does not apply: is missing path: /a/b: missing value"},
      {"add to missing parent", R"({})", R"([{"op":"add","path":"/a/b","value":1}])",
       Reason::kInvalid,
       "add operation does not apply: doc is missing path: \"/a/b\": missing value"},
      {"add past end", R"({"a":[1]})", R"([{"op":"add","path":"/a/2","value":1}])",
       Reason::kInvalid, "Unable to access invalid index: 2: invalid index referenced"},
      {"leading zero index", R"({"a":[1,2]})", R"([{"op":"add","path":"/a/01","value":1}])",
       Reason::kInvalid, "Unable to access invalid index: 01: invalid index referenced"},
      {"remove with -", R"({"a":[1]})", R"([{"op":"remove","path":"/a/-"}])", Reason::kInvalid,
       "Unable to access invalid index: -: invalid index referenced"},
      {"remove missing", R"({"a":1})", R"([{"op":"remove","path":"/b"}])", Reason::kInvalid,
       "remove operation does not apply: doc is missing path: \"/b\": missing value"},
      {"replace missing", R"({"a":1})", R"([{"op":"replace","path":"/b","value":1}])",
       Reason::kInvalid, "replace operation does not apply: doc is missing key: /b: missing value"},
      {"replace past end", R"({"a":[1]})", R"([{"op":"replace","path":"/a/1","value":1}])",
       Reason::kInvalid, "Unable to access invalid index: 1: invalid index referenced"},
      {"move into own child", R"({"a":{"b":1}})", R"([{"op":"move","from":"/a","path":"/a/b/c"}])",
       Reason::kInvalid,
       "move operation does not apply: \"from\" location \"/a\" is a proper prefix of \"path\" "
       "location \"/a/b/c\""},
      {"move missing from", R"({})", R"([{"op":"move","from":"/x","path":"/y"}])", Reason::kInvalid,
       "move operation does not apply: doc is missing from path: /x: missing value"},
      {"copy missing from", R"({})", R"([{"op":"copy","from":"/x","path":"/y"}])", Reason::kInvalid,
       "copy operation does not apply: doc is missing from path: \"/x\": missing value"},
      {"unknown op", R"({})", R"([{"op":"frobnicate","path":"/x"}])", Reason::kInvalid,
       "Unexpected kind: frobnicate"},
      {"missing value", R"({})", R"([{"op":"add","path":"/x"}])", Reason::kInvalid,
       "add operation does not apply: missing \"value\""},
      {"missing path", R"({})", R"([{"op":"remove"}])", Reason::kInvalid,
       "remove operation does not apply: missing \"path\" string"},
      {"bad pointer", R"({})", R"([{"op":"add","path":"x","value":1}])", Reason::kInvalid,
       "invalid JSON pointer \"x\": must start with '/'"},
      {"bad escape", R"({})", R"([{"op":"add","path":"/a~2","value":1}])", Reason::kInvalid,
       "invalid JSON pointer \"/a~2\": '~' must be followed by '0' or '1'"},
      {"remove root", R"({})", R"([{"op":"remove","path":""}])", Reason::kInvalid,
       "remove operation does not apply: cannot remove the document root"},
      {"not an array", R"({})", R"({"op":"add"})", Reason::kBadRequest,
       "json patch must be a JSON array of operations, got object"},
      {"not an object", R"({})", R"([1])", Reason::kBadRequest,
       "json patch operation must be a JSON object, got integer"},
  };
  for (const JsonPatchError& c : cases) {
    StatusOr<json::value> out = JsonPatch(J(c.original), J(c.patch));
    ASSERT_FALSE(out.ok()) << c.name;
    EXPECT_EQ(out.status().reason(), c.reason) << c.name;
    EXPECT_EQ(out.status().message(), c.message) << c.name;
  }
}

TEST(JsonPatch, OperationLimit) {
  json::array ops;
  for (int i = 0; i < 10001; ++i) ops.push_back(json::object{{"op", "test"}, {"path", ""}});
  StatusOr<json::value> out = JsonPatch(json::object(), ops);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().reason(), Reason::kRequestEntityTooLarge);
  EXPECT_EQ(out.status().message(),
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, "
            "got 10001");
}

TEST(JsonPatch, FailedPatchLeavesOriginalUntouched) {
  json::value original = J(R"({"a":1})");
  StatusOr<json::value> out = JsonPatch(
      original, J(R"([{"op":"replace","path":"/a","value":2},{"op":"remove","path":"/z"}])"));
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(ToJson(original), R"({"a":1})");
}

struct ApplyCase {
  std::string content_type, patch;
  Reason reason;  // kOk when the patch applies
  std::string result_or_message;
};

TEST(ApplyPatch, DispatchesOnMediaType) {
  const json::value original = J(R"({"metadata":{"name":"n"},"spec":{"replicas":1}})");
  const ApplyCase cases[] = {
      {"application/merge-patch+json", R"({"spec":{"replicas":3}})", Reason::kOk,
       R"({"metadata":{"name":"n"},"spec":{"replicas":3}})"},
      {"application/merge-patch+json; charset=utf-8", R"({"spec":null})", Reason::kOk,
       R"({"metadata":{"name":"n"}})"},
      {"application/json-patch+json", R"([{"op":"replace","path":"/spec/replicas","value":2}])",
       Reason::kOk, R"({"metadata":{"name":"n"},"spec":{"replicas":2}})"},
      {"application/strategic-merge-patch+json", R"({"spec":{"paused":true}})", Reason::kOk,
       R"({"metadata":{"name":"n"},"spec":{"replicas":1,"paused":true}})"},
      {"application/apply-patch+yaml", "spec: {}", Reason::kUnsupportedMediaType,
       "application/apply-patch+yaml is server-side apply, which the field manager applies, not "
       "a patch"},
      {"application/json", "{}", Reason::kUnsupportedMediaType,
       "the body of the request was in an unknown format - accepted media types include: "
       "application/json-patch+json, application/merge-patch+json, "
       "application/strategic-merge-patch+json"},
      {"application/merge-patch+json", R"({"spec":)", Reason::kBadRequest, ""},
      {"application/merge-patch+json", R"([1])", Reason::kBadRequest,
       "merge patch must be a JSON object, got array"},
      {"application/strategic-merge-patch+json", R"("x")", Reason::kBadRequest,
       "strategic merge patch must be a JSON object, got string"},
      {"application/json-patch+json", R"([{"op":"replace","path":"","value":5}])", Reason::kInvalid,
       "the patched object must be a JSON object, got integer"},
  };
  for (const ApplyCase& c : cases) {
    StatusOr<json::value> out =
        ApplyPatch(c.content_type, original.as_object(), c.patch, PatchInfoLookup());
    if (c.reason == Reason::kOk) {
      ASSERT_TRUE(out.ok()) << c.content_type << ": " << out.status().ToString();
      EXPECT_TRUE(JsonEqual(*out, J(c.result_or_message))) << ToJson(*out);
      continue;
    }
    ASSERT_FALSE(out.ok()) << c.content_type << " " << c.patch;
    EXPECT_EQ(out.status().reason(), c.reason) << c.content_type << " " << c.patch;
    if (c.result_or_message.empty()) {
      EXPECT_TRUE(out.status().message().starts_with("invalid JSON")) << out.status().message();
    } else {
      EXPECT_EQ(out.status().message(), c.result_or_message);
    }
  }
}

TEST(JsonEqual, NumbersByValue) {
  EXPECT_TRUE(JsonEqual(J("1"), J("1.0")));
  EXPECT_TRUE(JsonEqual(J("18446744073709551615"), J("18446744073709551615")));
  EXPECT_FALSE(JsonEqual(J("-1"), J("18446744073709551615")));
  EXPECT_FALSE(JsonEqual(J(R"({"a":1})"), J(R"({"a":1,"b":2})")));
  EXPECT_FALSE(JsonEqual(J("[1,2]"), J("[2,1]")));
  EXPECT_FALSE(JsonEqual(J(R"("1")"), J("1")));
  EXPECT_TRUE(JsonEqual(J(R"({"a":[null,true]})"), J(R"({"a":[null,true]})")));
}

}  // namespace
}  // namespace flotilla::api
