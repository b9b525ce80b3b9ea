// An agent's tunnel end to end in one process, over real HTTPS: a
// federation API server that takes tunnels, a member API server, and the
// agent between them. The agent registers the Cluster (no Secret); the
// federation's REST client of the member goes through the tunnel: writes,
// lists, a watch, impersonation; a second tunnel for the cluster is
// refused; requests that are not tunnels get clear errors; when the
// agent stops, requests fail as "no agent is connected", and a Cluster
// deleted ends the agent with the federation's 404. With two servers of
// one federation the agent keeps a tunnel to each; a second agent through
// another server waits for the first's claim to lapse; an agent
// restarted takes the place of its old tunnel at once. An exec through
// the cluster proxy goes through the tunnel as a request, and the agent
// connects back to the server that asked for the session's bytes.
#include "federation/cluster/tunnel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <filesystem>
#include <thread>

#include "api/views.h"
#include "apiserver/bootstrap_token.h"
#include "apiserver/certs.h"
#include "apiserver/responses.h"
#include "apiserver/sa_token.h"
#include "client/client_test_util.h"
#include "client/rest_client.h"
#include "client/upgrade.h"
#include "federation/cluster/agent.h"
#include "federation/cluster/join.h"
#include "federation/cluster/member_access.h"
#include "federation/cluster/proxy.h"
#include "federation/cluster/registration.h"
#include "federation/cluster/server_lease.h"
#include "federation/common/names.h"
#include "runtime/test_util.h"

namespace flotilla::federation::cluster {
namespace {

using client::testing::TempDir;
using client::testing::TestCluster;
using client::testing::WatchRecorder;
using runtime::testing::Eventually;

const std::string kTunnelPath = "/apis/federation/v1beta1/clusters/edge/tunnel";

namespace net = boost::asio;

// The member's pods' exec, as a test stands it in: ?command=refuse is 400
// (a refusal before the upgrade); else a 101 whose Sec-WebSocket-Protocol
// names the user the member saw, and every byte sent is sent back.
void EchoExec(apiserver::Request& req, const std::string&, const json::object&,
              std::function<StatusOr<json::object>()>, const apiserver::UserInfo& user,
              apiserver::Responder& resp) {
  if (req.Query("command") == "refuse") {
    return apiserver::RespondStatus(resp, Status::BadRequest("refused by the member"));
  }
  resp.SwitchProtocols(
      {{"Upgrade", "test-echo"}, {"Connection", "Upgrade"}, {"Sec-WebSocket-Protocol", user.name}},
      [](http2::Upgraded up) {
        auto owner = std::make_shared<http2::Upgraded>(std::move(up));
        net::co_spawn(
            owner->stream->get_executor(),
            [owner]() -> net::awaitable<void> {
              constexpr auto kAwait = net::as_tuple(net::use_awaitable);
              std::string data = std::move(owner->received);
              std::array<char, 4096> buf;
              for (;;) {
                if (!data.empty()) {
                  auto [wec, n] =
                      co_await net::async_write(*owner->stream, net::buffer(data), kAwait);
                  if (wec) break;
                }
                auto [rec, n] = co_await owner->stream->async_read_some(net::buffer(buf), kAwait);
                if (rec) break;
                data.assign(buf.data(), n);
              }
              boost::system::error_code ignored;
              owner->stream->next_layer().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
              owner->done();
            },
            net::detached);
      });
}

// Execs into pod "p" of cluster "edge" through `federation`'s cluster proxy
// as user ann (of system:masters): `command` as the member gets it; for a
// 101, "ping" is sent and read back.
struct Execed {
  int code = 0;
  std::string body;    // not 101
  std::string user;    // 101: the user the member saw
  std::string echoed;  // 101: what came back for "ping"
};
Execed ExecThroughProxy(TestCluster& federation, const std::string& command) {
  Execed out;
  auto answer = client::OpenUpgrade(
      federation.AdminConfig(), "GET",
      "/apis/federation/v1beta1/clusters/edge/proxy/api/v1/namespaces/default/pods/p/exec"
      "?command=" +
          command,
      {{"connection", "Upgrade"},
       {"upgrade", "test-echo"},
       {"impersonate-user", "ann"},
       {"impersonate-group", "system:masters"}},
      std::chrono::seconds(30));
  EXPECT_TRUE(answer.ok()) << answer.status().ToString();
  if (!answer.ok()) return out;
  out.code = answer->code;
  out.body = answer->body;
  if (!answer->switched) return out;
  for (const auto& [name, value] : answer->headers) {
    if (name == "sec-websocket-protocol") out.user = value;
  }
  http2::TlsStream& stream = answer->switched->stream;
  out.echoed = std::move(answer->switched->received);
  boost::system::error_code ec;
  net::write(stream, net::buffer(std::string("ping")), ec);
  EXPECT_FALSE(ec) << ec.message();
  if (out.echoed.size() < 4) {
    std::string more(4 - out.echoed.size(), '\0');
    net::read(stream, net::buffer(more), ec);
    EXPECT_FALSE(ec) << ec.message();
    out.echoed += more;
  }
  stream.next_layer().close(ec);
  return out;
}

json::object PodP() {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "p"}}},
          {"spec", {{"containers", json::array{{{"name", "app"}, {"image", "busybox"}}}}}}};
}

