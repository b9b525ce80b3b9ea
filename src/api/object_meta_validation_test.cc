#include <gtest/gtest.h>

#include "api/validation.h"

namespace flotilla::api {
namespace {

json::object Obj(std::string_view text) { return ParseJsonObject(text).value(); }

// "field|type" for each cause, for compact expectations.
std::vector<std::string> Summary(const std::vector<StatusCause>& causes) {
  std::vector<std::string> out;
  for (const StatusCause& c : causes) out.push_back(c.field + "|" + c.type);
  return out;
}

struct MetaCase {
  std::string name;
  std::string object;
  ObjectMetaOptions options;
  std::vector<std::string> causes;
};

ObjectMetaOptions ClusterScoped() {
  ObjectMetaOptions o;
  o.namespaced = false;
  return o;
}

ObjectMetaOptions Service() {
  ObjectMetaOptions o;
  o.validate_name = NameIsDNS1035Label;
  return o;
}

TEST(ValidateObjectMeta, Table) {
  const MetaCase cases[] = {
      {"valid", R"({"metadata":{"name":"web","namespace":"default"}})", {}, {}},
      {"no name",
       R"({"metadata":{"namespace":"default"}})",
       {},
       {"metadata.name|FieldValueRequired"}},
      {"no metadata",
       R"({})",
       {},
       {"metadata.name|FieldValueRequired", "metadata.namespace|FieldValueRequired"}},
      {"generateName only", R"({"metadata":{"generateName":"web-","namespace":"d"}})", {}, {}},
      {"bad generateName",
       R"({"metadata":{"generateName":"Web-","namespace":"d"}})",
       {},
       {"metadata.generateName|FieldValueInvalid"}},
      {"bad name",
       R"({"metadata":{"name":"X_y","namespace":"d"}})",
       {},
       {"metadata.name|FieldValueInvalid"}},
      {"service name",
       R"({"metadata":{"name":"1svc","namespace":"d"}})",
       Service(),
       {"metadata.name|FieldValueInvalid"}},
      {"cluster scoped with namespace",
       R"({"metadata":{"name":"n","namespace":"d"}})",
       ClusterScoped(),
       {"metadata.namespace|FieldValueForbidden"}},
      {"bad namespace",
       R"({"metadata":{"name":"n","namespace":"a.b"}})",
       {},
       {"metadata.namespace|FieldValueInvalid"}},
      {"negative generation",
       R"({"metadata":{"name":"n","namespace":"d","generation":-1}})",
       {},
       {"metadata.generation|FieldValueInvalid"}},
      {"labels",
       R"({"metadata":{"name":"n","namespace":"d","labels":{"-a":"b","c":"-d"}}})",
       {},
       {"metadata.labels|FieldValueInvalid", "metadata.labels|FieldValueInvalid"}},
      {"string fields of other types",
       R"({"metadata":{"name":"n","namespace":"d","uid":7,"resourceVersion":true}})",
       {},
       {"metadata.resourceVersion|FieldValueTypeInvalid", "metadata.uid|FieldValueTypeInvalid"}},
      {"label type",
       R"({"metadata":{"name":"n","namespace":"d","labels":{"a":1}}})",
       {},
       {"metadata.labels.a|FieldValueTypeInvalid"}},
      {"annotation keys are case-insensitive",
       R"({"metadata":{"name":"n","namespace":"d","annotations":{"Example.COM/Key":"v"}}})",
       {},
       {}},
      {"bad annotation key",
       R"({"metadata":{"name":"n","namespace":"d","annotations":{"a b":"v"}}})",
       {},
       {"metadata.annotations|FieldValueInvalid"}},
      {"owner refs",
       R"({"metadata":{"name":"n","namespace":"d","ownerReferences":[{"apiVersion":"","kind":"","name":"","uid":""}]}})",
       {},
       {"metadata.ownerReferences.apiVersion|FieldValueInvalid",
        "metadata.ownerReferences.kind|FieldValueInvalid",
        "metadata.ownerReferences.name|FieldValueInvalid",
        "metadata.ownerReferences.uid|FieldValueInvalid"}},
      {"event owner",
       R"({"metadata":{"name":"n","namespace":"d","ownerReferences":[{"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}]}})",
       {},
       {"metadata.ownerReferences|FieldValueInvalid"}},
      {"two controllers",
       R"({"metadata":{"name":"n","namespace":"d","ownerReferences":[
         {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"a","uid":"1","controller":true},
         {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"b","uid":"2","controller":true}]}})",
       {},
       {"metadata.ownerReferences|FieldValueInvalid"}},
      {"finalizers",
       R"({"metadata":{"name":"n","namespace":"d","finalizers":["kubernetes","example.com/x","custom"]}})",
       {},
       {"metadata.finalizers[2]|FieldValueInvalid"}},
      {"orphan and foreground",
       R"({"metadata":{"name":"n","namespace":"d","finalizers":["orphan","foregroundDeletion"]}})",
       {},
       {"metadata.finalizers|FieldValueInvalid"}},
  };
  for (const MetaCase& c : cases) {
    EXPECT_EQ(Summary(ValidateObjectMeta(Obj(c.object), c.options)), c.causes) << c.name;
  }
}

TEST(ValidateObjectMeta, NonKubeFinalizerNamesAllowedWhenAsked) {
  ObjectMetaOptions o;
  o.kube_finalizer_names = false;
  EXPECT_TRUE(
      ValidateObjectMeta(Obj(R"({"metadata":{"name":"n","namespace":"d","finalizers":["x"]}})"), o)
          .empty());
}

