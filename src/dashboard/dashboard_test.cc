// The dashboard's server against a real federation API server on port 0,
// driven over plain HTTP by a socket client whose requests the test writes:
// the page's files, reads and watches forwarded with the configured
// credentials, and what it refuses.
#include "dashboard/dashboard.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/client_test_util.h"
#include "dashboard/assets.h"

namespace flotilla::dashboard {
namespace {

using client::testing::TestCluster;

constexpr int kWaitMillis = 30000;  // a failing test ends instead of hanging
const client::ResourceRef kConfigMaps{"", "v1", "configmaps", true};

// One HTTP/1.1 connection to the dashboard.
class HttpClient {
 public:
  explicit HttpClient(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~HttpClient() { ::close(fd_); }

  bool Send(const std::string& method, const std::string& target,
            const std::string& host = "127.0.0.1") {
    std::string req =
        method + " " + target + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 0\r\n\r\n";
    return connected_ &&
           ::send(fd_, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size());
  }
  // Reads until `text` has arrived (or the peer closed, or time ran out);
  // returns everything read so far.
  std::string ReadUntil(const std::string& text) {
    char buf[16384];
    while (got_.find(text) == std::string::npos) {
      pollfd pfd{fd_, POLLIN, 0};
      if (::poll(&pfd, 1, kWaitMillis) <= 0) break;
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      got_.append(buf, static_cast<size_t>(n));
    }
    return got_;
  }
  // One whole response with a Content-Length body.
  std::string Get(const std::string& target, const std::string& host = "127.0.0.1") {
    got_.clear();
    if (!Send("GET", target, host)) return "";
    std::string head = ReadUntil("\r\n\r\n");
    auto at = head.find("Content-Length: ");
    if (at == std::string::npos) return head;
    size_t length = std::stoul(head.substr(at + 16));
    size_t body_at = head.find("\r\n\r\n") + 4;
    while (got_.size() < body_at + length && ReadMore()) {
    }
    return got_;
  }

 private:
  bool ReadMore() {
    size_t before = got_.size();
    ReadUntil(std::string(1, '\0'));  // never present: reads one chunk or until closed
    return got_.size() > before;
  }

  int fd_;
  bool connected_ = false;
  std::string got_;
};

std::string Body(const std::string& response) {
  auto at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(fed_.AdminConfig()); }
  void Start(const client::RestConfig& config) {
    auto dashboard = Dashboard::Start(
        {.port = 0,
         .federation = config,
         .workloads = {{.kind = "Deployment",
                        .path = "/apis/apps/v1/deployments",
                        .breakdown_annotation = "federation.kubernetes.io/deployment-status"}}});
    ASSERT_TRUE(dashboard.ok()) << dashboard.status().ToString();
    dashboard_ = std::move(*dashboard);
  }

