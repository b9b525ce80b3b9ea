#include "api/protobuf.h"

#include <gtest/gtest.h>

#include <random>

namespace flotilla::api {
namespace {

// A tiny protobuf encoder: fields in the order they are added.
class Pb {
 public:
  Pb& Varint(uint32_t field, uint64_t v) {
    Tag(field, 0);
    PutVarint(v);
    return *this;
  }
  Pb& Bytes(uint32_t field, std::string_view b) {
    Tag(field, 2);
    PutVarint(b.size());
    out_.append(b);
    return *this;
  }
  Pb& Sub(uint32_t field, const Pb& m) { return Bytes(field, m.str()); }
  // A map entry {key = 1, value = 2}.
  Pb& Entry(uint32_t field, std::string_view k, std::string_view v) {
    return Sub(field, Pb().Bytes(1, k).Bytes(2, v));
  }
  Pb& Raw(std::string_view b) {
    out_.append(b);
    return *this;
  }
  const std::string& str() const { return out_; }

 private:
  void Tag(uint32_t field, uint32_t wire) { PutVarint(uint64_t{field} << 3 | wire); }
  void PutVarint(uint64_t v) {
    do {
      out_.push_back(static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
      v >>= 7;
    } while (v != 0);
  }
  std::string out_;
};

Pb Quantity(std::string_view s) { return Pb().Bytes(1, s); }
Pb IntVal(int32_t v) { return Pb().Varint(1, 0).Varint(2, static_cast<uint64_t>(v)); }
Pb StrVal(std::string_view s) { return Pb().Varint(1, 1).Varint(2, 0).Bytes(3, s); }

std::string Envelope(std::string_view api_version, std::string_view kind, const Pb& obj) {
  return std::string("k8s\0", 4) + Pb().Sub(1, Pb().Bytes(1, api_version).Bytes(2, kind))
                                       .Sub(2, obj)
                                       .Bytes(3, "")
                                       .Bytes(4, "")
                                       .str();
}

// Decodes a whole body as the API server does.
StatusOr<json::object> Decode(const std::string& body) {
  FLOTILLA_ASSIGN_OR_RETURN(ProtobufEnvelope env, ParseProtobufEnvelope(body));
  if (!HasProtobufSchema(env.api_version, env.kind)) return Status::BadRequest("no schema");
  return DecodeProtobufObject(env.raw, env.api_version, env.kind);
}

json::object Json(std::string_view text) { return *ParseJsonObject(text); }

void ExpectDecodes(const std::string& body, std::string_view expected) {
  auto got = Decode(body);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, Json(expected)) << json::serialize(*got);
}

void ExpectError(const std::string& body, std::string_view fragment) {
  auto got = Decode(body);
  ASSERT_FALSE(got.ok()) << json::serialize(*got);
  EXPECT_EQ(got.status().reason(), Reason::kBadRequest);
  EXPECT_NE(got.status().message().find("unable to decode protobuf body: "), std::string::npos)
      << got.status().message();
  EXPECT_NE(got.status().message().find(fragment), std::string::npos) << got.status().message();
}

// ObjectMeta as Go writes it: every value field present, empty ones too.
Pb Meta(std::string_view name) {
  return Pb()
      .Bytes(1, name)
      .Bytes(2, "")
      .Bytes(3, "")
      .Bytes(4, "")
      .Bytes(5, "")
      .Bytes(6, "")
      .Varint(7, 0)
      .Sub(8, Pb());
}

// What `kubectl create quota` sends: a ResourceQuota with hard limits,
// scopes and a scope selector.
TEST(ProtobufTest, DecodesAResourceQuota) {
  Pb quota =
      Pb().Sub(1, Pb().Bytes(1, "team"))
          .Sub(2,
               Pb().Sub(1, Pb().Bytes(1, "pods").Sub(2, Quantity("2")))
                   .Sub(1, Pb().Bytes(1, "requests.cpu").Sub(2, Quantity("1")))
                   .Bytes(2, "NotBestEffort")
                   .Sub(3, Pb().Sub(
                               1, Pb().Bytes(1, "PriorityClass").Bytes(2, "In").Bytes(3, "high"))));
  ExpectDecodes(Envelope("v1", "ResourceQuota", quota), R"({
    "kind":"ResourceQuota","apiVersion":"v1","metadata":{"name":"team"},
    "spec":{"hard":{"pods":"2","requests.cpu":"1"},"scopes":["NotBestEffort"],
            "scopeSelector":{"matchExpressions":[
              {"scopeName":"PriorityClass","operator":"In","values":["high"]}]}}})");
}

// What `kubectl create job` and `kubectl create cronjob` send.
TEST(ProtobufTest, DecodesAJobAndACronJob) {
  Pb pod_template =
      Pb().Sub(2, Pb().Sub(2, Pb().Bytes(1, "pi").Bytes(2, "perl")).Bytes(3, "Never"));
  Pb job_spec =
      Pb().Varint(1, 2).Varint(2, 4).Sub(6, pod_template).Varint(7, 3).Bytes(9, "Indexed");
  ExpectDecodes(Envelope("batch/v1", "Job", Pb().Sub(1, Pb().Bytes(1, "pi")).Sub(2, job_spec)),
                R"({"kind":"Job","apiVersion":"batch/v1","metadata":{"name":"pi"},
    "spec":{"parallelism":2,"completions":4,
            "template":{"spec":{"containers":[{"name":"pi","image":"perl"}],
                                "restartPolicy":"Never"}},
            "backoffLimit":3,"completionMode":"Indexed"}})");
  Pb cron_spec = Pb().Bytes(1, "*/5 * * * *")
                     .Bytes(3, "Forbid")
                     .Sub(5, Pb().Sub(2, Pb().Sub(6, pod_template)))
                     .Bytes(8, "Etc/UTC");
  ExpectDecodes(
      Envelope("batch/v1", "CronJob", Pb().Sub(1, Pb().Bytes(1, "tick")).Sub(2, cron_spec)),
      R"({"kind":"CronJob","apiVersion":"batch/v1","metadata":{"name":"tick"},
    "spec":{"schedule":"*/5 * * * *","concurrencyPolicy":"Forbid",
            "jobTemplate":{"spec":{"template":{"spec":{
              "containers":[{"name":"pi","image":"perl"}],"restartPolicy":"Never"}}}},
            "timeZone":"Etc/UTC"}})");
}