TEST(ValidateObjectMeta, Messages) {
  std::vector<StatusCause> causes =
      ValidateObjectMeta(Obj(R"({"metadata":{"name":"n","namespace":"d","finalizers":["custom"],
               "ownerReferences":[{"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}]}})"),
                         {});
  ASSERT_EQ(causes.size(), 2u);
  EXPECT_EQ(
      causes[0].message,
      "Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"e\",\"uid\":\"u\"}: "
      "/v1, Kind=Event is disallowed from being an owner");
  EXPECT_EQ(causes[1].message,
            "Invalid value: \"custom\": name is neither a standard finalizer name nor is it fully "
            "qualified");
  causes = ValidateObjectMeta(Obj(R"({"metadata":{"namespace":"d"}})"), {});
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].message, "Required value: name or generateName is required");
}

TEST(ValidateAnnotations, TotalSizeLimit) {
  json::value small = json::object{{"a", std::string(262143, 'x')}};
  json::value big = json::object{{"a", std::string(262144, 'x')}};
  EXPECT_TRUE(ValidateAnnotations(&small, "metadata.annotations").empty());
  std::vector<StatusCause> causes = ValidateAnnotations(&big, "metadata.annotations");
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].type, "FieldValueTooLong");
  EXPECT_EQ(causes[0].message, "Too long: may not be more than 262144 bytes");
}

struct UpdateCase {
  std::string name;
  std::string old_object;
  std::string new_object;
  std::vector<std::string> causes;
};

TEST(ValidateObjectMetaUpdate, Table) {
  const std::string old_obj =
      R"({"metadata":{"name":"n","namespace":"d","uid":"u1","resourceVersion":"5",
          "generation":3,"creationTimestamp":"2024-01-01T00:00:00Z","finalizers":["a/b"]}})";
  const UpdateCase cases[] = {
      {"unchanged", old_obj, old_obj, {}},
      {"renamed",
       old_obj,
       R"({"metadata":{"name":"m","namespace":"d","uid":"u1","resourceVersion":"5",
           "generation":3,"creationTimestamp":"2024-01-01T00:00:00Z"}})",
       {"metadata.name|FieldValueInvalid"}},
      {"uid and timestamp changed",
       old_obj,
       R"({"metadata":{"name":"n","namespace":"d","uid":"u2","resourceVersion":"5",
           "generation":3,"creationTimestamp":"2025-01-01T00:00:00Z"}})",
       {"metadata.uid|FieldValueInvalid", "metadata.creationTimestamp|FieldValueInvalid"}},
      {"no resourceVersion and generation decremented",
       old_obj,
       R"({"metadata":{"name":"n","namespace":"d","uid":"u1","generation":2,
           "creationTimestamp":"2024-01-01T00:00:00Z"}})",
       {"metadata.resourceVersion|FieldValueInvalid", "metadata.generation|FieldValueInvalid"}},
      {"new finalizer while deleting",
       R"({"metadata":{"name":"n","namespace":"d","resourceVersion":"5",
           "deletionTimestamp":"2024-01-02T00:00:00Z","finalizers":["a/b"]}})",
       R"({"metadata":{"name":"n","namespace":"d","resourceVersion":"5",
           "deletionTimestamp":"2024-01-02T00:00:00Z","finalizers":["a/b","c/d"]}})",
       {"metadata.finalizers|FieldValueForbidden"}},
  };
  for (const UpdateCase& c : cases) {
    EXPECT_EQ(Summary(ValidateObjectMetaUpdate(Obj(c.new_object), Obj(c.old_object), {})), c.causes)
        << c.name;
  }
  std::vector<StatusCause> causes = ValidateObjectMetaUpdate(
      Obj(R"({"metadata":{"name":"n","resourceVersion":"1","deletionTimestamp":"t","finalizers":["x/y","a/b"]}})"),
      Obj(R"({"metadata":{"name":"n","deletionTimestamp":"t"}})"), {});
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].message,
            "Forbidden: no new finalizers can be added if the object is being deleted, found new "
            "finalizers []string{\"a/b\", \"x/y\"}");
}

struct NamespaceCase {
  std::string object;
  std::string request_namespace;
  bool namespaced;
  bool ok;
  std::string namespace_after;  // "<absent>" when erased
};

TEST(EnsureNamespaceMatchesRequest, Table) {
  const NamespaceCase cases[] = {
      {R"({"metadata":{"name":"n"}})", "prod", true, true, "prod"},
      {R"({})", "prod", true, true, "prod"},
      {R"({"metadata":{"namespace":"prod"}})", "prod", true, true, "prod"},
      {R"({"metadata":{"namespace":"dev"}})", "prod", true, false, "dev"},
      {R"({"metadata":{"namespace":"dev"}})", "", false, true, "<absent>"},
      {R"({"metadata":{"name":"n"}})", "", false, true, "<absent>"},
  };
  for (const NamespaceCase& c : cases) {
    json::object obj = Obj(c.object);
    Status st = EnsureNamespaceMatchesRequest(obj, c.request_namespace, c.namespaced);
    EXPECT_EQ(st.ok(), c.ok) << c.object;
    if (!c.ok) {
      EXPECT_EQ(st.reason(), Reason::kBadRequest);
      EXPECT_EQ(st.message(),
                "the namespace of the provided object does not match the namespace sent on the "
                "request");
    }
    const json::value* ns = Find(obj, "metadata.namespace");
    EXPECT_EQ(ns ? std::string(ns->as_string()) : "<absent>", c.namespace_after) << c.object;
  }
}

}  // namespace
}  // namespace flotilla::api