// A second server of the federation `first`: on a copy of its PKI, as
// docs/storage.md sets up several servers, with tunnels of its own, whose
// Clusters and claims are read and written through `claims` (the first's
// store, as servers on one etcd share theirs).
struct SecondServer {
  SecondServer(TestCluster& first, client::Client& claims, TunnelOptions opts)
      : tunnels(opts),
        proxy({.tunnels = &tunnels}),
        dir(CopyPki(first)),
        server({}, nullptr, [this](apiserver::ServerOptions& server_opts) {
          server_opts.data_dir = dir.path();
          server_opts.tunnel = [this](apiserver::Request& req, const std::string& name,
                                      const apiserver::UserInfo& user, apiserver::Responder& resp) {
            tunnels.Serve(req, name, user, resp);
          };
          server_opts.proxy = [this](apiserver::Request& req, const apiserver::ProxyTarget& target,
                                     const apiserver::UserInfo& user, apiserver::Responder& resp) {
            proxy.Serve(req, target, user, resp);
          };
        }) {
    tunnels.Start(claims);
    proxy.Start(claims);
  }
  ~SecondServer() {
    server.Stop();
    tunnels.Stop();
  }
  static TempDir CopyPki(TestCluster& first) {
    TempDir d;
    std::filesystem::copy(first.dir() + "/pki", d.path() + "/pki",
                          std::filesystem::copy_options::recursive);
    return d;
  }

  Tunnels tunnels;
  ClusterProxy proxy;
  TempDir dir;
  TestCluster server;
};

class TunnelTest : public ::testing::Test {
 protected:
  TunnelTest()
      : fed_({}, nullptr, [this](apiserver::ServerOptions& opts) {
          opts.tunnel = [this](apiserver::Request& req, const std::string& name,
                               const apiserver::UserInfo& user, apiserver::Responder& resp) {
            tunnels_.Serve(req, name, user, resp);
          };
          opts.proxy = [this](apiserver::Request& req, const apiserver::ProxyTarget& target,
                              const apiserver::UserInfo& user, apiserver::Responder& resp) {
            proxy_.Serve(req, target, user, resp);
          };
          opts.register_agent = [this](apiserver::Request& req, const std::string& name,
                                       const apiserver::UserInfo& user,
                                       apiserver::Responder& resp) {
            {
              MutexLock lock(register_mu_);
              ++registrations_;
              if (refuse_registrations_) {
                return apiserver::RespondStatus(resp, Status::Unavailable("refused by the test"));
              }
            }
            registrar_.Serve(req, name, user, resp);
          };
        }) {
    fed_client_ = fed_.InProcess();
    // As the server runs them: each part with its own identity and rights.
    controller_client_ =
        client::NewInProcessClient(fed_.server().api(), fed_.server().pki().controller_token);
    registrar_client_ =
        client::NewInProcessClient(fed_.server().api(), fed_.server().pki().registrar_token);
    tunnels_.Start(*controller_client_);
    proxy_.Start(*controller_client_);
    registrar_.Start(*registrar_client_);
  }
  ~TunnelTest() override {
    StopAgent();
    fed_.Stop();
    member_.Stop();
    // Its rechecks read through controller_client_, which is destroyed
    // before it (members go in reverse order).
    tunnels_.Stop();
  }

  AgentOptions Options() {
    AgentOptions opts;
    opts.name = "edge";
    opts.federation = fed_.AdminConfig();
    opts.member = member_.AdminConfig();
    opts.labels = {{"site", "edge"}};
    opts.min_backoff = std::chrono::milliseconds(20);
    opts.max_backoff = std::chrono::milliseconds(200);
    opts.discovery_period = std::chrono::milliseconds(50);
    return opts;
  }

  // An agent as instance `instance` that dials `server` only.
  AgentOptions Through(TestCluster& server, const std::string& instance) {
    AgentOptions opts = Options();
    opts.instance = instance;
    opts.federation = server.AdminConfig();
    opts.discovery_period = Duration::zero();
    return opts;
  }

  // A bootstrap token for agents (its Secret made), and how an agent
  // registers with it: the federation's address and its CA's pin.
  BootstrapOptions NewBootstrapToken() {
    apiserver::BootstrapTokenSpec spec{.token = apiserver::NewBootstrapToken(),
                                       .extra_groups = {"system:bootstrappers:flotilla:agent"}};
    EXPECT_TRUE(
        fed_client_->Create(kSecrets, "kube-system", apiserver::BootstrapTokenSecret(spec)).ok());
    auto ca = apiserver::certs::CertFromPem(fed_.AdminConfig().ca_pem);
    EXPECT_TRUE(ca.ok());
    return {.server = fed_.AdminConfig().server,
            .token = spec.token.String(),
            .ca_cert_hash = ca.ok() ? apiserver::certs::PublicKeyPin(ca->get()) : ""};
  }

  void StartAgent() {
    auto agent = Agent::Create(Options());
    ASSERT_TRUE(agent.ok()) << agent.status().ToString();
    agent_ = std::move(*agent);
    ASSERT_TRUE(agent_->Register().ok());
    run_ = std::thread([this] { ended_ = agent_->Run(); });
    ASSERT_TRUE(Eventually([&] { return tunnels_.For("edge")->Connected(); }));
  }
  void StopAgent() {
    if (agent_) agent_->Stop();
    if (run_.joinable()) run_.join();
  }

  // The federation's client of the member, as the controllers make it.
  std::unique_ptr<client::Client> MemberClient() {
    auto cluster = fed_client_->Get(kClusters, "", "edge");
    EXPECT_TRUE(cluster.ok());
    client::RestOptions opts;
    opts.max_retries = 0;
    auto c = client::NewRestClient(AgentRestConfig(*cluster, tunnels_.For("edge")), opts);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return std::move(*c);
  }