// A DaemonSet with its update strategy (IntOrString fields) as kubectl
// sends it in protobuf.
TEST(ProtobufTest, DecodesADaemonSet) {
  Pb pod_template = Pb().Sub(2, Pb().Sub(2, Pb().Bytes(1, "fluentd").Bytes(2, "fluentd:1")));
  Pb strategy =
      Pb().Bytes(1, "RollingUpdate").Sub(2, Pb().Sub(1, Pb().Varint(1, 1).Bytes(3, "25%")));
  Pb spec = Pb().Sub(2, pod_template).Sub(3, strategy).Varint(4, 5).Varint(6, 3);
  ExpectDecodes(Envelope("apps/v1", "DaemonSet", Pb().Sub(1, Pb().Bytes(1, "logs")).Sub(2, spec)),
                R"({"kind":"DaemonSet","apiVersion":"apps/v1","metadata":{"name":"logs"},
    "spec":{"template":{"spec":{"containers":[{"name":"fluentd","image":"fluentd:1"}]}},
            "updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%"}},
            "minReadySeconds":5,"revisionHistoryLimit":3}})");
}

TEST(ProtobufTest, NamespaceDropsZeroValueFieldsAndKeepsEmptyMessages) {
  Pb ns = Pb().Sub(1, Meta("team-a").Entry(11, "env", "prod").Entry(11, "empty", ""))
              .Sub(2, Pb())
              .Sub(3, Pb().Bytes(1, ""));
  ExpectDecodes(Envelope("v1", "Namespace", ns),
                R"({"kind":"Namespace","apiVersion":"v1",
                    "metadata":{"name":"team-a","labels":{"env":"prod","empty":""}},
                    "spec":{},"status":{}})");
}

