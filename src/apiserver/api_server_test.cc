#include "apiserver/api_server.h"

#include <gtest/gtest.h>

#include <future>
#include <set>
#include <thread>

#include "api/kinds/kinds.h"
#include "apiserver/api_server_test_util.h"
#include "apiserver/discovery.h"
#include "apiserver/meta.h"

namespace flotilla::apiserver {
namespace {

using testing::RecordingResponder;
using testing::TestServer;

const char* kConfigMap =
    R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","labels":{"app":"web"}},"data":{"a":"1"}})";
const char* kDeployment = R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
  "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},
  "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx:1.25"}]}}}})";

json::object Get(TestServer& s, const std::string& path, int* code = nullptr) {
  RecordingResponder r;
  s.Do(r, "GET", path);
  if (code) *code = r.code();
  return r.Json();
}

TEST(ApiServerTest, CreateGetAndServerOwnedMetadata) {
  TestServer s;
  RecordingResponder r;
  s.Do(r, "POST", "/api/v1/namespaces/default/configmaps", kConfigMap);
  ASSERT_EQ(r.code(), 201) << r.body();
  json::object created = r.Json();
  EXPECT_FALSE(Find(created, "metadata.uid")->as_string().empty());
  EXPECT_NE(Find(created, "metadata.resourceVersion"), nullptr);
  EXPECT_NE(Find(created, "metadata.creationTimestamp"), nullptr);
  int code = 0;
  json::object got = Get(s, "/api/v1/namespaces/default/configmaps/cfg", &code);
  EXPECT_EQ(code, 200);
  EXPECT_EQ(got, created);
}

TEST(ApiServerTest, CreateMutationsChainAndApplyAtCreateOnly) {
  TestServer s(TestServer::Options{.add_to_registry = [](api::Registry& r) {
    auto label = [](const char* key) {
      return [key](json::object& obj) {
        EnsureObject(EnsureObject(obj, "metadata"), "labels")[key] = "yes";
      };
    };
    EXPECT_EQ(r.AddCreateMutation("", "configmaps", label("first")), 1);
    EXPECT_EQ(r.AddCreateMutation("", "configmaps", label("second")), 1);
  }});
  RecordingResponder created;
  s.Do(created, "POST", "/api/v1/namespaces/default/configmaps", kConfigMap);
  ASSERT_EQ(created.code(), 201) << created.body();
  EXPECT_EQ(*Find(created.Json(), "metadata.labels"),
            json::value(json::object{{"app", "web"}, {"first", "yes"}, {"second", "yes"}}));
  // An update keeps what it sends: the mutations do not run again.
  RecordingResponder updated;
  s.Do(updated, "PUT", "/api/v1/namespaces/default/configmaps/cfg", kConfigMap);
  ASSERT_EQ(updated.code(), 200) << updated.body();
  EXPECT_EQ(*Find(updated.Json(), "metadata.labels"), json::value(json::object{{"app", "web"}}));
  // Other kinds are left alone.
  RecordingResponder other;
  s.Do(other, "POST", "/apis/apps/v1/namespaces/default/deployments", kDeployment);
  ASSERT_EQ(other.code(), 201) << other.body();
  EXPECT_EQ(Find(other.Json(), "metadata.labels"), nullptr);
}

// A write answers with the JSON it stored where that is the object as
// served: the same bytes a GET then returns. Elsewhere (a no-op update, a
// dry run, a kind stored in another version) the object is serialized.
TEST(ApiServerTest, AWritesAnswerIsTheObjectAsAGetThenReturnsIt) {
  TestServer s;
  auto get_body = [&s](const std::string& path) {
    RecordingResponder r;
    s.Do(r, "GET", path);
    EXPECT_EQ(r.code(), 200) << r.body();
    return r.body();
  };
  const std::string cm = "/api/v1/namespaces/default/configmaps/cfg";
  RecordingResponder created;
  s.Do(created, "POST", "/api/v1/namespaces/default/configmaps", kConfigMap);
  ASSERT_EQ(created.code(), 201) << created.body();
  EXPECT_EQ(created.body(), get_body(cm));

  json::object obj = created.Json();
  EnsureObject(obj, "data")["b"] = "2";
  RecordingResponder updated;
  s.Do(updated, "PUT", cm, json::serialize(obj));
  ASSERT_EQ(updated.code(), 200) << updated.body();
  EXPECT_EQ(updated.body(), get_body(cm));
  EXPECT_EQ(*Find(updated.Json(), "data.b"), "2");

  RecordingResponder patched;
  s.Do(patched, "PATCH", cm, R"({"data":{"c":"3"}})", "application/merge-patch+json");
  ASSERT_EQ(patched.code(), 200) << patched.body();
  EXPECT_EQ(patched.body(), get_body(cm));
  EXPECT_GT(ResourceVersionOf(patched.Json()), ResourceVersionOf(updated.Json()));

  // Nothing changes: nothing is written, and the answer is the object.
  RecordingResponder same;
  s.Do(same, "PATCH", cm, R"({"data":{"c":"3"}})", "application/merge-patch+json");
  ASSERT_EQ(same.code(), 200) << same.body();
  EXPECT_EQ(same.Json(), patched.Json());

  RecordingResponder dry;
  s.Do(dry, "POST", "/api/v1/namespaces/default/configmaps?dryRun=All",
       R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dry"}})");
  ASSERT_EQ(dry.code(), 201) << dry.body();
  EXPECT_EQ(*Find(dry.Json(), "metadata.name"), "dry");
  EXPECT_EQ(Find(dry.Json(), "metadata.resourceVersion"), nullptr);

  // A Service's cluster IP is allocated as it is stored: the answer has it.
  RecordingResponder svc;
  s.Do(svc, "POST", "/api/v1/namespaces/default/services",
       R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},
           "spec":{"ports":[{"port":80}]}})");
  ASSERT_EQ(svc.code(), 201) << svc.body();
  EXPECT_FALSE(Find(svc.Json(), "spec.clusterIP")->as_string().empty());
  EXPECT_EQ(svc.body(), get_body("/api/v1/namespaces/default/services/web"));

  // autoscaling/v1 is stored as v2: the answer is converted back to v1.
  RecordingResponder hpa;
  s.Do(hpa, "POST", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers",
       R"({"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},
           "spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},
                   "maxReplicas":3,"targetCPUUtilizationPercentage":50}})");
  ASSERT_EQ(hpa.code(), 201) << hpa.body();
  EXPECT_EQ(*Find(hpa.Json(), "apiVersion"), "autoscaling/v1");
  EXPECT_EQ(*Find(hpa.Json(), "spec.targetCPUUtilizationPercentage"), 50);
  EXPECT_EQ(hpa.Json(),
            Get(s, "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/h"));
}