  void RefuseRegistrations(bool refuse) {
    MutexLock lock(register_mu_);
    refuse_registrations_ = refuse;
  }
  int Registrations() {
    MutexLock lock(register_mu_);
    return registrations_;
  }
  // How many LISTs of Leases the federation has answered: each is one of
  // the agent's discovery rounds (nothing else lists them here).
  int LeaseLists() {
    auto transport = client::NewRestTransport(fed_.AdminConfig());
    EXPECT_TRUE(transport.ok());
    auto metrics = (*transport)->Do({.method = "GET", .path = "/metrics"});
    EXPECT_TRUE(metrics.ok());
    const std::string counter =
        R"(apiserver_request_total{verb="list",resource="leases",code="200"} )";
    size_t at = metrics.ok() ? metrics->body.find(counter) : std::string::npos;
    return at == std::string::npos ? 0 : std::stoi(metrics->body.substr(at + counter.size()));
  }
  // Waits until the agent has been through `n` more discovery rounds.
  void AwaitDiscoveryRounds(int n) {
    int from = LeaseLists();
    ASSERT_TRUE(Eventually([&] { return LeaseLists() >= from + n; }));
  }

  // The tokens an agent renewed to, in order.
  struct Renewed {
    Mutex mu;
    std::vector<std::string> tokens GUARDED_BY(mu);
    std::vector<std::string> Get() {
      MutexLock lock(mu);
      return tokens;
    }
  };
  // Runs an agent as `identity` on `clock` (with `opts`' retries), its
  // renewed tokens told to `renewed`; each renewal sets the clock, far
  // ahead, back to the new token's issue, so that it is not due at once.
  void RunRenewingAgent(const client::RestConfig& identity, FakeClock& clock, Renewed& renewed,
                        AgentOptions opts) {
    opts.federation = identity;
    opts.clock = &clock;
    opts.on_token_renewed = [&clock, &renewed](const std::string& token) {
      if (auto issued = apiserver::JwtLifetime(token)) clock.Set(issued->first);
      MutexLock lock(renewed.mu);
      renewed.tokens.push_back(token);
    };
    auto agent = Agent::Create(opts);
    ASSERT_TRUE(agent.ok());
    agent_ = std::move(*agent);
    run_ = std::thread([this] { ended_ = agent_->Run(); });
    ASSERT_TRUE(Eventually([&] { return tunnels_.For("edge")->Connected(); }));
  }

  Mutex register_mu_;
  bool refuse_registrations_ GUARDED_BY(register_mu_) = false;
  int registrations_ GUARDED_BY(register_mu_) = 0;
  TestCluster member_{
      {}, nullptr, [](apiserver::ServerOptions& opts) { opts.pod_connect = EchoExec; }};
  Tunnels tunnels_{TunnelOptions{.keepalive = std::chrono::milliseconds(100),
                                 .recheck = std::chrono::milliseconds(100),
                                 .claim_duration = std::chrono::seconds(1),
                                 .server_id = "flotilla-apiserver-one"}};
  ClusterProxy proxy_{{.tunnels = &tunnels_}};
  AgentRegistrar registrar_;
  TestCluster fed_;
  std::unique_ptr<client::Client> fed_client_, controller_client_, registrar_client_;
  std::unique_ptr<Agent> agent_;
  std::thread run_;
  Status ended_;
};

json::object ConfigMap(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}}},
          {"data", {{"k", "v"}}}};
}

TEST_F(TunnelTest, TheAgentRegistersAndTheMemberIsReachedThroughItsTunnel) {
  StartAgent();
  auto cluster = fed_client_->Get(kClusters, "", "edge");
  ASSERT_TRUE(cluster.ok());
  api::ClusterView view(*cluster);
  EXPECT_TRUE(view.via_agent());
  EXPECT_EQ(view.secret_name(), "");
  EXPECT_EQ(view.server_address(), member_.AdminConfig().server);
  EXPECT_EQ(view.label("site"), "edge");

  auto member = MemberClient();
  auto created = member->Create(client::testing::kConfigMaps, "default", ConfigMap("through"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  // It is in the member itself.
  auto direct = member_.InProcess();
  auto got = direct->Get(client::testing::kConfigMaps, "default", "through");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(StringAt(*got, "data.k"), "v");
  // The member's own errors come back as they are.
  auto missing = member->Get(client::testing::kConfigMaps, "default", "nothing");
  EXPECT_TRUE(missing.status().Is(Reason::kNotFound)) << missing.status().ToString();
  EXPECT_TRUE(member->Create(client::testing::kConfigMaps, "default", ConfigMap("through"))
                  .status()
                  .Is(Reason::kAlreadyExists));

  // A watch is a stream of the tunnel: events as the member writes them.
  auto list = member->List(client::testing::kConfigMaps, "default", {});
  ASSERT_TRUE(list.ok());
  WatchRecorder rec;
  client::WatchOptions wopts;
  wopts.resource_version = list->resource_version;
  auto watch = member->StartWatch(client::testing::kConfigMaps, "default", wopts, rec.OnEvent(),
                                  rec.OnDone());
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        direct->Create(client::testing::kConfigMaps, "default", ConfigMap("w" + std::to_string(i)))
            .ok());
  }
  ASSERT_TRUE(rec.WaitEvents(5));
  auto events = rec.events();
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(events[i].type, client::WatchEvent::Type::kAdded);
    EXPECT_EQ(client::testing::NameOf(events[i].object), "w" + std::to_string(i));
  }
  (*watch)->Stop();
}

