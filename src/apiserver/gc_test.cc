#include "apiserver/gc.h"

#include <gtest/gtest.h>

#include <thread>

#include "apiserver/api_server_test_util.h"

namespace flotilla::apiserver {
namespace {

using testing::RecordingResponder;
using testing::TestServer;

// Polls `cond` until it holds (bounded), for effects of background threads.
bool Eventually(const std::function<bool()>& cond) {
  for (int i = 0; i < 2000; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

class GcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gc_ = std::make_unique<GarbageCollector>(s_.api().objects());
    ASSERT_TRUE(gc_->Start().ok());
  }
  void TearDown() override { gc_->Stop(); }

  std::string Create(const std::string& path, const std::string& body) {
    RecordingResponder r;
    s_.Do(r, "POST", path, body);
    EXPECT_EQ(r.code(), 201) << r.body();
    return std::string(Find(r.Json(), "metadata.uid")->as_string());
  }
  int Code(const std::string& path) {
    RecordingResponder r;
    s_.Do(r, "GET", path);
    return r.code();
  }
  json::object Object(const std::string& path) {
    RecordingResponder r;
    s_.Do(r, "GET", path);
    return r.Json();
  }
  void Delete(const std::string& path, const std::string& policy) {
    RecordingResponder r;
    s_.Do(r, "DELETE", path + "?propagationPolicy=" + policy);
    ASSERT_EQ(r.code(), 200) << r.body();
  }
  std::string Owned(const std::string& name, const std::string& owner_uid) {
    return R"({"metadata":{"name":")" + name +
           R"(","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":")" +
           owner_uid + R"(","blockOwnerDeletion":true}]}})";
  }

  TestServer s_;
  std::unique_ptr<GarbageCollector> gc_;
};

const char* kCms = "/api/v1/namespaces/default/configmaps";

TEST_F(GcTest, BackgroundDeletesDependents) {
  std::string uid = Create(kCms, R"({"metadata":{"name":"owner"}})");
  Create(kCms, Owned("dep", uid));
  Delete(std::string(kCms) + "/owner", "Background");
  EXPECT_TRUE(Eventually([&] { return Code(std::string(kCms) + "/dep") == 404; }));
}

TEST_F(GcTest, OrphanStripsOwnerReferences) {
  std::string uid = Create(kCms, R"({"metadata":{"name":"owner"}})");
  Create(kCms, Owned("dep", uid));
  Delete(std::string(kCms) + "/owner", "Orphan");
  EXPECT_TRUE(Eventually([&] { return Code(std::string(kCms) + "/owner") == 404; }));
  json::object dep = Object(std::string(kCms) + "/dep");
  EXPECT_EQ(Find(dep, "metadata.ownerReferences"), nullptr);
}

TEST_F(GcTest, ForegroundWaitsForDependents) {
  std::string uid = Create(kCms, R"({"metadata":{"name":"owner"}})");
  Create(kCms, Owned("dep", uid));
  Delete(std::string(kCms) + "/owner", "Foreground");
  EXPECT_TRUE(Eventually([&] { return Code(std::string(kCms) + "/owner") == 404; }));
  EXPECT_EQ(Code(std::string(kCms) + "/dep"), 404);
}

TEST_F(GcTest, DanglingOwnerReferenceIsCollected) {
  Create(kCms, Owned("orphaned", "00000000-0000-4000-8000-000000000000"));
  EXPECT_TRUE(Eventually([&] { return Code(std::string(kCms) + "/orphaned") == 404; }));
}

// The collector looks again at an object only when a write changes its
// owners, deletion or finalizers: writes that change anything else leave
// the index as it was, and an owner reference added later is checked.
TEST_F(GcTest, OnlyWritesThatChangeOwnershipAreCheckedAgain) {
  std::string uid = Create(kCms, R"({"metadata":{"name":"owner"}})");
  Create(kCms, Owned("dep", uid));
  Create(kCms, R"({"metadata":{"name":"late"}})");
  auto patch = [&](const std::string& name, const std::string& body) {
    RecordingResponder r;
    s_.Do(r, "PATCH", std::string(kCms) + "/" + name, body, "application/merge-patch+json");
    ASSERT_EQ(r.code(), 200) << r.body();
  };
  for (int i = 0; i < 3; ++i) patch("dep", R"({"data":{"k":")" + std::to_string(i) + R"("}})");
  patch("late", R"({"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap",)"
                R"("name":"gone","uid":"00000000-0000-4000-8000-000000000001"}]}})");
  EXPECT_TRUE(Eventually([&] { return Code(std::string(kCms) + "/late") == 404; }));
  EXPECT_EQ(Code(std::string(kCms) + "/dep"), 200);
  Delete(std::string(kCms) + "/owner", "Background");
  EXPECT_TRUE(Eventually([&] { return Code(std::string(kCms) + "/dep") == 404; }));
}

TEST_F(GcTest, NamespaceDeletionRemovesContentsThenItself) {
  Create("/api/v1/namespaces", R"({"metadata":{"name":"team"}})");
  Create("/api/v1/namespaces/team/configmaps", R"({"metadata":{"name":"a"}})");
  RecordingResponder d;
  s_.Do(d, "DELETE", "/api/v1/namespaces/team");
  ASSERT_EQ(d.code(), 200) << d.body();
  EXPECT_EQ(*Find(d.Json(), "status.phase"), "Terminating");
  EXPECT_TRUE(Eventually([&] { return Code("/api/v1/namespaces/team") == 404; }));
  EXPECT_EQ(Code("/api/v1/namespaces/team/configmaps/a"), 404);
}

}  // namespace
}  // namespace flotilla::apiserver