  TestCluster fed_;
  std::unique_ptr<Dashboard> dashboard_;
};

TEST_F(DashboardTest, ServesThePageBuiltIntoTheBinary) {
  ASSERT_GE(kAssetCount, 4u);
  HttpClient http(dashboard_->port());
  std::string page = http.Get("/");
  EXPECT_EQ(page.find("HTTP/1.1 200"), 0u) << page;
  EXPECT_NE(page.find("Content-Type: text/html; charset=utf-8"), std::string::npos);
  EXPECT_NE(page.find("Content-Security-Policy: default-src 'self'"), std::string::npos);
  EXPECT_NE(Body(page).find("<script type=\"module\" src=\"/app.js\">"), std::string::npos);
  std::string script = http.Get("/app.js");  // the same connection, kept alive
  EXPECT_NE(script.find("Content-Type: text/javascript"), std::string::npos) << script;
  EXPECT_NE(Body(script).find("class Resource"), std::string::npos);
  EXPECT_EQ(http.Get("/nope").find("HTTP/1.1 404"), 0u);
  // The workload kinds it was given, for the page to list.
  std::string workloads = http.Get("/workloads.json");
  EXPECT_EQ(workloads.find("HTTP/1.1 200"), 0u) << workloads;
  EXPECT_EQ(json::parse(Body(workloads)),
            json::parse(R"([{"kind":"Deployment","path":"/apis/apps/v1/deployments",
                "breakdownAnnotation":"federation.kubernetes.io/deployment-status"}])"));
}

TEST_F(DashboardTest, ForwardsReadsWithTheConfiguredCredentials) {
  auto fed = fed_.InProcess();
  json::object cm{{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", {{"name", "settings"}, {"namespace", "default"}}},
                  {"data", {{"colour", "blue"}}}};
  ASSERT_TRUE(fed->Create(kConfigMaps, "default", cm).ok());
  HttpClient http(dashboard_->port());
  std::string list = http.Get("/api/v1/namespaces/default/configmaps?limit=10");
  ASSERT_EQ(list.find("HTTP/1.1 200"), 0u) << list;
  auto doc = ParseJsonObject(Body(list));
  ASSERT_TRUE(doc.ok()) << Body(list);
  EXPECT_EQ(StringAt(*doc, "kind"), "ConfigMapList");
  EXPECT_NE(Body(list).find("\"settings\""), std::string::npos);
  EXPECT_NE(Body(http.Get("/version")).find("gitVersion"), std::string::npos);
  // The federation's own errors come through as they are.
  std::string missing = http.Get("/api/v1/namespaces/default/configmaps/nope");
  EXPECT_EQ(missing.find("HTTP/1.1 404"), 0u) << missing;
  EXPECT_NE(Body(missing).find("\"reason\":\"NotFound\""), std::string::npos) << missing;

  dashboard_->Stop();
  client::RestConfig wrong = fed_.AdminConfig();
  wrong.token = "not-a-token";
  Start(wrong);
  HttpClient other(dashboard_->port());
  std::string refused = other.Get("/api/v1/namespaces/default/configmaps");
  EXPECT_EQ(refused.find("HTTP/1.1 401"), 0u) << refused;
}

TEST_F(DashboardTest, StreamsAWatchAsEventsHappen) {
  auto fed = fed_.InProcess();
  HttpClient http(dashboard_->port());
  ASSERT_TRUE(http.Send("GET", "/api/v1/namespaces/default/configmaps?watch=1"));
  std::string head = http.ReadUntil("\r\n\r\n");
  ASSERT_EQ(head.find("HTTP/1.1 200"), 0u) << head;
  EXPECT_NE(head.find("Transfer-Encoding: chunked"), std::string::npos) << head;
  json::object cm{{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", {{"name", "later"}, {"namespace", "default"}}}};
  ASSERT_TRUE(fed->Create(kConfigMaps, "default", cm).ok());
  std::string stream = http.ReadUntil("\"later\"");
  EXPECT_NE(stream.find("{\"type\":\"ADDED\""), std::string::npos) << stream;
  EXPECT_NE(stream.find("\"later\""), std::string::npos) << stream;
  // An open watch does not keep the dashboard from stopping.
  dashboard_->Stop();
}

TEST_F(DashboardTest, MergesWatchesIntoOneStream) {
  auto fed = fed_.InProcess();
  auto list = fed->List(kConfigMaps, "default", {});
  ASSERT_TRUE(list.ok());
  HttpClient http(dashboard_->port());
  std::string rv = list->resource_version;
  ASSERT_TRUE(http.Send("GET", "/watch?w=" + rv + ",/api/v1/namespaces/default/configmaps&w=" + rv +
                                   ",/api/v1/namespaces&w=0,/apis/nope/v1/things"));
  // The unknown kind's watch is refused: said on its own line, and then
  // the stream ends, every watch with it, so that the page starts over.
  std::string stream = http.ReadUntil("0\r\n\r\n");
  ASSERT_EQ(stream.find("HTTP/1.1 200"), 0u) << stream;
  EXPECT_NE(stream.find(R"({"path":"/apis/nope/v1/things","error":{)"), std::string::npos)
      << stream;

  HttpClient again(dashboard_->port());
  ASSERT_TRUE(again.Send("GET", "/watch?w=" + rv + ",/api/v1/namespaces/default/configmaps&w=" +
                                    rv + ",/api/v1/namespaces"));
  ASSERT_EQ(again.ReadUntil("\r\n\r\n").find("HTTP/1.1 200"), 0u);
  json::object cm{{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", {{"name", "merged"}, {"namespace", "default"}}}};
  ASSERT_TRUE(fed->Create(kConfigMaps, "default", cm).ok());
  json::object ns{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "extra"}}}};
  ASSERT_TRUE(fed->Create({"", "v1", "namespaces", false}, "", ns).ok());
  std::string both = again.ReadUntil("\"extra\"");
  both = again.ReadUntil("\"merged\"");
  EXPECT_NE(both.find(R"({"path":"/api/v1/namespaces/default/configmaps","event":{"type":"ADDED")"),
            std::string::npos)
      << both;
  EXPECT_NE(both.find(R"({"path":"/api/v1/namespaces","event":{"type":"ADDED")"), std::string::npos)
      << both;

  HttpClient bad(dashboard_->port());
  EXPECT_EQ(bad.Get("/watch?w=1,/etc/passwd").find("HTTP/1.1 400"), 0u);
  EXPECT_EQ(bad.Get("/watch").find("HTTP/1.1 400"), 0u);
  dashboard_->Stop();
}

TEST_F(DashboardTest, RefusesWritesAndForeignHosts) {
  HttpClient http(dashboard_->port());
  ASSERT_TRUE(http.Send("DELETE", "/api/v1/namespaces/default"));
  std::string deleted = http.ReadUntil("only reads");
  EXPECT_EQ(deleted.find("HTTP/1.1 405"), 0u) << deleted;
  EXPECT_NE(deleted.find("Allow: GET"), std::string::npos) << deleted;
  EXPECT_TRUE(fed_.InProcess()->Get({"", "v1", "namespaces", false}, "", "default").ok());

  HttpClient rebound(dashboard_->port());
  std::string foreign = rebound.Get("/api/v1/namespaces", "evil.example:8080");
  EXPECT_EQ(foreign.find("HTTP/1.1 403"), 0u) << foreign;
  for (const char* host : {"localhost:8080", "[::1]:1234", "127.0.0.1"}) {
    HttpClient ok(dashboard_->port());
    EXPECT_EQ(ok.Get("/", host).find("HTTP/1.1 200"), 0u) << host;
  }
}

}  // namespace
}  // namespace flotilla::dashboard