TEST_F(TunnelTest, ImpersonationGoesThroughToTheMember) {
  StartAgent();
  auto cluster = fed_client_->Get(kClusters, "", "edge");
  ASSERT_TRUE(cluster.ok());
  auto transport = client::NewRestTransport(AgentRestConfig(*cluster, tunnels_.For("edge")));
  ASSERT_TRUE(transport.ok());
  // Two groups, as the cluster proxy sends them: the member answers as
  // that user with those groups.
  client::ApiRequest req{.method = "POST",
                         .path = "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                         .body = R"({"apiVersion":"authentication.k8s.io/v1",
                                     "kind":"SelfSubjectReview"})",
                         .content_type = "application/json"};
  req.headers = {{"Impersonate-User", "ann"},
                 {"Impersonate-Group", "team-a"},
                 {"Impersonate-Group", "team-b"}};
  auto answer = (*transport)->Do(req);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  ASSERT_EQ(answer->code, 201) << answer->body;
  auto review = json::parse(answer->body).as_object();
  EXPECT_EQ(StringAt(review, "status.userInfo.username"), "ann");
  const json::value* groups = Find(review, "status.userInfo.groups");
  ASSERT_NE(groups, nullptr);
  std::set<std::string> names;
  for (const auto& g : groups->as_array()) names.insert(std::string(g.as_string()));
  EXPECT_TRUE(names.count("team-a") == 1 && names.count("team-b") == 1) << answer->body;
}

// kubectl exec through the cluster proxy to a member behind an agent: the
// request goes through the tunnel, the agent connects back for the
// session, and the bytes go both ways; the member sees the caller.
TEST_F(TunnelTest, AnExecGoesThroughTheAgentWhichConnectsBackForItsBytes) {
  StartAgent();
  ASSERT_TRUE(member_.InProcess()->Create(client::kPods, "default", PodP()).ok());
  Execed ran = ExecThroughProxy(fed_, "echo");
  EXPECT_EQ(ran.code, 101) << ran.body;
  EXPECT_EQ(ran.user, "ann");
  EXPECT_EQ(ran.echoed, "ping");
  // Several at once, each its own connection back.
  std::vector<std::thread> many;
  std::atomic<int> echoed{0};
  for (int i = 0; i < 4; ++i) {
    many.emplace_back([&] { echoed += ExecThroughProxy(fed_, "echo").echoed == "ping"; });
  }
  for (auto& t : many) t.join();
  EXPECT_EQ(echoed.load(), 4);
  // A refusal before the upgrade comes back as the member said it.
  Execed refused = ExecThroughProxy(fed_, "refuse");
  EXPECT_EQ(refused.code, 400);
  EXPECT_THAT(refused.body, ::testing::HasSubstr("refused by the member"));

  // A connection back that no request waits for is refused.
  auto stray = client::DialUpgrade(fed_.AdminConfig(), "POST", kTunnelPath + "?splice=0123abcd",
                                   kSpliceProtocol, std::chrono::seconds(10));
  EXPECT_TRUE(stray.status().Is(Reason::kNotFound)) << stray.status().ToString();
  EXPECT_THAT(stray.status().message(), ::testing::HasSubstr("waits on this server"));

  // Without the agent: unreachable, the cluster named.
  StopAgent();
  ASSERT_TRUE(Eventually([&] { return !tunnels_.For("edge")->Connected(); }));
  Execed gone = ExecThroughProxy(fed_, "echo");
  EXPECT_EQ(gone.code, 503) << gone.body;
  EXPECT_THAT(gone.body, ::testing::HasSubstr("no agent is connected for cluster"));
}

TEST_F(TunnelTest, ASecondTunnelForTheClusterIsRefused) {
  StartAgent();
  auto second = client::DialUpgrade(fed_.AdminConfig(), "POST", kTunnelPath, kTunnelProtocol,
                                    std::chrono::seconds(10));
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(second.status().Is(Reason::kConflict)) << second.status().ToString();
  EXPECT_NE(second.status().message().find("is held by another agent"), std::string::npos)
      << second.status().ToString();
  // The first one serves on.
  EXPECT_TRUE(MemberClient()->List(client::testing::kConfigMaps, "default", {}).ok());
}

TEST_F(TunnelTest, WithTwoServersTheAgentKeepsATunnelToEach) {
  SecondServer two(fed_, *controller_client_, {.server_id = "flotilla-apiserver-two"});
  TestCluster& second = two.server;
  Tunnels& second_tunnels = two.tunnels;
  std::unique_ptr<client::Client> second_client = second.InProcess();

  StartAgent();
  auto cluster = fed_client_->Get(kClusters, "", "edge");
  ASSERT_TRUE(cluster.ok());
  json::object copy{{"apiVersion", "federation/v1beta1"},
                    {"kind", "Cluster"},
                    {"metadata", {{"name", "edge"}}},
                    {"spec", *Find(*cluster, "spec")}};
  ASSERT_TRUE(second_client->Create(kClusters, "", copy).ok());
  // Each server's Lease, as `flotilla server` writes it; the first's is
  // not dialled twice.
  ServerLease one_lease({.id = "flotilla-apiserver-one",
                         .url = fed_.AdminConfig().server,
                         .renew = std::chrono::milliseconds(50)});
  ServerLease two_lease({.id = "flotilla-apiserver-two",
                         .url = second.AdminConfig().server,
                         .renew = std::chrono::milliseconds(50)});
  one_lease.Start(*fed_client_);
  two_lease.Start(*fed_client_);
  ASSERT_TRUE(Eventually([&] {
    return second_tunnels.For("edge")->Connected() && agent_->ConnectedServers().size() == 2;
  }));
  EXPECT_THAT(agent_->ConnectedServers(),
              ::testing::UnorderedElementsAre("flotilla-apiserver-one", "flotilla-apiserver-two"));
  auto lease = fed_client_->Get(client::kLeases, "kube-system", "flotilla-apiserver-two");
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(ServerUrls({*lease}).at("flotilla-apiserver-two"), second.AdminConfig().server);
  // The member, through the second server's tunnel.
  auto through_second = client::NewRestClient(AgentRestConfig(copy, second_tunnels.For("edge")));
  ASSERT_TRUE(through_second.ok());
  EXPECT_TRUE((*through_second)->List(client::testing::kConfigMaps, "default", {}).ok());
  // An exec through the second server: the agent connects back to it.
  ASSERT_TRUE(member_.InProcess()->Create(client::kPods, "default", PodP()).ok());
  Execed ran = ExecThroughProxy(second, "echo");
  EXPECT_EQ(ran.code, 101) << ran.body;
  EXPECT_EQ(ran.echoed, "ping");

  // The second server goes: its Lease with it, its tunnel closed. The
  // agent keeps the first.
  two_lease.Stop();
  EXPECT_TRUE(fed_client_->Get(client::kLeases, "kube-system", "flotilla-apiserver-two")
                  .status()
                  .Is(Reason::kNotFound));
  second.Stop();
  second_tunnels.Close("edge");
  ASSERT_TRUE(Eventually([&] {
    return agent_->ConnectedServers() == std::vector<std::string>{"flotilla-apiserver-one"};
  }));
  EXPECT_TRUE(MemberClient()->List(client::testing::kConfigMaps, "default", {}).ok());
  StopAgent();
  second_tunnels.Stop();
}

