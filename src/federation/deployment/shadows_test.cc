#include "federation/deployment/shadows.h"

#include <gtest/gtest.h>

#include "api/deployment/deployment_util.h"

namespace flotilla::federation::deployment {
namespace {

json::object Deployment(const std::string& image) {
  auto d = ParseJsonObject(R"({"apiVersion": "apps/v1", "kind": "Deployment",
      "metadata": {"name": "web", "namespace": "shop", "uid": "d-uid", "generation": 4,
                   "annotations": {"kubernetes.io/change-cause": "v2",
                                   "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
      "spec": {"replicas": 6, "minReadySeconds": 3, "revisionHistoryLimit": 1,
               "strategy": {"type": "RollingUpdate",
                            "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
               "selector": {"matchLabels": {"app": "web"}},
               "template": {"metadata": {"labels": {"app": "web"}},
                            "spec": {"containers": [{"name": "c", "image": "IMAGE"}]}}}})");
  EXPECT_TRUE(d.ok());
  json::object out = *d;
  out["spec"]
      .as_object()["template"]
      .as_object()["spec"]
      .as_object()["containers"]
      .as_array()[0]
      .as_object()["image"] = image;
  return out;
}

runtime::ObjectPtr Ptr(json::object o) {
  return std::make_shared<const json::object>(std::move(o));
}

TEST(ShadowsTest, TheCurrentShadowIsNamedAsTheMembersNameTheirReplicaSets) {
  json::object d = Deployment("v1");
  ShadowCounts counts;
  counts.spec_replicas = 6;
  json::object s = DesiredCurrentShadow(d, nullptr, "1", counts);
  std::string hash =
      api::deployment::ComputeHash(*Find(d, "spec.template")->if_object(), std::nullopt);
  EXPECT_EQ(StringAt(s, "metadata.name"), "web-" + hash);
  EXPECT_EQ(NewShadowName(d), "web-" + hash);
  EXPECT_EQ(*Find(s, "spec.replicas"), json::value(6));
  EXPECT_EQ(*Find(s, "spec.minReadySeconds"), json::value(3));
  EXPECT_EQ(StringAt(s, "spec.selector.matchLabels.pod-template-hash"), hash);
  EXPECT_EQ(StringAt(s, "spec.template.metadata.labels.pod-template-hash"), hash);
  const json::object& labels = Find(s, "metadata.labels")->as_object();
  EXPECT_EQ(labels.at("app"), "web");
  EXPECT_EQ(labels.at("federation.kubernetes.io/shadow-of"), "web");
  const json::object& a = Find(s, "metadata.annotations")->as_object();
  EXPECT_EQ(a.at("federation.kubernetes.io/shadow-replicaset"), "true");
  EXPECT_EQ(a.at("deployment.kubernetes.io/revision"), "1");
  EXPECT_EQ(a.at("deployment.kubernetes.io/desired-replicas"), "6");
  EXPECT_EQ(a.at("deployment.kubernetes.io/max-replicas"), "8");
  EXPECT_EQ(a.at("kubernetes.io/change-cause"), "v2");
  EXPECT_FALSE(a.contains("kubectl.kubernetes.io/last-applied-configuration"));
  const json::object& owner = Find(s, "metadata.ownerReferences")->as_array()[0].as_object();
  EXPECT_EQ(owner.at("uid"), "d-uid");
  EXPECT_EQ(owner.at("controller"), true);
}

TEST(ShadowsTest, AnOldTemplateBecomingCurrentMovesItsRevisionIntoHistory) {
  json::object d = Deployment("v1");
  json::object first = DesiredCurrentShadow(d, nullptr, "1", {});
  json::object again = DesiredCurrentShadow(d, &first, "3", {});
  const json::object& a = Find(again, "metadata.annotations")->as_object();
  EXPECT_EQ(a.at("deployment.kubernetes.io/revision"), "3");
  EXPECT_EQ(a.at("deployment.kubernetes.io/revision-history"), "1");
  EXPECT_EQ(StringAt(again, "metadata.name"), StringAt(first, "metadata.name"));
}

TEST(ShadowsTest, ShadowsAreFoundByLabelAndOwnerAndTheCurrentByTemplate) {
  json::object d = Deployment("v2");
  json::object v1 = DesiredCurrentShadow(Deployment("v1"), nullptr, "1", {});
  json::object v2 = DesiredCurrentShadow(d, nullptr, "2", {});
  json::object stripped = v1;  // an orphaning delete took its owner reference
  stripped["metadata"].as_object().erase("ownerReferences");
  stripped["metadata"].as_object()["name"] = "web-stripped";
  json::object foreign = v1;
  foreign["metadata"].as_object()["ownerReferences"].as_array()[0].as_object()["uid"] = "other";
  json::object edited = v1;  // controlled by d, its annotation removed by hand
  edited["metadata"].as_object()["name"] = "web-edited";
  edited["metadata"].as_object()["annotations"].as_object().erase(
      "federation.kubernetes.io/shadow-replicaset");
  json::object plain = edited;  // neither controlled nor annotated
  plain["metadata"].as_object()["name"] = "web-plain";
  plain["metadata"].as_object().erase("ownerReferences");
  json::object elsewhere = v1;
  elsewhere["metadata"].as_object()["namespace"] = "other";
  std::vector<runtime::ObjectPtr> all{Ptr(v1),     Ptr(v2),    Ptr(stripped), Ptr(foreign),
                                      Ptr(edited), Ptr(plain), Ptr(elsewhere)};
  std::vector<runtime::ObjectPtr> mine = ShadowsOf(d, all);
  ASSERT_EQ(mine.size(), 4u);  // v1, v2, stripped, edited
  EXPECT_EQ(CurrentShadow(d, mine), all[1]);
  EXPECT_EQ(MaxRevision(mine), 2);
  EXPECT_EQ(CurrentRevision(d, mine), "2");
  EXPECT_EQ(CurrentRevision(Deployment("v1"), mine), "3");  // a rollback
  EXPECT_EQ(CurrentRevision(Deployment("v3"), mine), "3");
  EXPECT_EQ(CurrentShadow(Deployment("v3"), mine), nullptr);
}

TEST(ShadowsTest, EditsShowAsDifferencesAndOldShadowsKeepTheirTemplate) {
  json::object d = Deployment("v2");
  json::object old = DesiredCurrentShadow(Deployment("v1"), nullptr, "1", {});
  json::object edited = old;
  edited["spec"].as_object()["replicas"] = 50;
  edited["metadata"].as_object()["labels"].as_object().erase("federation.kubernetes.io/shadow-of");
  ShadowCounts counts;
  counts.spec_replicas = 2;
  json::object restored = DesiredOldShadow(d, edited, counts);
  EXPECT_TRUE(ShadowNeedsUpdate(edited, restored));
  EXPECT_EQ(*Find(restored, "spec.replicas"), json::value(2));
  EXPECT_EQ(*Find(restored, "spec.template"), *Find(old, "spec.template"));
  EXPECT_EQ(StringAt(restored, "metadata.labels.app"), "web");
  EXPECT_FALSE(ShadowNeedsUpdate(restored, restored));
}

TEST(ShadowsTest, CountsAreTheMembersSums) {
  ShadowCounts c;
  c.Add(json::object{{"spec", json::object{{"replicas", 2}}},
                     {"status", json::object{{"replicas", 2},
                                             {"readyReplicas", 1},
                                             {"availableReplicas", 1},
                                             {"fullyLabeledReplicas", 2}}}});
  c.Add(json::object{{"spec", json::object{{"replicas", 3}}},
                     {"status", json::object{{"replicas", 3}, {"readyReplicas", 3}}}});
  json::object shadow{{"metadata", json::object{{"generation", 7}}}};
  json::object status = ShadowStatus(shadow, c);
  EXPECT_EQ(c.spec_replicas, 5);
  EXPECT_EQ(status.at("replicas"), 5);
  EXPECT_EQ(status.at("readyReplicas"), 4);
  EXPECT_EQ(status.at("availableReplicas"), 1);
  EXPECT_EQ(status.at("observedGeneration"), 7);
}

TEST(ShadowsTest, OldShadowsBeyondTheHistoryLimitWithoutReplicasGo) {
  json::object d = Deployment("v9");  // revisionHistoryLimit 1
  auto old = [&](const std::string& image, const std::string& revision, int64_t replicas) {
    ShadowCounts c;
    c.spec_replicas = replicas;
    return Ptr(DesiredCurrentShadow(Deployment(image), nullptr, revision, c));
  };
  std::vector<runtime::ObjectPtr> shadows{old("v3", "3", 0), old("v1", "1", 0), old("v2", "2", 4)};
  std::vector<runtime::ObjectPtr> gone = ShadowsBeyondHistory(d, shadows);
  // Revisions 1 and 2 are beyond the limit; 2 still holds replicas.
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0], shadows[1]);
}

}  // namespace
}  // namespace flotilla::federation::deployment
