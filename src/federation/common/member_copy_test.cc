#include "federation/common/member_copy.h"

#include <gtest/gtest.h>

#include "api/federated.h"
#include "federation/common/test_util.h"

namespace flotilla::federation {
namespace {

using testing::Obj;

TEST(MemberCopyTest, FederatedObjectKeyNamesNamespaceAndName) {
  EXPECT_EQ(FederatedObjectKey(Obj(R"({"metadata":{"name":"a","namespace":"n"}})")), "n/a");
  EXPECT_EQ(FederatedObjectKey(Obj(R"({"metadata":{"name":"n"}})")), "n");
}

TEST(MemberCopyTest, MetadataKeepsUserLabelsAndAnnotationsAndStampsManaged) {
  json::object fed = Obj(R"({"metadata":{
      "name":"web","namespace":"shop","uid":"u1","resourceVersion":"7",
      "finalizers":["federation.kubernetes.io/delete-from-underlying-clusters"],
      "labels":{"app":"web"},
      "annotations":{"note":"x",
                     "federation.alpha.kubernetes.io/cluster-selector":"[]",
                     "federation.kubernetes.io/deletion-propagation":"Orphan"}}})");
  json::object meta = MemberMetadata(fed);
  json::object want = Obj(R"({
      "name":"web","namespace":"shop",
      "labels":{"app":"web","federation.kubernetes.io/managed-by":"flotilla"},
      "annotations":{"note":"x","federation.kubernetes.io/federated-object":"shop/web"}})");
  EXPECT_EQ(meta, want);
}

TEST(MemberCopyTest, IsManagedNeedsTheLabelWithOurValue) {
  json::object obj = Obj(R"({"metadata":{"name":"a"}})");
  EXPECT_FALSE(IsManaged(obj));
  MarkManaged(obj, Obj(R"({"metadata":{"name":"a"}})"));
  EXPECT_TRUE(IsManaged(obj));
  EXPECT_FALSE(IsManaged(
      Obj(R"({"metadata":{"labels":{"federation.kubernetes.io/managed-by":"someone"}}})")));
}

TEST(MemberCopyTest, FederationOnlyAnnotations) {
  EXPECT_TRUE(IsFederationOnlyAnnotation(api::kClusterSelectorAnnotation));
  EXPECT_TRUE(IsFederationOnlyAnnotation(api::kDeletionPropagationAnnotation));
  EXPECT_TRUE(IsFederationOnlyAnnotation("federation.kubernetes.io/replica-set-preferences"));
  EXPECT_FALSE(IsFederationOnlyAnnotation("kubectl.kubernetes.io/last-applied-configuration"));
  // A domain, not a list: an annotation a new kind adds stays on the
  // federation without being declared anywhere.
  EXPECT_TRUE(IsFederationOnlyAnnotation("federation.kubernetes.io/job-preferences"));
  EXPECT_TRUE(IsFederationOnlyAnnotation("propagationpolicy.karmada.io/name"));
  EXPECT_FALSE(IsFederationOnlyAnnotation("federation.kubernetes.io"));
  EXPECT_FALSE(IsFederationOnlyAnnotation("example.com/federation.kubernetes.io/x"));
}

}  // namespace
}  // namespace flotilla::federation