TEST(ApiServerTest, DuplicateCreateIsAlreadyExists) {
  TestServer s;
  RecordingResponder a, b;
  s.Do(a, "POST", "/api/v1/namespaces/default/configmaps", kConfigMap);
  s.Do(b, "POST", "/api/v1/namespaces/default/configmaps", kConfigMap);
  EXPECT_EQ(b.code(), 409);
  EXPECT_EQ(*Find(b.Json(), "reason"), "AlreadyExists");
  EXPECT_EQ(*Find(b.Json(), "message"), "configmaps \"cfg\" already exists");
}

TEST(ApiServerTest, MissingAndTerminatingNamespaces) {
  TestServer s;
  RecordingResponder missing;
  s.Do(missing, "POST", "/api/v1/namespaces/nope/configmaps", kConfigMap);
  EXPECT_EQ(missing.code(), 404) << missing.body();
  EXPECT_EQ(*Find(missing.Json(), "message"), "namespaces \"nope\" not found");

  // A Namespace held by a finalizer stays Terminating after its DELETE.
  RecordingResponder ns;
  s.Do(ns, "POST", "/api/v1/namespaces",
       R"({"apiVersion":"v1","kind":"Namespace",
           "metadata":{"name":"going","finalizers":["example.com/hold"]}})");
  ASSERT_EQ(ns.code(), 201) << ns.body();
  RecordingResponder before;
  s.Do(before, "POST", "/api/v1/namespaces/going/configmaps", kConfigMap);
  EXPECT_EQ(before.code(), 201) << before.body();
  RecordingResponder del;
  s.Do(del, "DELETE", "/api/v1/namespaces/going");
  ASSERT_EQ(del.code(), 200) << del.body();
  RecordingResponder terminating;
  s.Do(terminating, "POST", "/apis/apps/v1/namespaces/going/deployments", kDeployment);
  EXPECT_EQ(terminating.code(), 403) << terminating.body();
  EXPECT_EQ(*Find(terminating.Json(), "message"),
            "deployments.apps \"web\" is forbidden: unable to create new content in namespace "
            "going because it is being terminated");
}

TEST(ApiServerTest, MalformedJsonAndBadNamesAreRejected) {
  TestServer s;
  RecordingResponder bad;
  s.Do(bad, "POST", "/api/v1/namespaces/default/configmaps", R"({"metadata": )");
  EXPECT_EQ(bad.code(), 400);
  RecordingResponder name;
  s.Do(name, "POST", "/api/v1/namespaces/default/configmaps",
       R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}})");
  EXPECT_EQ(name.code(), 422) << name.body();
  EXPECT_EQ(*Find(name.Json(), "reason"), "Invalid");
}

TEST(ApiServerTest, GenerateNameAddsFiveCharactersToAtMost58) {
  TestServer s;
  for (std::string prefix : {std::string("web-"), std::string(70, 'a') + "-"}) {
    RecordingResponder c;
    s.Do(c, "POST", "/api/v1/namespaces/default/configmaps",
         R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":")" + prefix +
             R"("}})");
    ASSERT_EQ(c.code(), 201) << c.body();
    std::string name(Find(c.Json(), "metadata.name")->as_string());
    std::string kept = prefix.substr(0, 58);
    EXPECT_EQ(name.size(), kept.size() + 5) << name;
    EXPECT_EQ(name.substr(0, kept.size()), kept);
    EXPECT_EQ(name.find_first_not_of("bcdfghjklmnpqrstvwxz2456789", kept.size()), std::string::npos)
        << name;
  }
}