TEST(ProtobufTest, ConfigMapAndSecretBytesAreBase64) {
  Pb cm = Pb().Sub(1, Meta("cfg"))
              .Entry(2, "a", "1")
              .Entry(3, "bin", std::string("\x00\xff", 2))
              .Varint(4, 0);
  ExpectDecodes(Envelope("v1", "ConfigMap", cm),
                R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cfg"},
                    "data":{"a":"1"},"binaryData":{"bin":"AP8="},"immutable":false})");
  Pb secret = Pb().Sub(1, Meta("s")).Entry(2, "password", "hunter2").Bytes(3, "Opaque");
  ExpectDecodes(Envelope("v1", "Secret", secret),
                R"({"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"},
                    "data":{"password":"aHVudGVyMg=="},"type":"Opaque"})");
}

TEST(ProtobufTest, TimesBeforeTheEpochAndAtTheEdges) {
  const auto time_of = [](int64_t seconds) {
    Pb meta = Pb().Bytes(1, "x").Sub(9, Pb().Varint(1, static_cast<uint64_t>(seconds)));
    auto got = Decode(Envelope("v1", "Namespace", Pb().Sub(1, meta)));
    return got.ok() ? std::string(Find(*got, "metadata.deletionTimestamp")->as_string())
                    : got.status().message();
  };
  EXPECT_EQ(time_of(-1), "1969-12-31T23:59:59Z");
  EXPECT_EQ(time_of(951782400), "2000-02-29T00:00:00Z");
  EXPECT_EQ(time_of(-62135596800), "0001-01-01T00:00:00Z");
  EXPECT_EQ(time_of(253402300799), "9999-12-31T23:59:59Z");
  EXPECT_NE(time_of(253402300800).find("out of range"), std::string::npos);
}

TEST(ProtobufTest, TimeIsRfc3339AndZeroTimeIsLeftOut) {
  Pb meta = Pb().Bytes(1, "x").Sub(8, Pb().Varint(1, 1700000000).Varint(2, 5)).Sub(9, Pb());
  ExpectDecodes(Envelope("v1", "ServiceAccount", Pb().Sub(1, meta).Varint(4, 1)),
                R"({"kind":"ServiceAccount","apiVersion":"v1",
                    "metadata":{"name":"x","creationTimestamp":"2023-11-14T22:13:20Z"},
                    "automountServiceAccountToken":true})");
}

TEST(ProtobufTest, ManagedFieldsCarryTheirJson) {
  Pb entry = Pb().Bytes(1, "kubectl-create")
                 .Bytes(2, "Update")
                 .Bytes(3, "v1")
                 .Sub(4, Pb().Varint(1, 0))
                 .Bytes(6, "FieldsV1")
                 .Sub(7, Pb().Bytes(1, R"({"f:data":{".":{},"f:a":{}}})"));
  ExpectDecodes(Envelope("v1", "ConfigMap", Pb().Sub(1, Pb().Bytes(1, "c").Sub(17, entry))),
                R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c",
                    "managedFields":[{"manager":"kubectl-create","operation":"Update",
                      "apiVersion":"v1","time":"1970-01-01T00:00:00Z","fieldsType":"FieldsV1",
                      "fieldsV1":{"f:data":{".":{},"f:a":{}}}}]}})");
  Pb bad = Pb().Bytes(1, "m").Sub(7, Pb().Bytes(1, "{"));
  ExpectError(
      Envelope("v1", "ConfigMap", Pb().Sub(1, Pb().Sub(17, bad))),
      "metadata.managedFields[0].fieldsV1: ManagedFieldsEntry field 7: FieldsV1 is not JSON");
}

