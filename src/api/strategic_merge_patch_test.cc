#include <gtest/gtest.h>

#include <map>

#include "api/patch.h"
#include "api/test_util.h"

namespace flotilla::api {
namespace {

// The Kubernetes patch metadata of the fields these tests touch.
FieldPatchInfo KubeLookup(const std::vector<std::string>& path) {
  static const std::map<std::string, FieldPatchInfo> kInfo = {
      {"spec.template.spec.containers", {"merge", "name"}},
      {"spec.template.spec.initContainers", {"merge", "name"}},
      {"spec.template.spec.containers.ports", {"merge", "containerPort"}},
      {"spec.template.spec.containers.env", {"merge", "name"}},
      {"spec.template.spec.containers.volumeMounts", {"merge", "mountPath"}},
      {"spec.template.spec.volumes", {"merge,retainKeys", "name"}},
      {"spec.template.spec.imagePullSecrets", {"merge", "name"}},
      {"spec.strategy", {"retainKeys", ""}},
      {"spec.ports", {"merge", "port"}},
      {"spec.replaced", {"replace", ""}},
      {"status.conditions", {"merge", "type"}},
      {"metadata.ownerReferences", {"merge", "uid"}},
      {"metadata.finalizers", {"merge", ""}},
  };
  std::string key;
  for (const std::string& p : path) key += (key.empty() ? "" : ".") + p;
  auto it = kInfo.find(key);
  return it == kInfo.end() ? FieldPatchInfo{} : it->second;
}

using testing::J;

// A Deployment-shaped object whose pod spec is `pod_spec`.
std::string Deploy(std::string_view pod_spec) {
  return R"({"spec":{"template":{"spec":)" + std::string(pod_spec) + "}}}";
}

struct SmpCase {
  std::string name, original, patch, result;
};

TEST(StrategicMergePatch, Merges) {
  const std::string two =
      Deploy(R"({"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"}]})");
  const SmpCase cases[] = {
      {"maps merge and null deletes", R"({"metadata":{"labels":{"a":"1","b":"2"}}})",
       R"({"metadata":{"labels":{"b":null,"c":"3"}}})",
       R"({"metadata":{"labels":{"a":"1","c":"3"}}})"},
      {"null on absent key", R"({"a":1})", R"({"b":null})", R"({"a":1})"},
      {"merge by name", two, Deploy(R"({"containers":[{"name":"b","image":"z"}]})"),
       Deploy(R"({"containers":[{"name":"a","image":"x"},{"name":"b","image":"z"}]})")},
      {"new item without order goes first", two, Deploy(R"({"containers":[{"name":"c"}]})"),
       Deploy(
           R"({"containers":[{"name":"c"},{"name":"a","image":"x"},{"name":"b","image":"y"}]})")},
      {"setElementOrder places new item", two,
       Deploy(R"({"$setElementOrder/containers":[{"name":"a"},{"name":"b"},{"name":"c"}],
                  "containers":[{"name":"c"}]})"),
       Deploy(
           R"({"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"},{"name":"c"}]})")},
      {"setElementOrder reorders with delete",
       Deploy(R"({"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]})"),
       Deploy(R"({"$setElementOrder/containers":[{"name":"c"},{"name":"a"}],
                  "containers":[{"name":"b","$patch":"delete"}]})"),
       Deploy(R"({"containers":[{"name":"c"},{"name":"a"}]})")},
      {"delete directive in list", two,
       Deploy(R"({"containers":[{"name":"a","$patch":"delete"}]})"),
       Deploy(R"({"containers":[{"name":"b","image":"y"}]})")},
      {"replace directive in list", two,
       Deploy(R"({"containers":[{"name":"z","image":"q"},{"$patch":"replace"}]})"),
       Deploy(R"({"containers":[{"name":"z","image":"q"}]})")},
      {"nested lists by their own keys",
       Deploy(R"({"containers":[{"name":"a","ports":[{"containerPort":80,"name":"http"}],
                                  "env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}]})"),
       Deploy(
           R"({"containers":[{"name":"a","ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":443}],
                                  "env":[{"name":"B","value":"3"}]}]})"),
       Deploy(
           R"({"containers":[{"name":"a","ports":[{"containerPort":80,"name":"http","protocol":"TCP"},
                                                      {"containerPort":443}],
                                  "env":[{"name":"A","value":"1"},{"name":"B","value":"3"}]}]})")},
      {"list without strategy is replaced",
       Deploy(R"({"containers":[{"name":"a","args":["x","y"]}]})"),
       Deploy(R"({"containers":[{"name":"a","args":["z"]}]})"),
       Deploy(R"({"containers":[{"name":"a","args":["z"]}]})")},
      {"replace strategy on map", R"({"spec":{"replaced":{"a":1,"b":2}}})",
       R"({"spec":{"replaced":{"c":3}}})", R"({"spec":{"replaced":{"c":3}}})"},
      {"map replace directive", R"({"metadata":{"labels":{"a":"1"}}})",
       R"({"metadata":{"labels":{"$patch":"replace","x":"y"}}})",
       R"({"metadata":{"labels":{"x":"y"}}})"},
      {"map delete directive", R"({"spec":{"strategy":{"type":"Recreate"}}})",
       R"({"spec":{"strategy":{"$patch":"delete"}}})", R"({"spec":{"strategy":{}}})"},
      {"map merge directive", R"({"metadata":{"labels":{"a":"1"}}})",
       R"({"metadata":{"labels":{"$patch":"merge","b":"2"}}})",
       R"({"metadata":{"labels":{"a":"1","b":"2"}}})"},
      {"type change replaces", R"({"spec":{"x":{"a":1}}})", R"({"spec":{"x":[1]}})",
       R"({"spec":{"x":[1]}})"},
      {"added values are cleaned", R"({})",
       R"({"spec":{"a":{"b":null,"c":1},"d":{"$patch":"delete"}}})",
       R"({"spec":{"a":{"c":1},"d":{}}})"},
      {"service ports by port", R"({"spec":{"ports":[{"port":80,"targetPort":8080}]}})",
       R"({"spec":{"ports":[{"port":80,"targetPort":9090}]}})",
       R"({"spec":{"ports":[{"port":80,"targetPort":9090}]}})"},
      {"conditions by type",
       R"({"status":{"conditions":[{"type":"Ready","status":"False"},{"type":"Offline","status":"True"}]}})",
       R"({"status":{"conditions":[{"type":"Offline","status":"False"}]}})",
       R"({"status":{"conditions":[{"type":"Ready","status":"False"},{"type":"Offline","status":"False"}]}})"},
      {"owner references by uid",
       R"({"metadata":{"ownerReferences":[{"uid":"1","name":"a"},{"uid":"2","name":"b"}]}})",
       R"({"metadata":{"ownerReferences":[{"uid":"1","$patch":"delete"}]}})",
       R"({"metadata":{"ownerReferences":[{"uid":"2","name":"b"}]}})"},
      {"volumes keep key order", Deploy(R"({"volumes":[{"name":"v","emptyDir":{}}]})"),
       Deploy(R"({"volumes":[{"name":"v","emptyDir":{"medium":"Memory"}}]})"),
       Deploy(R"({"volumes":[{"name":"v","emptyDir":{"medium":"Memory"}}]})")},
  };
  for (const SmpCase& c : cases) {
    StatusOr<json::value> out = StrategicMergePatch(J(c.original), J(c.patch), KubeLookup);
    ASSERT_TRUE(out.ok()) << c.name << ": " << out.status().ToString();
    EXPECT_EQ(ToJson(*out), ToJson(J(c.result))) << c.name;
  }
}