TEST(ApiServerTest, StaleUpdateConflictsAndGenerationTracksSpec) {
  TestServer s;
  RecordingResponder c;
  s.Do(c, "POST", "/apis/apps/v1/namespaces/default/deployments", kDeployment);
  ASSERT_EQ(c.code(), 201) << c.body();
  json::object obj = c.Json();
  EXPECT_EQ(*Find(obj, "metadata.generation"), 1);
  EnsureObject(obj, "spec")["replicas"] = 3;
  RecordingResponder u1;
  s.Do(u1, "PUT", "/apis/apps/v1/namespaces/default/deployments/web", json::serialize(obj));
  ASSERT_EQ(u1.code(), 200) << u1.body();
  EXPECT_EQ(*Find(u1.Json(), "metadata.generation"), 2);
  RecordingResponder u2;  // same stale resourceVersion again
  s.Do(u2, "PUT", "/apis/apps/v1/namespaces/default/deployments/web", json::serialize(obj));
  EXPECT_EQ(u2.code(), 409);
  EXPECT_EQ(*Find(u2.Json(), "reason"), "Conflict");
}

TEST(ApiServerTest, StatusSubresourceOnlyChangesStatus) {
  TestServer s;
  RecordingResponder c;
  s.Do(c, "POST", "/apis/apps/v1/namespaces/default/deployments", kDeployment);
  json::object obj = c.Json();
  obj["status"] = json::object{{"replicas", 2}};
  EnsureObject(obj, "spec")["replicas"] = 9;
  RecordingResponder u;
  s.Do(u, "PUT", "/apis/apps/v1/namespaces/default/deployments/web/status", json::serialize(obj));
  ASSERT_EQ(u.code(), 200) << u.body();
  EXPECT_EQ(*Find(u.Json(), "status.replicas"), 2);
  EXPECT_EQ(*Find(u.Json(), "spec.replicas"), 2);
  EXPECT_EQ(*Find(u.Json(), "metadata.generation"), 1);
}

// As Kubernetes' status strategies: its own kinds take the request's
// metadata on /status (less what the kind's strategy resets, and what no
// update changes); a custom kind takes status only.
TEST(ApiServerTest, StatusSubresourceTakesMetadataForKubernetesKinds) {
  TestServer s;
  auto put_status = [&](const std::string& collection, const std::string& body,
                        json::object status) {
    RecordingResponder c, u;
    s.Do(c, "POST", collection, body);
    EXPECT_EQ(c.code(), 201) << c.body();
    json::object obj = c.Json();
    json::object& meta = EnsureObject(obj, "metadata");
    meta["annotations"] = json::object{{"note", "with the status"}};
    meta["labels"] = json::object{{"app", "moved"}};
    meta["uid"] = "not-the-uid";
    obj["status"] = std::move(status);
    s.Do(u, "PUT", collection + "/" + StringAt(obj, "metadata.name") + "/status",
         json::serialize(obj));
    EXPECT_EQ(u.code(), 200) << u.body();
    EXPECT_EQ(StringAt(u.Json(), "metadata.uid"), StringAt(c.Json(), "metadata.uid"));
    return u.Json();
  };
  const std::string rs_body =
      R"({"metadata":{"name":"rs","labels":{"app":"web"}},"spec":{"replicas":1,)"
      R"("selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":)"
      R"({"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}})";
  json::object rs =
      put_status("/apis/apps/v1/namespaces/default/replicasets", rs_body, {{"replicas", 1}});
  EXPECT_EQ(StringAt(rs, "metadata.annotations.note"), "with the status");
  EXPECT_EQ(StringAt(rs, "metadata.labels.app"), "moved");
  EXPECT_EQ(IntAt(rs, "status.replicas"), 1);
  EXPECT_EQ(IntAt(rs, "metadata.generation"), 1);

  json::object d =
      put_status("/apis/apps/v1/namespaces/default/deployments", kDeployment, {{"replicas", 1}});
  EXPECT_EQ(StringAt(d, "metadata.annotations.note"), "with the status");
  EXPECT_EQ(Find(d, "metadata.labels"), nullptr) << "a Deployment's status keeps its labels";

  json::object cluster =
      put_status("/apis/federation/v1beta1/clusters",
                 R"({"apiVersion":"federation/v1beta1","kind":"Cluster","metadata":{"name":"c1"},)"
                 R"("spec":{"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0",)"
                 R"("serverAddress":"https://10.0.0.1:6443"}],"secretRef":{"name":"c1"}}})",
                 {{"region", "eu"}});
  EXPECT_EQ(Find(cluster, "metadata.annotations"), nullptr) << "a custom kind takes status only";
  EXPECT_EQ(Find(cluster, "metadata.labels"), nullptr);
  EXPECT_EQ(StringAt(cluster, "status.region"), "eu");
}

TEST(ApiServerTest, ScaleSubresource) {
  TestServer s;
  RecordingResponder c;
  s.Do(c, "POST", "/apis/apps/v1/namespaces/default/deployments", kDeployment);
  json::object scale = Get(s, "/apis/apps/v1/namespaces/default/deployments/web/scale");
  EXPECT_EQ(*Find(scale, "kind"), "Scale");
  EXPECT_EQ(*Find(scale, "spec.replicas"), 2);
  EXPECT_EQ(*Find(scale, "status.selector"), "app=web");
  RecordingResponder p;
  s.Do(p, "PATCH", "/apis/apps/v1/namespaces/default/deployments/web/scale",
       R"({"spec":{"replicas":5}})", "application/merge-patch+json");
  ASSERT_EQ(p.code(), 200) << p.body();
  EXPECT_EQ(*Find(Get(s, "/apis/apps/v1/namespaces/default/deployments/web"), "spec.replicas"), 5);
}