Pb WebContainer() {
  return Pb()
      .Bytes(1, "web")
      .Bytes(2, "nginx")
      .Bytes(3, "sh")
      .Bytes(3, "-c")
      .Bytes(5, "")
      .Sub(6, Pb().Bytes(1, "").Varint(2, 0).Varint(3, 80).Bytes(4, "TCP").Bytes(5, ""))
      .Sub(7, Pb().Bytes(1, "A").Bytes(2, "1"))
      .Sub(7, Pb().Bytes(1, "POD").Bytes(2, "").Sub(3, Pb().Sub(1, Pb().Bytes(2, "metadata.name"))))
      .Sub(8, Pb().Sub(1, Pb().Bytes(1, "memory").Sub(2, Quantity("64Mi")))
                  .Sub(2, Pb().Bytes(1, "cpu").Sub(2, Quantity("100m")))
                  .Sub(2, Pb().Bytes(1, "ephemeral-storage")))
      .Sub(11, Pb().Sub(1, Pb().Sub(2, Pb().Bytes(1, "/healthz").Sub(2, IntVal(8080))))
                   .Varint(2, 0)
                   .Varint(4, 5))
      .Sub(19, Pb().Sub(2, Pb().Sub(1, Pb().Bytes(1, "cfg")).Varint(2, 1)))
      .Bytes(14, "IfNotPresent")
      .Varint(16, 0);
}

TEST(ProtobufTest, DeploymentWithNestedPodSpec) {
  Pb volume = Pb().Bytes(1, "conf").Sub(2, Pb().Sub(19, Pb().Sub(1, Pb().Bytes(1, "cfg"))));
  Pb pod_spec = Pb().Sub(1, volume)
                    .Sub(2, WebContainer())
                    .Bytes(3, "Always")
                    .Varint(4, 30)
                    .Bytes(6, "ClusterFirst");
  Pb template_meta = Pb().Bytes(1, "").Entry(11, "app", "web").Sub(8, Pb());
  Pb strategy = Pb().Bytes(1, "RollingUpdate").Sub(2, Pb().Sub(1, IntVal(1)).Sub(2, StrVal("25%")));
  Pb spec = Pb().Varint(1, 0)
                .Sub(2, Pb().Entry(1, "app", "web"))
                .Sub(3, Pb().Sub(1, template_meta).Sub(2, pod_spec))
                .Sub(4, strategy)
                .Varint(5, 0);
  Pb deploy = Pb().Sub(1, Meta("web")).Sub(2, spec).Sub(3, Pb());
  ExpectDecodes(Envelope("apps/v1", "Deployment", deploy), R"({
    "kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web"},
    "spec":{"replicas":0,"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},
        "spec":{"volumes":[{"name":"conf","configMap":{"name":"cfg"}}],
          "containers":[{"name":"web","image":"nginx","command":["sh","-c"],
            "ports":[{"containerPort":80,"protocol":"TCP"}],
            "env":[{"name":"A","value":"1"},
                   {"name":"POD","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
            "resources":{"limits":{"memory":"64Mi"},"requests":{"cpu":"100m","ephemeral-storage":"0"}},
            "readinessProbe":{"httpGet":{"path":"/healthz","port":8080},"periodSeconds":5},
            "envFrom":[{"configMapRef":{"name":"cfg","optional":true}}],
            "imagePullPolicy":"IfNotPresent"}],
          "restartPolicy":"Always","terminationGracePeriodSeconds":30,
          "dnsPolicy":"ClusterFirst"}},
      "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1,"maxSurge":"25%"}}},
    "status":{}})");
}

TEST(ProtobufTest, ServicePortsAndIntOrStringBothWays) {
  Pb spec = Pb().Sub(1, Pb().Bytes(1, "80-8080")
                            .Bytes(2, "TCP")
                            .Varint(3, 80)
                            .Sub(4, IntVal(8080))
                            .Varint(5, 0))
                .Sub(1, Pb().Bytes(1, "web")
                            .Bytes(2, "TCP")
                            .Varint(3, 81)
                            .Sub(4, StrVal("http"))
                            .Varint(5, 30001))
                .Sub(1, Pb().Bytes(1, "same").Varint(3, 82).Sub(4, IntVal(0)))
                .Entry(2, "app", "web")
                .Bytes(3, "")
                .Bytes(4, "NodePort")
                .Varint(20, 0);
  Pb svc = Pb().Sub(1, Meta("web")).Sub(2, spec).Sub(3, Pb().Sub(1, Pb()));
  ExpectDecodes(Envelope("v1", "Service", svc), R"({
    "kind":"Service","apiVersion":"v1","metadata":{"name":"web"},
    "spec":{"ports":[{"name":"80-8080","protocol":"TCP","port":80,"targetPort":8080},
                     {"name":"web","protocol":"TCP","port":81,"targetPort":"http","nodePort":30001},
                     {"name":"same","port":82}],
            "selector":{"app":"web"},"type":"NodePort","allocateLoadBalancerNodePorts":false},
    "status":{"loadBalancer":{}}})");
}

