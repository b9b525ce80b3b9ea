// The DNS server on loopback, port 0: UDP and TCP answers, a stream of
// malformed packets after which it still answers, a zone swapped while it
// serves, the TCP connection limit and idle timeout, and stub domains
// (forwarded without holding other queries up).
#include "dns/server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <random>

#include "base/mutex.h"

namespace flotilla::dns {
namespace {

std::vector<uint8_t> Query(const std::string& name, uint16_t type, uint16_t id) {
  knot_pkt_t* p = knot_pkt_new(nullptr, KNOT_WIRE_MAX_PKTSIZE, nullptr);
  knot_wire_set_id(p->wire, id);
  knot_dname_storage_t wire;
  knot_dname_from_str(wire, (name + ".").c_str(), sizeof(wire));
  knot_pkt_put_question(p, wire, KNOT_CLASS_IN, type);
  std::vector<uint8_t> out(p->wire, p->wire + p->size);
  knot_pkt_free(p);
  return out;
}

// The A records of a response, as text; "rcode N" when not NOERROR.
std::vector<std::string> Addresses(const uint8_t* data, size_t n) {
  std::vector<uint8_t> copy(data, data + n);
  knot_pkt_t* p = knot_pkt_new(copy.data(), static_cast<uint16_t>(n), nullptr);
  std::vector<std::string> out;
  if (knot_pkt_parse(p, 0) != KNOT_EOK) {
    out.push_back("unparsable");
  } else if (knot_wire_get_rcode(p->wire) != KNOT_RCODE_NOERROR) {
    out.push_back("rcode " + std::to_string(knot_wire_get_rcode(p->wire)));
  } else {
    const knot_pktsection_t* an = knot_pkt_section(p, KNOT_ANSWER);
    for (uint16_t i = 0; i < an->count; ++i) {
      const knot_rrset_t* rr = knot_pkt_rr(an, i);
      if (rr->type != KNOT_RRTYPE_A) continue;
      knot_rdata_t* rd = rr->rrs.rdata;
      for (uint16_t j = 0; j < rr->rrs.count; ++j, rd = knot_rdataset_next(rd)) {
        char buf[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, rd->data, buf, sizeof(buf));
        out.emplace_back(buf);
      }
    }
  }
  knot_pkt_free(p);
  return out;
}

// A connected TCP socket to 127.0.0.1:`port`, with a 30 s receive timeout
// (a test fails rather than hangs).
int ConnectTcp(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{.tv_sec = 30, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  return fd;
}

// One length-prefixed exchange on a TCP connection: the A records of the
// answer, or {"closed"} when the server closed the connection instead.
std::vector<std::string> AskTcp(int fd, const std::string& name) {
  std::vector<uint8_t> q = Query(name, KNOT_RRTYPE_A, 9);
  std::vector<uint8_t> framed = {static_cast<uint8_t>(q.size() >> 8),
                                 static_cast<uint8_t>(q.size() & 0xff)};
  framed.insert(framed.end(), q.begin(), q.end());
  if (send(fd, framed.data(), framed.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(framed.size())) {
    return {"closed"};
  }
  uint8_t len[2];
  if (recv(fd, len, 2, MSG_WAITALL) != 2) return {"closed"};
  size_t n = (size_t{len[0]} << 8) | len[1];
  std::vector<uint8_t> r(n);
  if (recv(fd, r.data(), n, MSG_WAITALL) != static_cast<ssize_t>(n)) return {"closed"};
  return Addresses(r.data(), n);
}

// Whether the server closed `fd`: a read returns end of file (or a reset)
// rather than waiting.
bool ClosedByServer(int fd) {
  uint8_t b;
  return recv(fd, &b, 1, 0) <= 0;
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SetZone("10.0.0.1");
    Restart(ServerOptions{.address = "127.0.0.1:0", .tcp_idle = std::chrono::seconds(5)});
  }
  // A server with `options` in place of the one running.
  void Restart(ServerOptions options) {
    if (server_) server_->Stop();
    auto s = Server::Start(
        options,
        [this] {
          MutexLock lock(mu_);
          return zone_;
        },
        registry_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }
  void SetZone(const std::string& ip) {
    ZoneBuilder b(ZoneOptions{});
    b.AddAddress("web.default.flotilla.svc.flotilla.local", ip);
    MutexLock lock(mu_);
    zone_ = b.Build();
  }
  sockaddr_in Addr() const {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(server_->port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
  }
  // One UDP exchange, asked again after each second without an answer (a
  // datagram may be dropped while the server's buffer is full, as a
  // resolver knows), at most 30 times; the response bytes (empty if none).
  std::vector<uint8_t> Udp(const std::vector<uint8_t>& query) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    timeval tv{.tv_sec = 1, .tv_usec = 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_in a = Addr();
    std::vector<uint8_t> out(65535);
    ssize_t n = -1;
    for (int attempt = 0; attempt < 30 && n < 0; ++attempt) {
      sendto(fd, query.data(), query.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof(a));
      n = recv(fd, out.data(), out.size(), 0);
    }
    close(fd);
    out.resize(n < 0 ? 0 : static_cast<size_t>(n));
    return out;
  }
  std::vector<std::string> AskUdp(const std::string& name) {
    std::vector<uint8_t> r = Udp(Query(name, KNOT_RRTYPE_A, 7));
    return Addresses(r.data(), r.size());
  }

  metrics::Registry registry_;
  Mutex mu_;
  std::shared_ptr<const Zone> zone_;
  std::unique_ptr<Server> server_;
};

TEST_F(ServerTest, AnswersOverUdpAndTcp) {
  EXPECT_EQ(AskUdp("web.default.flotilla.svc.flotilla.local"),
            std::vector<std::string>{"10.0.0.1"});
  // Two queries on one TCP connection.
  int fd = ConnectTcp(server_->port());
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(AskTcp(fd, "web.default.flotilla.svc.flotilla.local"),
              std::vector<std::string>{"10.0.0.1"});
  }
  close(fd);
  EXPECT_NE(registry_.Render().find(
                R"(flotilla_dns_queries_total{transport="tcp",type="A",rcode="NOERROR"} 2)"),
            std::string::npos)
      << registry_.Render();
}

TEST_F(ServerTest, FollowsTheZoneItIsGiven) {
  EXPECT_EQ(AskUdp("web.default.flotilla.svc.flotilla.local"),
            std::vector<std::string>{"10.0.0.1"});
  SetZone("10.0.0.9");
  EXPECT_EQ(AskUdp("web.default.flotilla.svc.flotilla.local"),
            std::vector<std::string>{"10.0.0.9"});
}

// Random bytes, cut and bit-flipped queries: each is dropped or answered,
// and a good query is answered after all of them.
TEST_F(ServerTest, MalformedPacketsNeverStopIt) {
  std::mt19937 rng(42);
  std::vector<uint8_t> good = Query("web.default.flotilla.svc.flotilla.local", KNOT_RRTYPE_A, 1);
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a = Addr();
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> bad = good;
    switch (i % 4) {
      case 0:
        bad.resize(rng() % (good.size() + 1));
        break;
      case 1:
        for (int f = 0; f < 3; ++f)
          bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 << (rng() % 8));
        break;
      case 2:
        bad.resize(rng() % 600);
        for (uint8_t& b : bad) b = static_cast<uint8_t>(rng());
        break;
      case 3:
        bad.insert(bad.end(), rng() % 50, static_cast<uint8_t>(rng()));
        break;
    }
    sendto(fd, bad.data(), bad.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  }
  close(fd);
  EXPECT_EQ(AskUdp("web.default.flotilla.svc.flotilla.local"),
            std::vector<std::string>{"10.0.0.1"});
}

// A stub domain: names under it go to the other server and come back as
// they were answered there; the rest is answered here.
TEST_F(ServerTest, StubDomainsAreForwarded) {
  ZoneBuilder b(ZoneOptions{.apex = "cluster.local"});
  b.AddAddress("local.default.svc.cluster.local", "10.96.0.1");
  std::shared_ptr<const Zone> local = b.Build();
  auto member = Server::Start(
      ServerOptions{.address = "127.0.0.1:0",
                    .stub_domains = {{.domain = "Flotilla.Local",
                                      .address = "127.0.0.1:" + std::to_string(server_->port())}}},
      [local] { return local; }, registry_);
  ASSERT_TRUE(member.ok()) << member.status().ToString();
  int federation_port = server_->port();
  std::swap(server_, *member);  // ask the member from here on
  EXPECT_EQ(AskUdp("local.default.svc.cluster.local"), std::vector<std::string>{"10.96.0.1"});
  EXPECT_EQ(AskUdp("web.default.flotilla.svc.flotilla.local"),
            std::vector<std::string>{"10.0.0.1"});
  EXPECT_EQ(AskUdp("elsewhere.example.com"), std::vector<std::string>{"rcode 5"});
  (*member)->Stop();  // the federation's server: forwarding now gets no answer
  EXPECT_NE(federation_port, 0);
  EXPECT_EQ(AskUdp("web.default.flotilla.svc.flotilla.local"), std::vector<std::string>{"rcode 2"});
}

// Past max_tcp_connections a new connection is closed at once; the open
// ones go on answering, and once one closes a new one is taken again.
TEST_F(ServerTest, TcpConnectionsPastTheLimitAreClosedAtOnce) {
  Restart(ServerOptions{
      .address = "127.0.0.1:0", .max_tcp_connections = 2, .tcp_idle = std::chrono::seconds(30)});
  const std::string name = "web.default.flotilla.svc.flotilla.local";
  int first = ConnectTcp(server_->port());
  int second = ConnectTcp(server_->port());
  // Answered: both were taken before the third comes.
  ASSERT_EQ(AskTcp(first, name), std::vector<std::string>{"10.0.0.1"});
  ASSERT_EQ(AskTcp(second, name), std::vector<std::string>{"10.0.0.1"});
  int third = ConnectTcp(server_->port());
  EXPECT_TRUE(ClosedByServer(third));
  close(third);
  EXPECT_EQ(AskTcp(first, name), std::vector<std::string>{"10.0.0.1"});
  close(first);
  // The server learns of the close when it reads: until then a new
  // connection may still be over the limit (30 s bound a failing run).
  std::vector<std::string> answer;
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (answer != std::vector<std::string>{"10.0.0.1"} &&
         std::chrono::steady_clock::now() < give_up) {
    int again = ConnectTcp(server_->port());
    answer = AskTcp(again, name);
    close(again);
  }
  EXPECT_EQ(answer, std::vector<std::string>{"10.0.0.1"});
  close(second);
}

// A connection without a query for tcp_idle is closed; Stop ends the
// connections still open.
TEST_F(ServerTest, IdleTcpConnectionsAreClosed) {
  Restart(ServerOptions{.address = "127.0.0.1:0", .tcp_idle = std::chrono::milliseconds(100)});
  int idle = ConnectTcp(server_->port());
  ASSERT_EQ(AskTcp(idle, "web.default.flotilla.svc.flotilla.local"),
            std::vector<std::string>{"10.0.0.1"});
  EXPECT_TRUE(ClosedByServer(idle));  // within the 30 s receive timeout
  close(idle);
  Restart(ServerOptions{.address = "127.0.0.1:0", .tcp_idle = std::chrono::seconds(30)});
  int open = ConnectTcp(server_->port());
  ASSERT_EQ(AskTcp(open, "web.default.flotilla.svc.flotilla.local"),
            std::vector<std::string>{"10.0.0.1"});
  server_->Stop();
  EXPECT_TRUE(ClosedByServer(open));
  close(open);
}

// A query forwarded to a stub domain whose server has not answered yet
// keeps nobody else waiting: the server answers others meanwhile, and the
// forwarded answer comes back once the stub's server gives it.
TEST_F(ServerTest, AForwardedQueryDoesNotHoldOthersUp) {
  int upstream = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in up{};
  up.sin_family = AF_INET;
  up.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(upstream, reinterpret_cast<sockaddr*>(&up), sizeof(up)), 0);
  socklen_t up_len = sizeof(up);
  getsockname(upstream, reinterpret_cast<sockaddr*>(&up), &up_len);
  timeval tv{.tv_sec = 30, .tv_usec = 0};
  setsockopt(upstream, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  Restart(ServerOptions{
      .address = "127.0.0.1:0",
      .stub_domains = {{.domain = "example.org",
                        .address = "127.0.0.1:" + std::to_string(ntohs(up.sin_port))}},
      .forward_timeout = std::chrono::seconds(60)});
  // A client asks under the stub domain; the query reaches the stub's server.
  int client = socket(AF_INET, SOCK_DGRAM, 0);
  setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in a = Addr();
  std::vector<uint8_t> q = Query("www.example.org", KNOT_RRTYPE_A, 21);
  sendto(client, q.data(), q.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  std::vector<uint8_t> forwarded(512);
  sockaddr_in from{};
  socklen_t from_len = sizeof(from);
  ssize_t n = recvfrom(upstream, forwarded.data(), forwarded.size(), 0,
                       reinterpret_cast<sockaddr*>(&from), &from_len);
  ASSERT_GT(n, 0);
  forwarded.resize(static_cast<size_t>(n));
  // Meanwhile others are answered, and the first client has nothing yet.
  EXPECT_EQ(AskUdp("web.default.flotilla.svc.flotilla.local"),
            std::vector<std::string>{"10.0.0.1"});
  uint8_t none[16];
  EXPECT_LT(recv(client, none, sizeof(none), MSG_DONTWAIT), 0);
  // The stub's server answers (an empty NOERROR response): it comes back.
  std::vector<uint8_t> response = forwarded;
  knot_wire_set_qr(response.data());
  sendto(upstream, response.data(), response.size(), 0, reinterpret_cast<sockaddr*>(&from),
         from_len);
  std::vector<uint8_t> got(512);
  n = recv(client, got.data(), got.size(), 0);
  ASSERT_GT(n, 0);
  EXPECT_EQ(knot_wire_get_id(got.data()), 21);
  EXPECT_EQ(Addresses(got.data(), static_cast<size_t>(n)), std::vector<std::string>{});
  close(client);
  close(upstream);
}

TEST(SplitHostPortTest, Forms) {
  EXPECT_EQ(*SplitHostPort("127.0.0.1:53"), (std::pair<std::string, int>{"127.0.0.1", 53}));
  EXPECT_EQ(*SplitHostPort("[::1]:5353"), (std::pair<std::string, int>{"::1", 5353}));
  EXPECT_FALSE(SplitHostPort("localhost").ok());
  EXPECT_FALSE(SplitHostPort("127.0.0.1:99999").ok());
  EXPECT_FALSE(SplitHostPort("127.0.0.1:5x").ok());
}

}  // namespace
}  // namespace flotilla::dns