TEST(ApiServerTest, PatchTypes) {
  TestServer s;
  RecordingResponder c;
  s.Do(c, "POST", "/api/v1/namespaces/default/configmaps", kConfigMap);
  RecordingResponder merge, jsonp, smp, bad;
  s.Do(merge, "PATCH", "/api/v1/namespaces/default/configmaps/cfg", R"({"data":{"b":"2"}})",
       "application/merge-patch+json");
  ASSERT_EQ(merge.code(), 200) << merge.body();
  s.Do(jsonp, "PATCH", "/api/v1/namespaces/default/configmaps/cfg",
       R"([{"op":"replace","path":"/data/a","value":"x"}])", "application/json-patch+json");
  ASSERT_EQ(jsonp.code(), 200) << jsonp.body();
  s.Do(smp, "PATCH", "/api/v1/namespaces/default/configmaps/cfg", R"({"data":{"b":null}})",
       "application/strategic-merge-patch+json");
  ASSERT_EQ(smp.code(), 200) << smp.body();
  json::object data = Find(smp.Json(), "data")->as_object();
  EXPECT_EQ(data, (json::object{{"a", "x"}}));
  s.Do(bad, "PATCH", "/api/v1/namespaces/default/configmaps/cfg", "{}", "text/plain");
  EXPECT_EQ(bad.code(), 415);
}

// A selector that pins the name reads only the keys that begin with it (as
// kube-apiserver's MatchesSingle): the answers are those of a full scan.
TEST(ApiServerTest, AListPinnedToOneNameFindsItAndOnlyIt) {
  TestServer s;
  for (const char* ns : {"default", "other"}) {
    RecordingResponder r;
    s.Do(r, "POST", "/api/v1/namespaces", std::string(R"({"metadata":{"name":")") + ns + "\"}}");
    for (const char* name : {"web-1", "web-10", "web-1x", "web-2"}) {
      RecordingResponder c;
      s.Do(c, "POST", std::string("/api/v1/namespaces/") + ns + "/configmaps",
           std::string(R"({"metadata":{"name":")") + name + R"(","labels":{"ns":")" + ns +
               R"("}}})");
      ASSERT_EQ(c.code(), 201) << c.body();
    }
  }
  auto names = [&](const std::string& query) {
    std::vector<std::string> out;
    json::object list = Get(s, query);
    for (const json::value& item : Find(list, "items")->as_array()) {
      out.push_back(StringAt(item.as_object(), "metadata.namespace") + "/" +
                    StringAt(item.as_object(), "metadata.name"));
    }
    return out;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(names("/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dweb-1"),
            Names{"default/web-1"});
  EXPECT_EQ(names("/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3D%3Dweb-1"),
            Names{"default/web-1"});
  EXPECT_EQ(names("/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dweb"),
            Names{});
  // Every namespace, or one pinned by the selector.
  EXPECT_EQ(names("/api/v1/configmaps?fieldSelector=metadata.name%3Dweb-10"),
            (Names{"default/web-10", "other/web-10"}));
  EXPECT_EQ(names("/api/v1/configmaps?fieldSelector=metadata.name%3Dweb-10,"
                  "metadata.namespace%3Dother"),
            Names{"other/web-10"});
  // With the other terms and a label selector still applied.
  EXPECT_EQ(names("/api/v1/namespaces/other/configmaps?fieldSelector=metadata.name%3Dweb-2&"
                  "labelSelector=ns%3Ddefault"),
            Names{});
  EXPECT_EQ(names("/api/v1/namespaces/other/configmaps?fieldSelector=metadata.name%3Dweb-2,"
                  "metadata.namespace!%3Dother"),
            Names{});
  // A name in a namespace it is not in, and cluster-scoped kinds.
  EXPECT_EQ(names("/api/v1/namespaces/nowhere/configmaps?fieldSelector=metadata.name%3Dweb-1"),
            Names{});
  EXPECT_EQ(names("/api/v1/namespaces?fieldSelector=metadata.name%3Dother"), Names{"/other"});
  // A page at a time: the token carries on from the same keys.
  json::object page = Get(s, "/api/v1/configmaps?fieldSelector=metadata.name%3Dweb-1&limit=1");
  ASSERT_EQ(Find(page, "items")->as_array().size(), 1u);
  ASSERT_NE(Find(page, "metadata.continue"), nullptr);
  EXPECT_EQ(names("/api/v1/configmaps?fieldSelector=metadata.name%3Dweb-1&limit=1&continue=" +
                  std::string(Find(page, "metadata.continue")->as_string())),
            Names{"other/web-1"});
}