TEST(ProtobufTest, HorizontalPodAutoscalerV1AndV2) {
  Pb ref = Pb().Bytes(1, "Deployment").Bytes(2, "web").Bytes(3, "apps/v1");
  Pb v1 = Pb().Sub(1, Meta("web"))
              .Sub(2, Pb().Sub(1, ref).Varint(2, 2).Varint(3, 5).Varint(4, 80))
              .Sub(3, Pb().Varint(3, 0).Varint(4, 0));
  ExpectDecodes(Envelope("autoscaling/v1", "HorizontalPodAutoscaler", v1), R"({
    "kind":"HorizontalPodAutoscaler","apiVersion":"autoscaling/v1","metadata":{"name":"web"},
    "spec":{"scaleTargetRef":{"kind":"Deployment","name":"web","apiVersion":"apps/v1"},
            "minReplicas":2,"maxReplicas":5,"targetCPUUtilizationPercentage":80},
    "status":{"currentReplicas":0,"desiredReplicas":0}})");
  Pb metric = Pb().Bytes(1, "Resource")
                  .Sub(4, Pb().Bytes(1, "cpu").Sub(2, Pb().Bytes(1, "Utilization").Varint(4, 50)));
  Pb v2 = Pb().Sub(1, Meta("web"))
              .Sub(2, Pb().Sub(1, ref).Varint(2, 1).Varint(3, 4).Sub(4, metric))
              .Sub(3, Pb().Varint(4, 0));
  ExpectDecodes(Envelope("autoscaling/v2", "HorizontalPodAutoscaler", v2), R"({
    "kind":"HorizontalPodAutoscaler","apiVersion":"autoscaling/v2","metadata":{"name":"web"},
    "spec":{"scaleTargetRef":{"kind":"Deployment","name":"web","apiVersion":"apps/v1"},
            "minReplicas":1,"maxReplicas":4,
            "metrics":[{"type":"Resource","resource":{"name":"cpu",
                        "target":{"type":"Utilization","averageUtilization":50}}}]},
    "status":{"desiredReplicas":0}})");
}

TEST(ProtobufTest, PodScalarsNegativeAndPacked) {
  // supplementalGroups once unpacked and twice packed; priority = -5 as a
  // sign-extended 10-byte varint.
  Pb sc = Pb().Varint(4, 1000).Bytes(4, Pb().Raw("\x07\x08").str()).Varint(5, 2000);
  Pb spec = Pb().Sub(2, Pb().Bytes(1, "c").Bytes(2, "busybox"))
                .Sub(14, sc)
                .Varint(25, static_cast<uint64_t>(int64_t{-5}))
                .Sub(22, Pb().Bytes(1, "k").Bytes(2, "Exists").Varint(5, 0));
  ExpectDecodes(Envelope("v1", "Pod", Pb().Sub(1, Meta("p")).Sub(2, spec)), R"({
    "kind":"Pod","apiVersion":"v1","metadata":{"name":"p"},
    "spec":{"containers":[{"name":"c","image":"busybox"}],
            "securityContext":{"supplementalGroups":[1000,7,8],"fsGroup":2000},
            "priority":-5,
            "tolerations":[{"key":"k","operator":"Exists","tolerationSeconds":0}]}})");
}

TEST(ProtobufTest, UnknownFieldNamesPathMessageAndNumber) {
  Pb container = Pb().Bytes(1, "web").Varint(99, 1);
  Pb deploy = Pb().Sub(1, Meta("web")).Sub(2, Pb().Sub(3, Pb().Sub(2, Pb().Sub(2, container))));
  ExpectError(Envelope("apps/v1", "Deployment", deploy),
              "spec.template.spec.containers[0]: Container field 99: unknown field");
}

