#include "federation/common/copy_versions.h"

#include <gtest/gtest.h>

#include "api/federated.h"
#include "federation/common/test_util.h"

namespace flotilla::federation {
namespace {

using testing::Obj;

const char* kDesired = R"({"apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web"},
                 "annotations": {"federation.kubernetes.io/federated-object": "default/web"}},
    "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "a"}]}}}})";

TEST(CopyVersionsTest, TheStampIsTheOwnedHashAndLeavesItselfOut) {
  json::object desired = Obj(kDesired);
  uint64_t hash = StampDesiredHash(desired);
  EXPECT_EQ(DesiredHashOf(desired), HashText(hash));
  EXPECT_EQ(HashText(hash).size(), 16u);
  // Stamping again (the annotation now present) gives the same hash.
  EXPECT_EQ(StampDesiredHash(desired), hash);
  EXPECT_EQ(OwnedHash(desired, desired), hash);
}

// What the federation owns: labels, its own annotations, the content. Not
// the member's annotations, status or metadata.
TEST(CopyVersionsTest, TheOwnedHashIgnoresWhatTheMemberAdds) {
  json::object desired = Obj(kDesired);
  StampDesiredHash(desired);
  json::object returned = desired;
  returned["metadata"].as_object()["uid"] = "u1";
  returned["metadata"].as_object()["resourceVersion"] = "7";
  returned["metadata"].as_object()["annotations"].as_object()["deployment.kubernetes.io/revision"] =
      "3";
  returned["status"] = json::object{{"replicas", 2}};
  EXPECT_EQ(OwnedHash(returned, desired), OwnedHash(desired, desired));

  // Zero values written back as null or empty are no difference.
  json::object nulled = returned;
  nulled["spec"].as_object()["template"].as_object()["metadata"] =
      json::object{{"creationTimestamp", nullptr}};
  nulled["spec"].as_object()["paused"] = nullptr;
  EXPECT_EQ(OwnedHash(nulled, desired), OwnedHash(desired, desired));

  // Field order does not matter (a server writes its own).
  json::object reordered{{"spec", desired["spec"]}, {"metadata", desired["metadata"]}};
  EXPECT_EQ(OwnedHash(reordered, desired), OwnedHash(desired, desired));

  // A changed spec, label or owned annotation does.
  json::object edited = returned;
  edited["spec"].as_object()["replicas"] = 3;
  EXPECT_NE(OwnedHash(edited, desired), OwnedHash(returned, desired));
  edited = returned;
  edited["metadata"].as_object()["labels"].as_object()["extra"] = "x";
  EXPECT_NE(OwnedHash(edited, desired), OwnedHash(returned, desired));
  edited = returned;
  edited["metadata"].as_object()["annotations"].as_object()[api::kFederatedObjectAnnotation] = "x";
  EXPECT_NE(OwnedHash(edited, desired), OwnedHash(returned, desired));
}

TEST(CopyVersionsTest, RemembersPerObjectAndCluster) {
  CopyVersions v;
  EXPECT_FALSE(v.Find("default/web", "a"));
  v.Remember("default/web", "a", {.want = 1, .got = 2});
  v.Remember("default/web", "b", {.want = 3, .got = 4});
  v.Remember("default/db", "a", {.want = 5, .got = 6});
  EXPECT_EQ(v.Find("default/web", "a")->got, 2u);
  EXPECT_EQ(v.Find("default/web", "b")->want, 3u);
  EXPECT_EQ(v.size(), 3u);
  v.Forget("default/web");
  EXPECT_FALSE(v.Find("default/web", "a"));
  EXPECT_TRUE(v.Find("default/db", "a"));
  EXPECT_EQ(v.size(), 1u);
}

// The hash is written into every copy (kDesiredHashAnnotation), so it must
// not change from one build to the next: a federation upgraded would find
// every copy's annotation stale and write them all again. These are the
// values of the first build that wrote them (objects with nulls, empties,
// escapes and fields in every order).
TEST(CopyVersionsTest, TheHashIsTheSameFromBuildToBuild) {
  EXPECT_EQ(HashText(OwnedHash(Obj(kDesired), Obj(kDesired))), "d3bb5a66788d1767");
  json::object odd = Obj(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c",
    "labels":{"z":"1","a":"2"},"annotations":{"b":"x","a":"y","gone":"q"}},
    "data":{"k\"ey":"v\u00e9\n","e":""},"binaryData":{},
    "extra":[null,{},[],{"a":null,"b":[{"c":{}}]}],"n":null,"num":1.5,"t":true})");
  EXPECT_EQ(HashText(OwnedHash(odd, odd)), "a1611b8137d26577");
  json::object have = odd;
  have["metadata"].as_object()["annotations"].as_object().erase("gone");
  EXPECT_EQ(HashText(OwnedHash(have, odd)), "5dbd8d41e6516867");
  json::object bare =
      Obj(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{}})");
  EXPECT_EQ(HashText(OwnedHash(bare, bare)), "08f44b07b5901a25");
}

}  // namespace
}  // namespace flotilla::federation