// The claim's Lease of cluster "edge", as the federation's store has it.
json::object Claim(client::Client& federation) {
  auto lease = federation.Get(client::kLeases, "kube-system", AgentClaimName("edge"));
  EXPECT_TRUE(lease.ok()) << lease.status().ToString();
  return lease.ok() ? *lease : json::object{};
}

// Two agents for one cluster, each dialling another server of the
// federation: the second is refused while the first's claim is renewed,
// however long, and let in once the first has gone and its claim lapsed.
TEST_F(TunnelTest, ASecondAgentThroughAnotherServerWaitsUntilTheFirstsClaimLapses) {
  SecondServer two(fed_, *controller_client_,
                   {.keepalive = std::chrono::milliseconds(100),
                    .claim_duration = std::chrono::seconds(1),
                    .server_id = "flotilla-apiserver-two"});
  StartAgent();
  const std::string first = StringAt(Claim(*fed_client_), "spec.holderIdentity");
  EXPECT_FALSE(first.empty());

  auto other = Agent::Create(Through(two.server, "second-agent"));
  ASSERT_TRUE(other.ok());
  Status other_ended;
  std::thread other_run([&] { other_ended = (*other)->Run(); });
  // Renewed past its duration twice over: still the first's, and the
  // second agent, which keeps dialling, not let in.
  TimePoint from;
  ASSERT_TRUE(ParseRfc3339(StringAt(Claim(*fed_client_), "spec.renewTime"), &from));
  ASSERT_TRUE(Eventually([&] {
    TimePoint renewed;
    return ParseRfc3339(StringAt(Claim(*fed_client_), "spec.renewTime"), &renewed) &&
           renewed - from > std::chrono::seconds(2);
  }));
  json::object claim = Claim(*fed_client_);
  EXPECT_EQ(StringAt(claim, "spec.holderIdentity"), first);
  // It goes with its Cluster.
  const json::value* owners = Find(claim, "metadata.ownerReferences");
  ASSERT_TRUE(owners != nullptr && owners->is_array() && owners->as_array().size() == 1);
  EXPECT_EQ(StringAt(owners->as_array()[0].as_object(), "kind"), "Cluster");
  EXPECT_FALSE((*other)->Connected());
  EXPECT_FALSE(two.tunnels.For("edge")->Connected());
  EXPECT_TRUE(tunnels_.For("edge")->Connected());

  // The first goes; once its claim lapses the second is let in, and the
  // member is reached through it.
  StopAgent();
  ASSERT_TRUE(Eventually([&] { return (*other)->Connected(); }));
  claim = Claim(*fed_client_);
  EXPECT_EQ(StringAt(claim, "spec.holderIdentity"), "second-agent");
  EXPECT_EQ(Find(claim, "spec.leaseTransitions")->as_int64(), 1);
  auto cluster = fed_client_->Get(kClusters, "", "edge");
  ASSERT_TRUE(cluster.ok());
  auto through_two = client::NewRestClient(AgentRestConfig(*cluster, two.tunnels.For("edge")));
  ASSERT_TRUE(through_two.ok());
  EXPECT_TRUE((*through_two)->List(client::testing::kConfigMaps, "default", {}).ok());
  // Now the first is the one refused, on its own server too.
  auto first_again =
      client::DialUpgrade(fed_.AdminConfig(), "POST", kTunnelPath + "?instance=" + first,
                          kTunnelProtocol, std::chrono::seconds(10));
  EXPECT_TRUE(first_again.status().Is(Reason::kConflict)) << first_again.status().ToString();
  (*other)->Stop();
  other_run.join();
  EXPECT_TRUE(other_ended.ok()) << other_ended.ToString();
}

