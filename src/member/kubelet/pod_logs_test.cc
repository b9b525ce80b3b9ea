// The simulated containers' logs: which instance a request names, the lines
// it wrote and when, the query's options, and a follow on a fake clock
// through the API server.
#include "member/kubelet/pod_logs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>

#include "apiserver/api_server_test_util.h"
#include "member/test_util.h"

namespace flotilla::member::kubelet {
namespace {

using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const TimePoint kStart = TimePoint(seconds(1700000000));

json::object Pod(const std::string& containers, const std::string& statuses) {
  return member::testing::Parse(R"({"metadata": {"name": "web-1"},
      "spec": {"nodeName": "n1", "containers": )" +
                                containers + R"(},
      "status": {"podIP": "10.244.0.7", "containerStatuses": )" +
                                statuses + "}}");
}

std::string Running(const std::string& name, TimePoint started) {
  return R"({"name": ")" + name + R"(", "state": {"running": {"startedAt": ")" +
         FormatRfc3339(started) + R"("}}})";
}

std::vector<std::string> Texts(const std::vector<LogLine>& lines) {
  std::vector<std::string> out;
  for (const LogLine& l : lines) out.push_back(l.text);
  return out;
}

TEST(PodLogsTest, AStartedContainerTellsItsStartAndEachProbe) {
  json::object pod = Pod(R"([{"name": "web", "image": "nginx:1.27",
      "command": ["nginx"], "args": ["-g", "daemon off;"],
      "ports": [{"name": "http", "containerPort": 8080}],
      "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"},
                         "initialDelaySeconds": 3, "periodSeconds": 5}}])",
                         "[" + Running("web", kStart) + "]");
  auto run = RunOf(pod, "", false);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  std::vector<LogLine> lines = LinesBetween(*run, kStart, kStart + seconds(14));
  EXPECT_THAT(Texts(lines),
              ElementsAre(R"([flotilla-sim] container "web" started: image nginx:1.27, node n1)",
                          "[flotilla-sim] exec: nginx -g daemon off;",
                          "GET http://10.244.0.7:8080/healthz: 200 OK (readiness probe)",
                          "GET http://10.244.0.7:8080/healthz: 200 OK (readiness probe)",
                          "GET http://10.244.0.7:8080/healthz: 200 OK (readiness probe)"));
  EXPECT_EQ(lines[2].at, kStart + seconds(3));
  EXPECT_EQ(lines[4].at, kStart + seconds(13));
  // A window: the probes in [8s, 13s) only; the next at 13s is not in it.
  lines = LinesBetween(*run, kStart + seconds(8), kStart + seconds(13));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].at, kStart + seconds(8));
}

TEST(PodLogsTest, WithoutAProbeAMinuteLineAndAnEnd) {
  json::object pod =
      Pod(R"([{"name": "job", "image": "busybox"}])",
          R"([{"name": "job", "state": {"terminated": {"startedAt": ")" + FormatRfc3339(kStart) +
              R"(", "finishedAt": ")" + FormatRfc3339(kStart + seconds(150)) +
              R"(", "exitCode": 1, "reason": "Error"}}}])");
  auto run = RunOf(pod, "job", false);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_THAT(Texts(LinesBetween(*run, kStart, kStart + seconds(3600))),
              ElementsAre(R"([flotilla-sim] container "job" started: image busybox, node n1)",
                          R"([flotilla-sim] container "job" running for 1m0s)",
                          R"([flotilla-sim] container "job" running for 2m0s)",
                          R"([flotilla-sim] container "job" exited with code 1 (Error))"));
}

TEST(PodLogsTest, KubesAnswersForContainersThatCannotBeRead) {
  std::string two = R"([{"name": "a", "image": "x"}, {"name": "b", "image": "y"}])";
  json::object pod = Pod(two, "[" + Running("a", kStart) + R"(, {"name": "b", "state":
      {"waiting": {"reason": "CrashLoopBackOff"}}, "lastState": {"terminated": {"startedAt": ")" +
                                  FormatRfc3339(kStart) + R"(", "finishedAt": ")" +
                                  FormatRfc3339(kStart + seconds(2)) +
                                  R"(", "exitCode": 2, "reason": "Error"}}}])");
  EXPECT_EQ(RunOf(pod, "", false).status().message(),
            "a container name must be specified for pod web-1, choose one of: [a b]");
  EXPECT_EQ(RunOf(pod, "c", false).status().message(), "container c is not valid for pod web-1");
  EXPECT_EQ(RunOf(pod, "b", false).status().message(),
            R"(container "b" in pod "web-1" is waiting to start: CrashLoopBackOff)");
  EXPECT_EQ(RunOf(pod, "a", true).status().message(),
            R"(previous terminated container "a" in pod "web-1" not found)");
  auto previous = RunOf(pod, "b", true);
  ASSERT_TRUE(previous.ok()) << previous.status().ToString();
  EXPECT_EQ(Texts(LinesBetween(*previous, kStart, kStart + seconds(60))).back(),
            R"([flotilla-sim] container "b" exited with code 2 (Error))");
  json::object creating = Pod(R"([{"name": "a", "image": "x"}])", "[]");
  EXPECT_TRUE(RunOf(creating, "", false).status().Is(Reason::kBadRequest));
  EXPECT_THAT(RunOf(creating, "", false).status().message(),
              HasSubstr("is waiting to start: ContainerCreating"));
}

