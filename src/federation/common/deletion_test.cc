#include "federation/common/deletion.h"

#include <gtest/gtest.h>

#include "api/federated.h"
#include "api/views.h"
#include "federation/common/test_util.h"
#include "runtime/fake_client.h"

namespace flotilla::federation {
namespace {

const client::ResourceRef kConfigMaps{"", "v1", "configmaps", true};

using testing::Obj;

TEST(DeletionTest, PolicyFromTheAnnotation) {
  auto with = [](std::string_view policy) {
    json::object o = Obj(R"({"metadata":{"name":"a","annotations":{}}})");
    o["metadata"].as_object()["annotations"].as_object()[api::kDeletionPropagationAnnotation] =
        policy;
    return o;
  };
  EXPECT_FALSE(DeletesMemberCopies(Obj(R"({"metadata":{"name":"a"}})")));
  EXPECT_FALSE(DeletesMemberCopies(with("Orphan")));
  EXPECT_TRUE(DeletesMemberCopies(with("Background")));
  EXPECT_TRUE(DeletesMemberCopies(with("Foreground")));
}

TEST(DeletionTest, BeingDeleted) {
  EXPECT_FALSE(api::IsBeingDeleted(Obj(R"({"metadata":{"name":"a"}})")));
  EXPECT_TRUE(api::IsBeingDeleted(
      Obj(R"({"metadata":{"name":"a","deletionTimestamp":"2026-01-01T00:00:00Z"}})")));
}

TEST(DeletionTest, AddTheFinalizerInPlace) {
  json::object plain = Obj(R"({"metadata":{"name":"a"}})");
  EXPECT_TRUE(AddFederationFinalizer(plain));
  EXPECT_EQ(*Find(plain, "metadata.finalizers"),
            json::value(json::array{api::kDeleteFromUnderlyingClustersFinalizer}));
  EXPECT_FALSE(AddFederationFinalizer(plain));  // once only
  EXPECT_EQ(Find(plain, "metadata.finalizers")->as_array().size(), 1u);

  json::object others = Obj(R"({"metadata":{"name":"a","finalizers":["x/y"]}})");
  EXPECT_TRUE(AddFederationFinalizer(others));
  EXPECT_EQ(*Find(others, "metadata.finalizers"),
            json::value(json::array{"x/y", api::kDeleteFromUnderlyingClustersFinalizer}));

  json::object leaving =
      Obj(R"({"metadata":{"name":"a","deletionTimestamp":"2026-01-01T00:00:00Z"}})");
  EXPECT_FALSE(AddFederationFinalizer(leaving));  // no new finalizer once deletion started
  EXPECT_EQ(Find(leaving, "metadata.finalizers"), nullptr);
}

TEST(DeletionTest, RemoveTheFinalizer) {
  FakeClock clock;
  runtime::FakeClient client(clock);
  json::object obj = Obj(R"({"metadata":{"name":"a","namespace":"ns","finalizers":["x/y"]}})");
  ASSERT_TRUE(AddFederationFinalizer(obj));
  StatusOr<json::object> with = client.Create(kConfigMaps, "ns", obj);
  ASSERT_TRUE(with.ok());
  client.ClearActions();
  StatusOr<json::object> without = RemoveFederationFinalizer(client, kConfigMaps, *with);
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  EXPECT_FALSE(HasFinalizer(*without, api::kDeleteFromUnderlyingClustersFinalizer));
  EXPECT_TRUE(HasFinalizer(*without, "x/y"));

  StatusOr<json::object> stale = RemoveFederationFinalizer(client, kConfigMaps, *with);
  EXPECT_FALSE(stale.ok());  // a stale resourceVersion conflicts, nothing lost
  EXPECT_TRUE(stale.status().Is(Reason::kConflict)) << stale.status().ToString();
}

TEST(DeletionTest, RemovingFromAnObjectAlreadyGoneIsOk) {
  FakeClock clock;
  runtime::FakeClient client(clock);
  json::object gone = Obj(R"({"metadata":{"name":"a","namespace":"ns","resourceVersion":"5",
      "finalizers":["federation.kubernetes.io/delete-from-underlying-clusters"]}})");
  EXPECT_TRUE(RemoveFederationFinalizer(client, kConfigMaps, gone).ok());
}

}  // namespace
}  // namespace flotilla::federation