TEST(ApiServerTest, ListWithSelectorsAndPagination) {
  TestServer s;
  for (int i = 0; i < 5; ++i) {
    RecordingResponder r;
    std::string body = R"({"metadata":{"name":"cm)" + std::to_string(i) + R"(","labels":{"i":")" +
                       std::to_string(i % 2) + R"("}}})";
    s.Do(r, "POST", "/api/v1/namespaces/default/configmaps", body);
    ASSERT_EQ(r.code(), 201) << r.body();
  }
  EXPECT_EQ(Find(Get(s, "/api/v1/namespaces/default/configmaps?labelSelector=i%3D1"), "items")
                ->as_array()
                .size(),
            2u);
  EXPECT_EQ(Find(Get(s, "/api/v1/configmaps?fieldSelector=metadata.name%3Dcm3"), "items")
                ->as_array()
                .size(),
            1u);
  json::object page = Get(s, "/api/v1/namespaces/default/configmaps?limit=2");
  EXPECT_EQ(Find(page, "items")->as_array().size(), 2u);
  ASSERT_NE(Find(page, "metadata.remainingItemCount"), nullptr);
  EXPECT_EQ(Find(page, "metadata.remainingItemCount")->as_int64(), 3);
  std::string token(Find(page, "metadata.continue")->as_string());
  json::object rest = Get(s, "/api/v1/namespaces/default/configmaps?limit=10&continue=" + token);
  EXPECT_EQ(Find(rest, "items")->as_array().size(), 3u);
  EXPECT_EQ(Find(rest, "metadata.continue"), nullptr);
  EXPECT_EQ(Find(rest, "metadata.remainingItemCount"), nullptr);
  // As kube-apiserver: no count where a selector makes it a guess, and the
  // same count in Table form.
  json::object selected =
      Get(s, "/api/v1/namespaces/default/configmaps?limit=1&labelSelector=i%3D0");
  EXPECT_NE(Find(selected, "metadata.continue"), nullptr);
  EXPECT_EQ(Find(selected, "metadata.remainingItemCount"), nullptr);
  RecordingResponder table;
  s.Do(table, "GET", "/api/v1/namespaces/default/configmaps?limit=4", "", "application/json",
       "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_NE(Find(table.Json(), "metadata.remainingItemCount"), nullptr);
  EXPECT_EQ(Find(table.Json(), "metadata.remainingItemCount")->as_int64(), 1);
}

TEST(ApiServerTest, EventsExpireAfterTheEventTtlAndWatchersSeeThemGo) {
  TestServer s;
  auto event = [](const std::string& name) {
    return R"({"apiVersion":"v1","kind":"Event","metadata":{"name":")" + name +
           R"("},"involvedObject":{"kind":"ConfigMap","namespace":"default","name":"cfg"},
             "reason":"Tested","message":"m","type":"Normal"})";
  };
  RecordingResponder c1, c2, cm;
  s.Do(c1, "POST", "/api/v1/namespaces/default/events", event("early"));
  ASSERT_EQ(c1.code(), 201) << c1.body();
  s.Do(cm, "POST", "/api/v1/namespaces/default/configmaps", kConfigMap);
  s.clock().Advance(std::chrono::minutes(40));
  s.Do(c2, "POST", "/api/v1/namespaces/default/events", event("late"));
  ASSERT_EQ(c2.code(), 201) << c2.body();
  std::string rv(Find(c2.Json(), "metadata.resourceVersion")->as_string());

  RecordingResponder w;
  std::thread watcher([&] {
    s.Do(w, "GET", "/api/v1/namespaces/default/events?watch=true&resourceVersion=" + rv);
  });
  s.clock().Advance(std::chrono::minutes(21));  // 61 minutes after the first
  EXPECT_TRUE(w.WaitFor("\"type\":\"DELETED\""));
  w.Leave();
  watcher.join();
  EXPECT_NE(w.body().find("\"name\":\"early\""), std::string::npos) << w.body();
  json::object list = Get(s, "/api/v1/namespaces/default/events");
  ASSERT_EQ(Find(list, "items")->as_array().size(), 1u);
  EXPECT_EQ(Find(list, "items")->as_array()[0].at("metadata").at("name"), "late");
  int code = 0;
  Get(s, "/api/v1/namespaces/default/configmaps/cfg", &code);
  EXPECT_EQ(code, 200);  // other kinds do not expire
}

TEST(ApiServerTest, FinalizersHoldDeletion) {
  TestServer s;
  RecordingResponder c, d;
  s.Do(c, "POST", "/api/v1/namespaces/default/configmaps",
       R"({"metadata":{"name":"held","finalizers":["example.com/hold"]}})");
  s.Do(d, "DELETE", "/api/v1/namespaces/default/configmaps/held");
  ASSERT_EQ(d.code(), 200) << d.body();
  json::object held = Get(s, "/api/v1/namespaces/default/configmaps/held");
  EXPECT_NE(Find(held, "metadata.deletionTimestamp"), nullptr);
  RecordingResponder release;
  s.Do(release, "PATCH", "/api/v1/namespaces/default/configmaps/held",
       R"({"metadata":{"finalizers":null}})", "application/merge-patch+json");
  ASSERT_EQ(release.code(), 200) << release.body();
  int code = 0;
  Get(s, "/api/v1/namespaces/default/configmaps/held", &code);
  EXPECT_EQ(code, 404);
}