TEST(StrategicMergePatch, PrimitiveLists) {
  const SmpCase cases[] = {
      {"union keeps server order", R"({"metadata":{"finalizers":["a","b"]}})",
       R"({"metadata":{"finalizers":["b"]}})", R"({"metadata":{"finalizers":["a","b"]}})"},
      {"new items first without order", R"({"metadata":{"finalizers":["a"]}})",
       R"({"metadata":{"finalizers":["c"]}})", R"({"metadata":{"finalizers":["c","a"]}})"},
      {"duplicates removed", R"({"metadata":{"finalizers":["a","a"]}})",
       R"({"metadata":{"finalizers":["a"]}})", R"({"metadata":{"finalizers":["a"]}})"},
      {"delete from primitive list", R"({"metadata":{"finalizers":["a","b","c"]}})",
       R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["b"]}})",
       R"({"metadata":{"finalizers":["a","c"]}})"},
      {"delete from absent list", R"({"metadata":{}})",
       R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["b"]}})", R"({"metadata":{}})"},
      {"kubectl-style change", R"({"metadata":{"finalizers":["a","b"]}})",
       R"({"metadata":{"$setElementOrder/finalizers":["b","c"],
                       "$deleteFromPrimitiveList/finalizers":["a"],"finalizers":["c"]}})",
       R"({"metadata":{"finalizers":["b","c"]}})"},
      {"set order only", R"({"metadata":{"finalizers":["a","b"]}})",
       R"({"metadata":{"$setElementOrder/finalizers":["b","a"]}})",
       R"({"metadata":{"finalizers":["b","a"]}})"},
      {"non-merge primitive list replaced", R"({"spec":{"args":["a"]}})",
       R"({"spec":{"args":["b"]}})", R"({"spec":{"args":["b"]}})"},
  };
  for (const SmpCase& c : cases) {
    StatusOr<json::value> out = StrategicMergePatch(J(c.original), J(c.patch), KubeLookup);
    ASSERT_TRUE(out.ok()) << c.name << ": " << out.status().ToString();
    EXPECT_EQ(ToJson(*out), ToJson(J(c.result))) << c.name;
  }
}