// An agent restarted where its old connection still looks up to the
// server (its host gone, no FIN seen, PINGs not yet missed) is let in at
// once, in the old one's place; another instance is not.
TEST_F(TunnelTest, AnAgentRestartedTakesThePlaceOfItsOldTunnelAtOnce) {
  // PINGs far apart: the old connection stays up for the test's length.
  SecondServer two(fed_, *controller_client_,
                   {.keepalive = std::chrono::hours(1), .server_id = "flotilla-apiserver-two"});
  {
    auto registering = Agent::Create(Options());
    ASSERT_TRUE(registering.ok());
    ASSERT_TRUE((*registering)->Register().ok());
  }
  const std::string path = kTunnelPath + "?instance=kept-instance";
  auto old = client::DialUpgrade(two.server.AdminConfig(), "POST", path, kTunnelProtocol,
                                 std::chrono::seconds(10));
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  // The server takes the tunnel in once its 101 is sent: the dialler may
  // see the 101 first.
  ASSERT_TRUE(Eventually([&] { return two.tunnels.For("edge")->Connected(); }));
  std::shared_ptr<client::H2Connection> old_tunnel = two.tunnels.For("edge")->Current();
  auto stranger = client::DialUpgrade(two.server.AdminConfig(), "POST",
                                      kTunnelPath + "?instance=another-instance", kTunnelProtocol,
                                      std::chrono::seconds(10));
  EXPECT_TRUE(stranger.status().Is(Reason::kConflict)) << stranger.status().ToString();
  auto malformed =
      client::DialUpgrade(two.server.AdminConfig(), "POST", kTunnelPath + "?instance=a%2Fb",
                          kTunnelProtocol, std::chrono::seconds(10));
  EXPECT_TRUE(malformed.status().Is(Reason::kBadRequest)) << malformed.status().ToString();
  EXPECT_TRUE(Agent::Create(Through(two.server, "a/b")).status().Is(Reason::kBadRequest));

  // The same instance, restarted: in at once, and it is the live one (the
  // old connection serves nothing).
  auto agent = Agent::Create(Through(two.server, "kept-instance"));
  ASSERT_TRUE(agent.ok());
  agent_ = std::move(*agent);
  run_ = std::thread([this] { ended_ = agent_->Run(); });
  // The agent sees the 101 before the server has put its tunnel in the old
  // one's place.
  ASSERT_TRUE(Eventually([&] {
    return agent_->Connected() && two.tunnels.For("edge")->Current() != old_tunnel &&
           two.tunnels.For("edge")->Connected();
  }));
  auto cluster = fed_client_->Get(kClusters, "", "edge");
  ASSERT_TRUE(cluster.ok());
  client::RestOptions once;
  once.max_retries = 0;
  auto through_two =
      client::NewRestClient(AgentRestConfig(*cluster, two.tunnels.For("edge")), once);
  ASSERT_TRUE(through_two.ok());
  EXPECT_TRUE((*through_two)->List(client::testing::kConfigMaps, "default", {}).ok());
  EXPECT_EQ(StringAt(Claim(*fed_client_), "spec.holderIdentity"), "kept-instance");
  StopAgent();
}

// A renewal the federation refuses is tried again after a wait that
// doubles up to its bound, not at every discovery round.
TEST_F(TunnelTest, AFailedRenewalIsTriedAgainLaterEachTimeNotEveryRound) {
  BootstrapOptions boot = NewBootstrapToken();
  auto identity = RegisterWithToken(Options(), boot);
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  auto life = apiserver::JwtLifetime(identity->token);
  ASSERT_TRUE(life.has_value());
  const int registered = Registrations();
  RefuseRegistrations(true);

  // Due for renewal from the start.
  FakeClock clock(life->first + std::chrono::hours(24 * 300));
  Renewed renewed;
  AgentOptions opts = Options();
  opts.renew_retry = std::chrono::minutes(1);
  opts.renew_retry_max = std::chrono::minutes(3);
  RunRenewingAgent(*identity, clock, renewed, opts);
  ASSERT_TRUE(Eventually([&] { return Registrations() == registered + 1; }));

  // Refused: tried again after 1, 2, 3 and 3 minutes on the agent's
  // clock, and not in the rounds between, while the tunnel stays up.
  int attempts = 1;
  for (auto wait : {std::chrono::minutes(1), std::chrono::minutes(2), std::chrono::minutes(3),
                    std::chrono::minutes(3)}) {
    clock.Advance(wait - std::chrono::seconds(1));
    AwaitDiscoveryRounds(3);
    EXPECT_EQ(Registrations(), registered + attempts) << "tried again before the retry was due";
    clock.Advance(std::chrono::seconds(1));
    ++attempts;
    ASSERT_TRUE(Eventually([&] { return Registrations() == registered + attempts; }));
  }
  EXPECT_TRUE(tunnels_.For("edge")->Connected());

  // Accepted at the next try; then not due again for months.
  RefuseRegistrations(false);
  clock.Advance(std::chrono::minutes(3));
  ASSERT_TRUE(Eventually([&] { return !renewed.Get().empty(); }));
  AwaitDiscoveryRounds(3);
  EXPECT_EQ(Registrations(), registered + attempts + 1);
  EXPECT_EQ(renewed.Get().size(), 1u);
}