// A federated object's DELETE records its policy for the federation's
// controllers; one without a policy orphans the member copies.
TEST(ApiServerTest, DeletingAFederatedObjectRecordsThePropagationPolicy) {
  TestServer s;
  auto create_and_delete = [&](const std::string& name, const std::string& query) {
    RecordingResponder c, d;
    s.Do(c, "POST", "/api/v1/namespaces/default/configmaps",
         R"({"metadata":{"name":")" + name +
             R"(","finalizers":["federation.kubernetes.io/delete-from-underlying-clusters"]}})");
    EXPECT_EQ(c.code(), 201) << c.body();
    s.Do(d, "DELETE", "/api/v1/namespaces/default/configmaps/" + name + query);
    EXPECT_EQ(d.code(), 200) << d.body();
    return Get(s, "/api/v1/namespaces/default/configmaps/" + name);
  };
  json::object plain = create_and_delete("plain", "");
  const json::value* policy = Find(plain, "metadata.annotations")
                                  ->as_object()
                                  .if_contains("federation.kubernetes.io/deletion-propagation");
  ASSERT_NE(policy, nullptr);
  EXPECT_EQ(policy->as_string(), "Orphan");
  EXPECT_NE(json::serialize(*Find(plain, "metadata.finalizers")).find("\"orphan\""),
            std::string::npos);
  json::object background = create_and_delete("background", "?propagationPolicy=Background");
  EXPECT_EQ(Find(background, "metadata.annotations")
                ->as_object()
                .at("federation.kubernetes.io/deletion-propagation")
                .as_string(),
            "Background");
  // A later DELETE naming a policy changes it; one naming none keeps it.
  RecordingResponder again, once_more;
  s.Do(again, "DELETE", "/api/v1/namespaces/default/configmaps/plain?propagationPolicy=Foreground");
  s.Do(once_more, "DELETE", "/api/v1/namespaces/default/configmaps/plain");
  json::object changed = Get(s, "/api/v1/namespaces/default/configmaps/plain");
  EXPECT_EQ(Find(changed, "metadata.annotations")
                ->as_object()
                .at("federation.kubernetes.io/deletion-propagation")
                .as_string(),
            "Foreground");
  // Objects without the finalizer get no annotation.
  RecordingResponder c, d;
  s.Do(c, "POST", "/api/v1/namespaces/default/configmaps",
       R"({"metadata":{"name":"local","finalizers":["example.com/hold"]}})");
  s.Do(d, "DELETE", "/api/v1/namespaces/default/configmaps/local");
  EXPECT_EQ(Find(Get(s, "/api/v1/namespaces/default/configmaps/local"), "metadata.annotations"),
            nullptr);
}

TEST(ApiServerTest, WatchFromResourceVersionSeesLaterEventsInOrder) {
  TestServer s;
  RecordingResponder c;
  s.Do(c, "POST", "/api/v1/namespaces/default/configmaps", kConfigMap);
  std::string rv(Find(c.Json(), "metadata.resourceVersion")->as_string());
  RecordingResponder w;
  std::thread watcher([&] {
    s.Do(w, "GET", "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=" + rv);
  });
  RecordingResponder p, d;
  s.Do(p, "PATCH", "/api/v1/namespaces/default/configmaps/cfg", R"({"data":{"b":"2"}})",
       "application/merge-patch+json");
  s.Do(d, "DELETE", "/api/v1/namespaces/default/configmaps/cfg");
  EXPECT_TRUE(w.WaitFor("\"type\":\"DELETED\""));
  w.Leave();
  watcher.join();
  std::string body = w.body();
  EXPECT_LT(body.find("MODIFIED"), body.find("DELETED"));
  EXPECT_EQ(body.find("ADDED"), std::string::npos);
}

TEST(ApiServerTest, WatchFromCompactedVersionGetsExpired) {
  TestServer s;
  for (int i = 0; i < 3; ++i) {
    RecordingResponder r;
    s.Do(r, "POST", "/api/v1/namespaces/default/configmaps",
         R"({"metadata":{"name":"c)" + std::to_string(i) + R"("}})");
  }
  ASSERT_TRUE(s.store().Compact(s.store().CurrentRevision()).ok());
  RecordingResponder w;
  s.Do(w, "GET", "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1");
  EXPECT_NE(w.body().find("\"type\":\"ERROR\""), std::string::npos);
  EXPECT_NE(w.body().find("\"code\":410"), std::string::npos);
  EXPECT_NE(w.body().find("Expired"), std::string::npos);
}