TEST(PodLogsTest, AYearOfProbesKeepsTheLastLines) {
  json::object pod = Pod(R"([{"name": "web", "image": "x",
      "livenessProbe": {"tcpSocket": {"port": 5432}, "periodSeconds": 1}}])",
                         "[" + Running("web", kStart) + "]");
  auto run = RunOf(pod, "", false);
  ASSERT_TRUE(run.ok());
  TimePoint end = kStart + seconds(365 * 24 * 3600);
  std::vector<LogLine> lines = LinesBetween(*run, kStart, end);
  ASSERT_EQ(lines.size(), kMaxLines);
  EXPECT_EQ(lines.back().at, end - seconds(1));
  EXPECT_EQ(lines.back().text, "TCP 10.244.0.7:5432: connected (liveness probe)");
}

// Through the API server: tailLines, timestamps, limitBytes and bad
// options; then a follow that gets each probe as the clock reaches it and
// ends when the pod goes.
TEST(PodLogsTest, ServedWithKubectlsOptionsAndFollowed) {
  std::unique_ptr<PodLogs> logs;
  apiserver::testing::TestServer s(apiserver::testing::TestServer::Options{
      .member_kinds = true,
      .pod_logs = [&](apiserver::Request& req, const json::object& pod,
                      std::function<StatusOr<json::object>()> reread, const apiserver::UserInfo&,
                      apiserver::Responder& resp) { logs->Serve(req, pod, reread, resp); }});
  logs = std::make_unique<PodLogs>(s.clock());
  TimePoint started = s.clock().Now();
  const std::string pods = "/api/v1/namespaces/default/pods";
  apiserver::testing::RecordingResponder created, status;
  s.Do(created, "POST", pods, R"({"metadata": {"name": "web-1"}, "spec": {"containers": [
      {"name": "web", "image": "nginx", "readinessProbe": {"exec": {"command": ["true"]},
       "periodSeconds": 10}}]}})");
  ASSERT_EQ(created.code(), 201) << created.body();
  s.Do(status, "PATCH", pods + "/web-1/status",
       R"({"status": {"podIP": "10.244.0.9", "containerStatuses": [)" + Running("web", started) +
           "]}}",
       "application/merge-patch+json");
  ASSERT_EQ(status.code(), 200) << status.body();
  s.clock().Advance(seconds(25));

  apiserver::testing::RecordingResponder tail;
  s.Do(tail, "GET", pods + "/web-1/log?tailLines=2&timestamps=true");
  ASSERT_EQ(tail.code(), 200) << tail.body();
  EXPECT_EQ(tail.HeaderValue("Content-Type"), "text/plain");
  std::string t10 = FormatRfc3339(started + seconds(10));
  EXPECT_EQ(tail.body(), t10.substr(0, t10.size() - 1) +
                             ".000000000Z exec [true]: exit 0 (readiness probe)\n" +
                             FormatRfc3339(started + seconds(20)).substr(0, t10.size() - 1) +
                             ".000000000Z exec [true]: exit 0 (readiness probe)\n");
  apiserver::testing::RecordingResponder limited, bad, both;
  s.Do(limited, "GET", pods + "/web-1/log?limitBytes=10");
  EXPECT_EQ(limited.body(), "[flotilla-");
  s.Do(bad, "GET", pods + "/web-1/log?tailLines=-1");
  EXPECT_EQ(bad.code(), 422);
  EXPECT_THAT(bad.body(), HasSubstr("must be greater than or equal to 0"));
  s.Do(both, "GET", pods + "/web-1/log?sinceSeconds=5&sinceTime=" + FormatRfc3339(started));
  EXPECT_EQ(both.code(), 422);

  apiserver::testing::RecordingResponder follow;
  auto done = std::async(std::launch::async, [&] {
    s.Do(follow, "GET", pods + "/web-1/log?follow=true&sinceSeconds=1");
  });
  // Nothing in the last second; the probe at 30 s comes when the clock does.
  for (int i = 0; i < 20 && !follow.WaitFor("exit 0", 1, std::chrono::milliseconds(100)); ++i) {
    s.clock().Advance(seconds(1));
  }
  EXPECT_TRUE(follow.WaitFor("exit 0", 1, std::chrono::milliseconds(0))) << follow.body();
  apiserver::testing::RecordingResponder deleted;
  s.Do(deleted, "DELETE", pods + "/web-1?gracePeriodSeconds=0");
  ASSERT_LT(deleted.code(), 300) << deleted.body();
  for (int i = 0;
       i < 100 && done.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready; ++i) {
    s.clock().Advance(seconds(1));
  }
  ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(follow.code(), 200);
}

}  // namespace
}  // namespace flotilla::member::kubelet