// The agent's token renewed once most of its life has passed: registering
// again as itself, for its own cluster only.
TEST_F(TunnelTest, TheAgentRenewsItsTokenBeforeItExpires) {
  BootstrapOptions boot = NewBootstrapToken();
  auto identity = RegisterWithToken(Options(), boot);
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  auto life = apiserver::JwtLifetime(identity->token);
  ASSERT_TRUE(life.has_value());
  EXPECT_EQ(life->second - life->first, std::chrono::hours(24 * 365));

  // Another cluster's agent may not renew with it.
  client::RestConfig elsewhere = *identity;
  auto transport = client::NewRestTransport(elsewhere);
  ASSERT_TRUE(transport.ok());
  auto refused = (*transport)
                     ->Do({.method = "POST",
                           .path = "/apis/federation/v1beta1/clusters/cloud/register",
                           .body = "{}",
                           .content_type = "application/json"});
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->code, 403) << refused->body;

  // Early in its life: kept.
  FakeClock clock(life->first + std::chrono::hours(24));
  Renewed renewed;
  RunRenewingAgent(*identity, clock, renewed, Options());
  // Past 80% of it: renewed, once.
  clock.Advance(std::chrono::hours(24 * 300));
  ASSERT_TRUE(Eventually([&] { return !renewed.Get().empty(); }));
  AwaitDiscoveryRounds(3);
  ASSERT_EQ(renewed.Get().size(), 1u);
  std::string token = renewed.Get().front();
  EXPECT_NE(token, identity->token);
  auto renewed_life = apiserver::JwtLifetime(token);
  ASSERT_TRUE(renewed_life.has_value());
  EXPECT_EQ(renewed_life->second - renewed_life->first, std::chrono::hours(24 * 365));
  // It is the agent's, and opens its tunnel: redialled after the tunnel is
  // cut, the agent uses it.
  client::RestConfig renewed_config = *identity;
  renewed_config.token = token;
  auto as_renewed = client::NewRestClient(renewed_config);
  ASSERT_TRUE(as_renewed.ok());
  EXPECT_TRUE((*as_renewed)->Get(kClusters, "", "edge").ok());
  std::shared_ptr<client::H2Connection> before = tunnels_.For("edge")->Current();
  tunnels_.Close("edge");
  ASSERT_TRUE(Eventually([&] {
    return tunnels_.For("edge")->Current() != before && tunnels_.For("edge")->Connected();
  }));
  EXPECT_TRUE(MemberClient()->List(client::testing::kConfigMaps, "default", {}).ok());
}

// A cascade of an agent-connected cluster needs the federation's address
// (its cluster proxy): without it, refused, and nothing is unjoined.
TEST_F(TunnelTest, ACascadeNeedsTheProxyAndTheClusterControllerLettingGo) {
  StartAgent();
  auto refused = Unjoin(*fed_client_, "edge", /*cascade=*/true);
  EXPECT_TRUE(refused.status().Is(Reason::kBadRequest)) << refused.status().ToString();
  EXPECT_TRUE(fed_client_->Get(kClusters, "", "edge").ok());
  EXPECT_TRUE(tunnels_.For("edge")->Connected());
  // With it, but no cluster controller to let go of the cluster (none runs
  // here, and the Cluster has no status at all): nothing is deleted in the
  // member, and the Cluster, deleted already, goes.
  client::RestConfig federation = fed_.AdminConfig();
  auto timed_out = Unjoin(*fed_client_, "edge", /*cascade=*/true, {client::kConfigMaps}, nullptr,
                          &federation, std::chrono::milliseconds(300));
  EXPECT_TRUE(timed_out.status().Is(Reason::kTimeout)) << timed_out.status().ToString();
  EXPECT_NE(timed_out.status().message().find("nothing was deleted"), std::string::npos);
  EXPECT_TRUE(Eventually(
      [&] { return fed_client_->Get(kClusters, "", "edge").status().Is(Reason::kNotFound); }));
}