// Bookmarks and the end of a watch follow the server's clock; a zero
// timeoutSeconds, as in Kubernetes, is the default (1800 s), not an instant end.
TEST(ApiServerTest, WatchTimeoutAndBookmarksRunOnTheServersClock) {
  TestServer s;
  RecordingResponder w;
  auto watch = std::async(std::launch::async, [&] {
    s.Do(w, "GET",
         "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=0"
         "&allowWatchBookmarks=true");
  });
  // The server may arm its timer after a first advance: the next one fires it.
  for (int i = 0; i < 10 && !w.WaitFor("BOOKMARK", 1, std::chrono::milliseconds(300)); ++i) {
    s.clock().Advance(std::chrono::seconds(61));
  }
  ASSERT_TRUE(w.WaitFor("BOOKMARK", 1, std::chrono::milliseconds(0)));
  EXPECT_NE(watch.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  s.clock().Advance(std::chrono::seconds(1800));
  ASSERT_EQ(watch.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(w.body().find("ERROR"), std::string::npos) << w.body();
}

TEST(ApiServerTest, TableOutputHasKindColumns) {
  TestServer s;
  RecordingResponder c, t;
  s.Do(c, "POST", "/apis/apps/v1/namespaces/default/deployments", kDeployment);
  s.Do(t, "GET", "/apis/apps/v1/namespaces/default/deployments", "", "application/json",
       "application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
  json::object table = t.Json();
  EXPECT_EQ(*Find(table, "kind"), "Table");
  const json::array& cols = Find(table, "columnDefinitions")->as_array();
  ASSERT_GE(cols.size(), 5u);
  EXPECT_EQ(cols[1].as_object().at("name"), "Ready");
  EXPECT_EQ(Find(table, "rows")->as_array().size(), 1u);
}

TEST(ApiServerTest, DiscoveryListsKindsAndSubresources) {
  TestServer s;
  json::object apps = Get(s, "/apis/apps/v1");
  bool scale = false;
  for (const auto& r : Find(apps, "resources")->as_array()) {
    if (r.as_object().at("name") == "deployments/scale") scale = true;
  }
  EXPECT_TRUE(scale);
  RecordingResponder agg;
  s.Do(agg, "GET", "/apis", "", "application/json",
       "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json");
  EXPECT_EQ(*Find(agg.Json(), "kind"), "APIGroupDiscoveryList");
}

// Servers of one process with the same kinds (simulated members) share
// their discovery documents; other kinds get documents of their own.
TEST(ApiServerTest, DiscoveryDocumentsOfTheSameKindsAreOneCopy) {
  api::Registry registry;
  api::RegisterFoundationKinds(registry);
  Discovery one(registry), two(registry);
  ASSERT_NE(one.Legacy("/apis/apps/v1"), nullptr);
  EXPECT_EQ(one.Legacy("/apis/apps/v1"), two.Legacy("/apis/apps/v1"));
  EXPECT_EQ(one.Aggregated("/apis"), two.Aggregated("/apis"));
  api::Registry fewer;
  for (const auto& r : registry.All()) {
    if (r->plural != "deployments") fewer.Add(*r);
  }
  Discovery three(fewer);
  ASSERT_NE(three.Legacy("/apis/apps/v1"), nullptr);
  EXPECT_NE(three.Legacy("/apis/apps/v1"), one.Legacy("/apis/apps/v1"));
  EXPECT_EQ(three.Legacy("/apis/apps/v1")->find("\"deployments\""), std::string::npos);
  EXPECT_EQ(one.Legacy("/api/v1"), three.Legacy("/api/v1"));
}

TEST(ApiServerTest, UnknownFieldsAreDroppedWithWarningUnlessStrict) {
  TestServer s;
  const char* body = R"({"metadata":{"name":"x"},"dataz":{"a":"b"},"data":{"k":"v"}})";
  RecordingResponder warn, strict;
  s.Do(warn, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Warn", body);
  ASSERT_EQ(warn.code(), 201) << warn.body();
  EXPECT_EQ(Find(warn.Json(), "dataz"), nullptr);
  EXPECT_EQ(warn.HeaderValue("Warning"), R"(299 - "unknown field \"dataz\"")");
  s.Do(strict, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict",
       R"({"metadata":{"name":"y"},"dataz":{}})");
  EXPECT_EQ(strict.code(), 400);
  EXPECT_NE(strict.body().find("unknown field \\\"dataz\\\""), std::string::npos) << strict.body();
}

TEST(ApiServerTest, ErrorDetailsNameTheObject) {
  TestServer s;
  RecordingResponder a, b, bad;
  s.Do(a, "POST", "/api/v1/namespaces/default/configmaps", kConfigMap);
  s.Do(b, "POST", "/api/v1/namespaces/default/configmaps", kConfigMap);
  EXPECT_EQ(*Find(b.Json(), "details.name"), "cfg");
  s.Do(bad, "POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"Bad_Name"}})");
  EXPECT_EQ(*Find(bad.Json(), "details.name"), "Bad_Name");
  EXPECT_EQ(*Find(bad.Json(), "details.kind"), "ConfigMap");
}

TEST(ApiServerTest, ServicesGetDistinctClusterIPs) {
  TestServer s;
  RecordingResponder a, b, headless;
  const char* svc = R"({"metadata":{"name":"%s"},"spec":{"ports":[{"port":80}]}})";
  char buf[256];
  std::snprintf(buf, sizeof(buf), svc, "a");
  s.Do(a, "POST", "/api/v1/namespaces/default/services", buf);
  std::snprintf(buf, sizeof(buf), svc, "b");
  s.Do(b, "POST", "/api/v1/namespaces/default/services", buf);
  ASSERT_EQ(a.code(), 201) << a.body();
  std::string ip_a(Find(a.Json(), "spec.clusterIP")->as_string());
  EXPECT_EQ(ip_a.rfind("10.", 0), 0u);
  EXPECT_NE(ip_a, std::string(Find(b.Json(), "spec.clusterIP")->as_string()));
  s.Do(headless, "POST", "/api/v1/namespaces/default/services",
       R"({"metadata":{"name":"h"},"spec":{"clusterIP":"None","ports":[{"port":80}]}})");
  EXPECT_EQ(*Find(headless.Json(), "spec.clusterIP"), "None");
  RecordingResponder replaced;  // kubectl replace of a manifest without clusterIP
  s.Do(replaced, "PUT", "/api/v1/namespaces/default/services/a",
       R"({"metadata":{"name":"a"},"spec":{"ports":[{"port":81}]}})");
  ASSERT_EQ(replaced.code(), 200) << replaced.body();
  EXPECT_EQ(std::string(Find(replaced.Json(), "spec.clusterIP")->as_string()), ip_a);
}

// Node ports as kube-apiserver allocates them: in 30000-32767, distinct,
// kept when an update leaves them out, dropped when the type no longer
// needs them.
TEST(ApiServerTest, NodePortAndLoadBalancerServicesGetDistinctNodePorts) {
  TestServer s;
  auto node_port = [](RecordingResponder& r, size_t i) -> int64_t {
    json::value body = r.Json();
    const json::value* ports = Find(body, "spec.ports");
    if (ports == nullptr || i >= ports->as_array().size()) return 0;
    const json::value* n = ports->as_array()[i].as_object().if_contains("nodePort");
    return n != nullptr ? n->as_int64() : 0;
  };
  RecordingResponder lb, np, plain, optout;
  s.Do(lb, "POST", "/api/v1/namespaces/default/services",
       R"({"metadata":{"name":"lb"},"spec":{"type":"LoadBalancer",
           "ports":[{"name":"a","port":80},{"name":"b","port":443}]}})");
  ASSERT_EQ(lb.code(), 201) << lb.body();
  s.Do(np, "POST", "/api/v1/namespaces/default/services",
       R"({"metadata":{"name":"np"},"spec":{"type":"NodePort","ports":[{"port":80}]}})");
  ASSERT_EQ(np.code(), 201) << np.body();
  std::set<int64_t> ports = {node_port(lb, 0), node_port(lb, 1), node_port(np, 0)};
  EXPECT_EQ(ports.size(), 3u);
  for (int64_t p : ports) {
    EXPECT_GE(p, 30000);
    EXPECT_LE(p, 32767);
  }
  s.Do(plain, "POST", "/api/v1/namespaces/default/services",
       R"({"metadata":{"name":"plain"},"spec":{"ports":[{"port":80}]}})");
  EXPECT_EQ(node_port(plain, 0), 0);
  s.Do(optout, "POST", "/api/v1/namespaces/default/services",
       R"({"metadata":{"name":"optout"},"spec":{"type":"LoadBalancer",
           "allocateLoadBalancerNodePorts":false,"ports":[{"port":80}]}})");
  ASSERT_EQ(optout.code(), 201) << optout.body();
  EXPECT_EQ(node_port(optout, 0), 0);

  RecordingResponder replaced;  // kubectl replace of a manifest without nodePorts
  s.Do(replaced, "PUT", "/api/v1/namespaces/default/services/np",
       R"({"metadata":{"name":"np"},"spec":{"type":"NodePort","ports":[{"port":80}]}})");
  ASSERT_EQ(replaced.code(), 200) << replaced.body();
  EXPECT_EQ(node_port(replaced, 0), node_port(np, 0));
  RecordingResponder to_cluster_ip;
  s.Do(to_cluster_ip, "PATCH", "/api/v1/namespaces/default/services/lb",
       R"({"spec":{"type":"ClusterIP"}})", "application/merge-patch+json");
  ASSERT_EQ(to_cluster_ip.code(), 200) << to_cluster_ip.body();
  EXPECT_EQ(node_port(to_cluster_ip, 0), 0);
  EXPECT_EQ(node_port(to_cluster_ip, 1), 0);
}