TEST(ProtobufTest, MalformedBodiesAreBadRequests) {
  const std::string good = Envelope("v1", "ConfigMap", Pb().Sub(1, Meta("c")).Entry(2, "a", "b"));
  ExpectError("{\"kind\":\"ConfigMap\"}", "prefix");
  ExpectError(std::string("k8s\0", 4) + Pb().Varint(1, 3).str(), "Unknown: field 1");
  ExpectError(std::string("k8s\0", 4) + Pb().Bytes(3, "gzip").str(), "contentEncoding");
  // name as a varint: wrong wire type.
  ExpectError(Envelope("v1", "ConfigMap", Pb().Sub(1, Pb().Varint(1, 5))),
              "ObjectMeta field 1: wire type 0");
  ExpectError(Envelope("v1", "ConfigMap", Pb().Sub(1, Pb().Bytes(1, "\xff\xfe"))),
              "not valid UTF-8");
  ExpectError(Envelope("v1", "ConfigMap",
                       Pb().Sub(1, Pb().Raw("\x38\xff\xff\xff\xff\xff\xff"
                                            "\xff\xff\xff\xff\x01"))),
              "truncated varint");
  ExpectError(Envelope("v1", "Pod",
                       Pb().Sub(2, Pb().Raw("\x12\x05"
                                            "ab"))),
              "truncated");
  ExpectError(Envelope("v1", "Pod", Pb().Raw(std::string("\x00", 1))), "invalid field number 0");
  ExpectError(Envelope("v1", "Pod", Pb().Sub(1, Pb().Sub(8, Pb().Varint(1, 1ull << 60)))),
              "out of range");
  // Every truncation of a valid body fails (or, cut at a field boundary of
  // the envelope, decodes what is left); none crashes.
  for (size_t n = 0; n < good.size(); ++n) {
    auto got = Decode(good.substr(0, n));
    if (!got.ok()) {
      EXPECT_EQ(got.status().reason(), Reason::kBadRequest);
    }
  }
}

TEST(ProtobufTest, RandomAndMutatedBytesNeverCrash) {
  std::mt19937 rng(42);
  const std::string seed = Envelope(
      "apps/v1", "Deployment",
      Pb().Sub(1, Meta("web")).Sub(2, Pb().Sub(3, Pb().Sub(2, Pb().Sub(2, WebContainer())))));
  ASSERT_TRUE(Decode(seed).ok());
  int decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string body = seed;
    if (i % 4 == 0) {
      body = std::string("k8s\0", 4);
      body.resize(4 + rng() % 64);
      for (size_t k = 4; k < body.size(); ++k) body[k] = static_cast<char>(rng());
    } else {
      for (int flips = 1 + rng() % 4; flips > 0; --flips) {
        body[4 + rng() % (body.size() - 4)] = static_cast<char>(rng());
      }
      if (i % 3 == 0) body.resize(4 + rng() % (body.size() - 4));
    }
    auto got = Decode(body);
    if (got.ok()) {
      ++decoded;
    } else {
      EXPECT_EQ(got.status().reason(), Reason::kBadRequest);
    }
  }
  EXPECT_LT(decoded, 20000);
}

TEST(ProtobufTest, ContentTypeAndKinds) {
  EXPECT_TRUE(IsKubernetesProtobuf("application/vnd.kubernetes.protobuf"));
  EXPECT_TRUE(IsKubernetesProtobuf("application/vnd.kubernetes.protobuf; charset=binary"));
  EXPECT_FALSE(IsKubernetesProtobuf("application/vnd.kubernetes.protobufx"));
  EXPECT_FALSE(IsKubernetesProtobuf("application/json"));
  EXPECT_TRUE(HasProtobufSchema("autoscaling/v2", "HorizontalPodAutoscaler"));
  EXPECT_FALSE(HasProtobufSchema("federation/v1beta1", "Cluster"));
  EXPECT_FALSE(HasProtobufSchema("apps/v1", "Pod"));
}

}  // namespace
}  // namespace flotilla::api