TEST_F(TunnelTest, RequestsThatAreNoTunnelAreRefusedClearly) {
  // No such cluster.
  auto none = client::DialUpgrade(fed_.AdminConfig(), "POST", kTunnelPath, kTunnelProtocol,
                                  std::chrono::seconds(10));
  EXPECT_TRUE(none.status().Is(Reason::kNotFound)) << none.status().ToString();
  // A cluster the federation dials directly.
  json::object direct{
      {"apiVersion", "federation/v1beta1"},
      {"kind", "Cluster"},
      {"metadata", {{"name", "edge"}}},
      {"spec",
       {{"secretRef", {{"name", "edge-kubeconfig"}}},
        {"serverAddressByClientCIDRs",
         json::array{{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", "https://10.0.0.1"}}}}}}};
  ASSERT_TRUE(fed_client_->Create(kClusters, "", direct).ok());
  auto dialled = client::DialUpgrade(fed_.AdminConfig(), "POST", kTunnelPath, kTunnelProtocol,
                                     std::chrono::seconds(10));
  EXPECT_TRUE(dialled.status().Is(Reason::kConflict)) << dialled.status().ToString();
  // The agent will not take a directly dialled cluster over.
  auto agent = Agent::Create(Options());
  ASSERT_TRUE(agent.ok());
  EXPECT_TRUE((*agent)->Register().Is(Reason::kConflict));
  // No Upgrade, or another protocol: 400; GET: 405.
  auto transport = client::NewRestTransport(fed_.AdminConfig());
  ASSERT_TRUE(transport.ok());
  auto plain = (*transport)->Do({.method = "POST", .path = kTunnelPath});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->code, 400) << plain->body;
  EXPECT_NE(plain->body.find("Upgrade: flotilla-tunnel"), std::string::npos) << plain->body;
  auto other = client::DialUpgrade(fed_.AdminConfig(), "POST", kTunnelPath, "websocket",
                                   std::chrono::seconds(10));
  EXPECT_TRUE(other.status().Is(Reason::kBadRequest)) << other.status().ToString();
  auto get = (*transport)->Do({.method = "GET", .path = kTunnelPath});
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->code, 405) << get->body;
  // An invalid spec.connection.
  json::object bad = direct;
  bad["metadata"] = json::object{{"name", "bad"}};
  bad["spec"].as_object()["connection"] = "Pigeon";
  auto invalid = fed_client_->Create(kClusters, "", bad);
  EXPECT_TRUE(invalid.status().Is(Reason::kInvalid)) << invalid.status().ToString();
  EXPECT_NE(invalid.status().message().find("spec.connection"), std::string::npos);
}

TEST_F(TunnelTest, WithoutItsAgentTheMemberIsUnreachableAndADeletedClusterEndsTheAgent) {
  StartAgent();
  auto member = MemberClient();
  ASSERT_TRUE(member->List(client::testing::kConfigMaps, "default", {}).ok());
  StopAgent();
  EXPECT_TRUE(ended_.ok()) << ended_.ToString();
  ASSERT_TRUE(Eventually([&] { return !tunnels_.For("edge")->Connected(); }));
  auto down = member->List(client::testing::kConfigMaps, "default", {});
  EXPECT_TRUE(down.status().Is(Reason::kServiceUnavailable)) << down.status().ToString();
  EXPECT_NE(down.status().message().find("no agent is connected for cluster \"edge\""),
            std::string::npos)
      << down.status().ToString();

  // Back again: the same Cluster, through a new tunnel.
  StartAgent();
  EXPECT_TRUE(member->List(client::testing::kConfigMaps, "default", {}).ok());
  // The Cluster deleted: its tunnel closes (the cluster controller does
  // that) and the agent's next dial is refused for good.
  ASSERT_TRUE(fed_client_->Delete(kClusters, "", "edge").ok());
  tunnels_.Close("edge");
  run_.join();
  EXPECT_TRUE(ended_.Is(Reason::kNotFound)) << ended_.ToString();
}

TEST_F(TunnelTest, ABootstrapTokenRegistersAnAgentWithAnIdentityOfItsOwnUntilRevoked) {
  BootstrapOptions boot = NewBootstrapToken();

  // A pin of another key: refused before the token goes anywhere.
  BootstrapOptions wrong = boot;
  wrong.ca_cert_hash = "sha256:" + std::string(64, '0');
  auto refused = RegisterWithToken(Options(), wrong);
  EXPECT_TRUE(refused.status().Is(Reason::kForbidden)) << refused.status().ToString();
  wrong.ca_cert_hash = "md5:00";
  EXPECT_TRUE(RegisterWithToken(Options(), wrong).status().Is(Reason::kBadRequest));
  EXPECT_TRUE(fed_client_->Get(kClusters, "", "edge").status().Is(Reason::kNotFound));

  // What the registration refuses, with the bootstrap token's own rights.
  client::RestConfig as_token = fed_.AdminConfig();
  as_token.client_cert_pem.clear();
  as_token.client_key_pem.clear();
  as_token.token = boot.token;
  auto transport = client::NewRestTransport(as_token);
  ASSERT_TRUE(transport.ok());
  const std::string register_path = "/apis/federation/v1beta1/clusters/edge/register";
  for (const auto& [body, says] : std::vector<std::pair<std::string, std::string>>{
           {"{not json", "is not a Cluster"},
           {R"({"kind": "Secret"})", "is a Secret, not a Cluster"},
           {R"({"metadata": {"name": "cloud"}})", "as its path says"},
           {R"({"spec": {"secretRef": {"name": "x"}}})", "has no secretRef"},
           {R"({"spec": {"connection": "Direct"}})", "not Direct"},
           {R"({"spec": {"taints": []}})", "not spec.taints"}}) {
    auto answer = (*transport)
                      ->Do({.method = "POST",
                            .path = register_path,
                            .body = body,
                            .content_type = "application/json"});
    ASSERT_TRUE(answer.ok());
    EXPECT_EQ(answer->code, 400) << body << ": " << answer->body;
    EXPECT_NE(answer->body.find(says), std::string::npos) << answer->body;
  }
  // The token opens no tunnel and reads no Cluster.
  auto tunnel =
      client::DialUpgrade(as_token, "POST", kTunnelPath, kTunnelProtocol, std::chrono::seconds(10));
  EXPECT_TRUE(tunnel.status().Is(Reason::kForbidden)) << tunnel.status().ToString();

  auto identity = RegisterWithToken(Options(), boot);
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  EXPECT_EQ(identity->ca_pem, fed_.AdminConfig().ca_pem);
  EXPECT_NE(identity->token, boot.token);
  auto cluster = fed_client_->Get(kClusters, "", "edge");
  ASSERT_TRUE(cluster.ok());
  EXPECT_TRUE(api::ClusterView(*cluster).via_agent());
  EXPECT_EQ(api::ClusterView(*cluster).label("site"), "edge");
  // Once only: the cluster has an agent.
  auto again = RegisterWithToken(Options(), boot);
  EXPECT_TRUE(again.status().Is(Reason::kConflict)) << again.status().ToString();

  // The agent's own identity opens its tunnel, and no other cluster's.
  AgentOptions opts = Options();
  opts.federation = *identity;
  auto agent = Agent::Create(opts);
  ASSERT_TRUE(agent.ok());
  agent_ = std::move(*agent);
  run_ = std::thread([this] { ended_ = agent_->Run(); });
  ASSERT_TRUE(Eventually([&] { return tunnels_.For("edge")->Connected(); }));
  EXPECT_TRUE(MemberClient()->List(client::testing::kConfigMaps, "default", {}).ok());
  auto other =
      client::DialUpgrade(*identity, "POST", "/apis/federation/v1beta1/clusters/cloud/tunnel",
                          kTunnelProtocol, std::chrono::seconds(10));
  EXPECT_TRUE(other.status().Is(Reason::kForbidden)) << other.status().ToString();

  // Its ServiceAccount deleted: the recheck closes the tunnel, the agent's
  // next dial is 401 and ends it.
  ASSERT_TRUE(fed_client_
                  ->Delete(client::ResourceRef{"", "v1", "serviceaccounts", true},
                           "flotilla-system", AgentServiceAccount("edge"), {})
                  .ok());
  run_.join();
  EXPECT_TRUE(ended_.Is(Reason::kUnauthorized)) << ended_.ToString();
  EXPECT_FALSE(tunnels_.For("edge")->Connected());
}

}  // namespace
}  // namespace flotilla::federation::cluster
