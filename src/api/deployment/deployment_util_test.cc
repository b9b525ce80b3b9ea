// The Deployment controller's pure rules.
#include "api/deployment/deployment_util.h"

#include <gtest/gtest.h>

#include <random>

namespace flotilla::api::deployment {
namespace {

json::object Deployment(int replicas, json::value surge, json::value unavailable) {
  return {{"metadata", {{"name", "web"}, {"annotations", {{"kubernetes.io/change-cause", "v2"}}}}},
          {"spec",
           {{"replicas", replicas},
            {"strategy",
             {{"type", "RollingUpdate"},
              {"rollingUpdate", {{"maxSurge", surge}, {"maxUnavailable", unavailable}}}}}}}};
}

TEST(DeploymentUtilTest, SurgeRoundsUpAndUnavailableRoundsDown) {
  EXPECT_EQ(MaxSurge(Deployment(10, "25%", "25%")), 3);
  EXPECT_EQ(MaxUnavailable(Deployment(10, "25%", "25%")), 2);
  EXPECT_EQ(MaxSurge(Deployment(3, 2, 0)), 2);
  EXPECT_EQ(MaxUnavailable(Deployment(3, 2, 0)), 0);
  // Both zero: one may be unavailable, so a rollout can move at all.
  EXPECT_EQ(MaxUnavailable(Deployment(3, "0%", "10%")), 1);
  // Capped at replicas.
  EXPECT_EQ(MaxUnavailable(Deployment(2, 0, 5)), 2);
  json::object recreate = {{"spec", {{"replicas", 3}, {"strategy", {{"type", "Recreate"}}}}}};
  EXPECT_EQ(MaxSurge(recreate), 0);
  EXPECT_EQ(MaxUnavailable(recreate), 0);
}

TEST(DeploymentUtilTest, HashIsStableIgnoresKeyOrderAndMovesWithCollisions) {
  json::object a = {{"metadata", {{"labels", {{"app", "web"}}}}},
                    {"spec", {{"containers", json::array{{{"name", "c"}, {"image", "nginx:1"}}}}}}};
  json::object b = {{"spec", {{"containers", json::array{{{"image", "nginx:1"}, {"name", "c"}}}}}},
                    {"metadata", {{"labels", {{"app", "web"}}}}}};
  std::string h = ComputeHash(a, std::nullopt);
  EXPECT_EQ(h, ComputeHash(b, std::nullopt));
  EXPECT_FALSE(h.empty());
  EXPECT_LE(h.size(), 10u);
  EXPECT_EQ(h.find_first_not_of("bcdfghjklmnpqrstvwxz2456789"), std::string::npos) << h;
  EXPECT_NE(h, ComputeHash(a, 1));
  EXPECT_NE(ComputeHash(a, 1), ComputeHash(a, 2));
  a["spec"].as_object()["containers"].as_array()[0].as_object()["image"] = "nginx:2";
  EXPECT_NE(h, ComputeHash(a, std::nullopt));
}

TEST(DeploymentUtilTest, EqualIgnoreHashIgnoresTheHashLabelAndEmptyFields) {
  json::object d = {{"metadata", {{"labels", {{"app", "web"}}}}},
                    {"spec", {{"containers", json::array{{{"name", "c"}}}}}}};
  json::object rs = {
      {"metadata",
       {{"labels", {{"app", "web"}, {"pod-template-hash", "abc"}}},
        {"annotations", json::object()}}},
      {"spec", {{"containers", json::array{{{"name", "c"}}}}, {"volumes", nullptr}}}};
  EXPECT_TRUE(EqualIgnoreHash(d, rs));
  rs["metadata"].as_object()["labels"].as_object()["tier"] = "x";
  EXPECT_FALSE(EqualIgnoreHash(d, rs));
}

// EqualIgnoreHash as defined: both templates without the hash label, with
// null, {} and [] members dropped recursively, then compared as values.
json::value Dropped(const json::value& v) {
  if (v.is_object()) {
    json::object out;
    for (const auto& [k, val] : v.get_object()) {
      json::value n = Dropped(val);
      bool empty = n.is_null() || (n.is_object() && n.get_object().empty()) ||
                   (n.is_array() && n.get_array().empty());
      if (!empty) out[k] = std::move(n);
    }
    return out;
  }
  if (v.is_array()) {
    json::array out;
    for (const json::value& e : v.get_array()) out.push_back(Dropped(e));
    return out;
  }
  return v;
}

bool EqualIgnoreHashByDefinition(json::object a, json::object b) {
  for (json::object* t : {&a, &b}) {
    json::value* meta = t->if_contains("metadata");
    json::value* labels =
        meta != nullptr && meta->is_object() ? meta->as_object().if_contains("labels") : nullptr;
    if (labels != nullptr && labels->is_object()) labels->as_object().erase(kHashLabel);
  }
  return Dropped(a) == Dropped(b);
}

// A small random value over few keys and values, so that equal pairs and
// near misses both come up often.
json::value RandomValue(std::mt19937& rng, int depth) {
  static constexpr const char* kKeys[] = {"labels", "metadata", "a", "b", "pod-template-hash"};
  switch (rng() % (depth > 2 ? 4 : 7)) {
    case 0:
      return nullptr;
    case 1:
      return static_cast<int64_t>(rng() % 2);
    case 2:
      return rng() % 2 ? "x" : "y";
    case 3:
      return static_cast<bool>(rng() % 2);
    case 4: {
      json::array arr;
      for (int i = rng() % 3; i > 0; --i) arr.push_back(RandomValue(rng, depth + 1));
      return arr;
    }
    default: {
      json::object obj;
      for (int i = rng() % 4; i > 0; --i) obj[kKeys[rng() % 5]] = RandomValue(rng, depth + 1);
      return obj;
    }
  }
}

json::object RandomTemplate(std::mt19937& rng) {
  json::object t;
  for (int i = rng() % 3; i > 0; --i) {
    json::object labels;
    if (rng() % 2) labels[kHashLabel] = rng() % 2 ? "abc" : "def";
    if (rng() % 2) labels["app"] = RandomValue(rng, 3);
    json::object meta;
    if (rng() % 4) meta["labels"] = rng() % 5 ? json::value(labels) : RandomValue(rng, 2);
    if (rng() % 2) meta["a"] = RandomValue(rng, 2);
    t["metadata"] = rng() % 6 ? json::value(meta) : RandomValue(rng, 1);
  }
  if (rng() % 2) t["spec"] = RandomValue(rng, 1);
  if (rng() % 3 == 0) t["b"] = RandomValue(rng, 1);
  return t;
}

TEST(DeploymentUtilTest, EqualIgnoreHashAgreesWithItsDefinition) {
  std::mt19937 rng(20261208);
  int equal = 0;
  for (int i = 0; i < 20000; ++i) {
    json::object a = RandomTemplate(rng);
    json::object b = rng() % 3 ? RandomTemplate(rng) : a;
    if (rng() % 2 && b.contains("metadata") && b["metadata"].is_object()) {
      // The same template as its ReplicaSet has it: the hash label added.
      json::object& meta = b["metadata"].as_object();
      if (!meta.contains("labels") || meta["labels"].is_object()) {
        EnsureObject(meta, "labels")[kHashLabel] = "abc";
      }
    }
    bool want = EqualIgnoreHashByDefinition(a, b);
    ASSERT_EQ(EqualIgnoreHash(a, b), want) << json::serialize(a) << " vs " << json::serialize(b);
    ASSERT_EQ(EqualIgnoreHash(b, a), want) << json::serialize(b) << " vs " << json::serialize(a);
    equal += want;
  }
  // Both outcomes come up often enough to mean something.
  EXPECT_GT(equal, 2000);
  EXPECT_LT(equal, 18000);
}

TEST(DeploymentUtilTest, NewReplicaSetAnnotationsCarryRevisionsAndHistory) {
  json::object d = Deployment(4, "25%", "25%");
  json::object rs = {{"metadata", {{"name", "web-abc"}}}};
  EXPECT_TRUE(SetNewReplicaSetAnnotations(d, rs, "1", false));
  const json::object& a = rs["metadata"].as_object()["annotations"].as_object();
  EXPECT_EQ(a.at(kRevisionAnnotation), "1");
  EXPECT_EQ(a.at(kDesiredReplicasAnnotation), "4");
  EXPECT_EQ(a.at(kMaxReplicasAnnotation), "5");
  EXPECT_EQ(a.at("kubernetes.io/change-cause"), "v2");
  EXPECT_FALSE(SetNewReplicaSetAnnotations(d, rs, "1", true));
  // Becoming new again at revision 3 (a rollback) keeps revision 1.
  EXPECT_TRUE(SetNewReplicaSetAnnotations(d, rs, "3", true));
  EXPECT_EQ(a.at(kRevisionAnnotation), "3");
  EXPECT_EQ(a.at(kRevisionHistoryAnnotation), "1");
  EXPECT_TRUE(SetNewReplicaSetAnnotations(d, rs, "5", true));
  EXPECT_EQ(a.at(kRevisionHistoryAnnotation), "1,3");
  // An older revision never replaces a newer one.
  EXPECT_FALSE(SetNewReplicaSetAnnotations(d, rs, "2", true));
  EXPECT_EQ(a.at(kRevisionAnnotation), "5");
}

TEST(DeploymentUtilTest, ConditionsKeepTransitionTimeWhileStatusHolds) {
  json::object status;
  TimePoint t0 = TimePoint(std::chrono::seconds(1000));
  SetCondition(status, NewCondition("Progressing", "True", kNewRSReason, "Created", t0));
  SetCondition(status, NewCondition("Progressing", "True", kNewRSReason, "again",
                                    t0 + std::chrono::seconds(5)));
  EXPECT_EQ(GetCondition(status, "Progressing")->at("message"), "Created");
  SetCondition(status, NewCondition("Progressing", "True", kNewRSAvailableReason, "done",
                                    t0 + std::chrono::seconds(9)));
  const json::object* c = GetCondition(status, "Progressing");
  EXPECT_EQ(c->at("reason"), json::value(kNewRSAvailableReason));
  EXPECT_EQ(c->at("lastTransitionTime"), json::value(FormatRfc3339(t0)));
  EXPECT_EQ(c->at("lastUpdateTime"), json::value(FormatRfc3339(t0 + std::chrono::seconds(9))));
  EXPECT_EQ(status.at("conditions").as_array().size(), 1u);
}

}  // namespace
}  // namespace flotilla::api::deployment