TEST(ApiServerTest, MetricsCountRequestsByCodeAndTimeStorage) {
  TestServer s;
  RecordingResponder a, b, m;
  s.Do(a, "POST", "/api/v1/namespaces/default/configmaps", kConfigMap);
  s.Do(b, "POST", "/api/v1/namespaces/default/configmaps", kConfigMap);
  s.Do(m, "GET", "/metrics");
  std::string text = m.body();
  EXPECT_NE(
      text.find(R"(apiserver_request_total{verb="create",resource="configmaps",code="201"} 1)"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(R"(apiserver_request_total{verb="create",resource="configmaps",code="409"} 1)"),
      std::string::npos);
  // Both creates are in one latency histogram, whatever their codes.
  EXPECT_NE(
      text.find(
          R"(apiserver_request_duration_seconds_count{verb="create",resource="configmaps"} 2)"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(flotilla_storage_operation_duration_seconds_count{operation="create"})"),
            std::string::npos);
  EXPECT_NE(text.find("apiserver_registered_watchers 0"), std::string::npos);
  EXPECT_NE(text.find(R"(apiserver_storage_objects{resource="configmaps"} 1)"), std::string::npos);
  EXPECT_NE(text.find(R"(apiserver_storage_objects{resource="namespaces"} 4)"), std::string::npos);
}

TEST(ApiServerTest, UnknownPathsAreNotFoundStatus) {
  TestServer s;
  int code = 0;
  json::object st = Get(s, "/apis/nope/v1/things", &code);
  EXPECT_EQ(code, 404);
  EXPECT_EQ(*Find(st, "kind"), "Status");
}

TEST(ApiServerTest, ExtraPathsAnswerBeforeTheBuiltInOnes) {
  api::Registry registry;
  api::RegisterFoundationKinds(registry);
  auto store = storage::NewMemoryStore();
  FakeClock clock;
  ApiServerOptions opts;
  opts.registry = &registry;
  opts.store = store.get();
  opts.clock = &clock;
  std::string seen_user;
  opts.extra_paths = [&](Request& req, const UserInfo& user, Responder& resp) {
    if (req.path != "/extra") return false;
    seen_user = user.name;
    resp.Respond(202, {}, "extra");
    return true;
  };
  ApiServer server(opts);
  for (const std::string path : {"/extra", "/version", "/api/v1/namespaces"}) {
    Request req;
    req.method = "POST";
    req.target = path;
    SplitTarget(path, &req.path, &req.query);
    RecordingResponder resp;
    server.Handle(req, resp);
    EXPECT_EQ(resp.code() == 202, path == "/extra") << path << " " << resp.code();
  }
  EXPECT_EQ(seen_user, "system:apiserver");
}

}  // namespace
}  // namespace flotilla::apiserver