TEST(StrategicMergePatch, RetainKeys) {
  const std::string original =
      R"({"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}}})";
  StatusOr<json::value> out = StrategicMergePatch(
      J(original), J(R"({"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}})"),
      KubeLookup);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToJson(*out), R"({"spec":{"strategy":{"type":"Recreate"}}})");
  out = StrategicMergePatch(
      J(original),
      J(R"({"spec":{"strategy":{"$retainKeys":["type"],"rollingUpdate":{"maxSurge":2}}}})"),
      KubeLookup);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().reason(), Reason::kBadRequest);
  EXPECT_EQ(out.status().message(),
            "invalid patch format of retainKeys: field \"rollingUpdate\" is in the patch but not "
            "in $retainKeys");
}

struct SmpError {
  std::string name, original, patch;
  Reason reason;
  std::string message;
};

TEST(StrategicMergePatch, Errors) {
  const std::string two = Deploy(R"({"containers":[{"name":"a"},{"name":"b"}]})");
  const SmpError cases[] = {
      {"patch item without merge key", two, Deploy(R"({"containers":[{"image":"x"}]})"),
       Reason::kBadRequest, "map: {\"image\":\"x\"} does not contain declared merge key: name"},
      {"original item without merge key", Deploy(R"({"containers":[{"image":"x"}]})"),
       Deploy(R"({"containers":[{"name":"a"}]})"), Reason::kBadRequest,
       "map: {\"image\":\"x\"} does not contain declared merge key: name"},
      {"delete without merge key", two, Deploy(R"({"containers":[{"$patch":"delete"}]})"),
       Reason::kBadRequest,
       "map: {\"$patch\":\"delete\"} does not contain declared merge key: name"},
      {"merge directive in list", two, Deploy(R"({"containers":[{"name":"a","$patch":"merge"}]})"),
       Reason::kBadRequest, "merging lists cannot yet be specified in the patch"},
      {"unknown list directive", two, Deploy(R"({"containers":[{"name":"a","$patch":"nope"}]})"),
       Reason::kBadRequest,
       "unknown patch type: nope in map: {\"name\":\"a\",\"$patch\":\"nope\"}"},
      {"unknown map directive", R"({"spec":{}})", R"({"spec":{"$patch":"nope"}})",
       Reason::kBadRequest, "unknown patch type: nope in map: {\"$patch\":\"nope\"}"},
      {"list of lists", R"({"metadata":{"finalizers":[["a"]]}})",
       R"({"metadata":{"finalizers":[["b"]]}})", Reason::kInvalid,
       "lists of lists are not supported"},
      {"mixed element types", R"({"metadata":{"finalizers":["a"]}})",
       R"({"metadata":{"finalizers":[1]}})", Reason::kBadRequest,
       "list element types are not identical: [\"a\"] [1]"},
      {"objects in a keyless merge list", R"({"metadata":{"finalizers":[{"a":1}]}})",
       R"({"metadata":{"finalizers":[{"b":1}]}})", Reason::kBadRequest,
       "cannot merge lists without merge key for metadata.finalizers"},
      {"bad delete list", R"({"metadata":{"finalizers":["a"]}})",
       R"({"metadata":{"$deleteFromPrimitiveList/finalizers":"a"}})", Reason::kBadRequest,
       "invalid patch format of primitive list"},
      {"bad retainKeys", R"({"spec":{}})", R"({"spec":{"$retainKeys":"type"}})",
       Reason::kBadRequest, "invalid patch format of retainKeys"},
      {"bad setElementOrder", R"({"metadata":{}})",
       R"({"metadata":{"$setElementOrder/finalizers":"a"}})", Reason::kBadRequest,
       "invalid patch format of setElementOrder list"},
      {"order does not match patch", R"({"metadata":{"finalizers":["a"]}})",
       R"({"metadata":{"$setElementOrder/finalizers":["a"],"finalizers":["b"]}})",
       Reason::kBadRequest,
       "The order in patch list:\n[\"b\"]\n doesn't match $setElementOrder list:\n[\"a\"]\n"},
      {"patch not an object", R"({})", R"([])", Reason::kBadRequest,
       "strategic merge patch must be a JSON object, got array"},
  };
  for (const SmpError& c : cases) {
    StatusOr<json::value> out = StrategicMergePatch(J(c.original), J(c.patch), KubeLookup);
    ASSERT_FALSE(out.ok()) << c.name << ": " << (out.ok() ? ToJson(*out) : "");
    EXPECT_EQ(out.status().reason(), c.reason) << c.name;
    EXPECT_EQ(out.status().message(), c.message) << c.name;
  }
}

TEST(StrategicMergePatch, EmptyLookupMergesMapsAndReplacesLists) {
  StatusOr<json::value> out =
      StrategicMergePatch(J(R"({"a":{"b":1},"l":[1,2]})"), J(R"({"a":{"c":2},"l":[3]})"), {});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(ToJson(*out), R"({"a":{"b":1,"c":2},"l":[3]})");
}

TEST(StrategicMergePatch, OriginalIsNotModified) {
  json::value original = J(Deploy(R"({"containers":[{"name":"a","image":"x"}]})"));
  std::string before = ToJson(original);
  StatusOr<json::value> out = StrategicMergePatch(
      original, J(Deploy(R"({"containers":[{"name":"a","image":"y"}]})")), KubeLookup);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(ToJson(original), before);
}

}  // namespace
}  // namespace flotilla::api
