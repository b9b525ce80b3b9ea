// The DNS server on the process's shared event loop (server.h).
#include "dns/server.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <memory>
#include <set>
#include <span>
#include <vector>

#include "base/accept.h"
#include "base/io.h"
#include "base/mutex.h"

namespace flotilla::dns {
namespace {

namespace net = boost::asio;
using net::ip::tcp;
using net::ip::udp;
using error_code = boost::system::error_code;
using Strand = net::strand<net::io_context::executor_type>;
constexpr auto kAwait = net::as_tuple(net::use_awaitable);
using ReusePort = net::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;

const char* Name(Transport t) { return t == Transport::kUdp ? "udp" : "tcp"; }

// HOST:PORT as an address and port (numeric hosts only; empty: any IPv4).
StatusOr<std::pair<net::ip::address, uint16_t>> Resolve(const std::string& address) {
  FLOTILLA_ASSIGN_OR_RETURN(auto hp, SplitHostPort(address));
  if (hp.first.empty())
    return std::pair{net::ip::address(net::ip::address_v4::any()),
                     static_cast<uint16_t>(hp.second)};
  error_code ec;
  net::ip::address ip = net::ip::make_address(hp.first, ec);
  if (ec)
    return Status::BadRequest("DNS address " + address + ": " + hp.first + " is no IP address");
  return std::pair{ip, static_cast<uint16_t>(hp.second)};
}

// One TCP connection: its socket and the deadline that closes it (idle
// between queries, or a response the client does not read). Shared by its
// coroutine and the deadline's handler, both on the connection's strand.
struct TcpConnection : std::enable_shared_from_this<TcpConnection> {
  explicit TcpConnection(tcp::socket s) : socket(std::move(s)), deadline(socket.get_executor()) {}

  void Arm(std::chrono::milliseconds after) {
    uint64_t gen = ++deadline_gen;
    deadline.expires_after(after);
    deadline.async_wait([self = shared_from_this(), gen](error_code ec) {
      if (!ec && gen == self->deadline_gen) self->Close();
    });
  }
  void Close() {
    ++deadline_gen;
    deadline.cancel();
    error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }

  tcp::socket socket;
  net::steady_timer deadline;
  uint64_t deadline_gen = 0;  // on the strand
};

class ServerImpl : public Server {
 public:
  ServerImpl(const ServerOptions& options, ZoneSource zone, metrics::Registry& registry)
      : options_(options),
        zone_(std::move(zone)),
        queries_(registry.Counter("flotilla_dns_queries_total", "DNS queries answered.",
                                  {"transport", "type", "rcode"})),
        latency_(registry.Histogram("flotilla_dns_answer_duration_seconds",
                                    "Time from a DNS query read to its answer written.",
                                    {"transport"})),
        dropped_(registry.Counter("flotilla_dns_dropped_total",
                                  "DNS packets dropped unanswered (malformed or responses).",
                                  {"transport"})),
        acceptor_(net::make_strand(SharedIoContext())) {}
  ~ServerImpl() override { Stop(); }

  Status Bind() {
    for (const StubDomain& stub : options_.stub_domains) {
      FLOTILLA_ASSIGN_OR_RETURN(auto upstream, Resolve(stub.address));
      knot_dname_storage_t wire;
      std::string name = stub.domain.ends_with(".") ? stub.domain : stub.domain + ".";
      if (knot_dname_from_str(wire, name.c_str(), sizeof(wire)) == nullptr) {
        return Status::BadRequest("stub domain " + stub.domain + " is no DNS name");
      }
      knot_dname_to_lower(wire);
      stubs_.push_back(Stub{std::vector<uint8_t>(wire, wire + knot_dname_size(wire)),
                            udp::endpoint(upstream.first, upstream.second)});
    }
    FLOTILLA_ASSIGN_OR_RETURN(auto local, Resolve(options_.address));
    // Port 0: TCP picks one, the UDP sockets take the same.
    error_code ec;
    tcp::endpoint tcp_at(local.first, local.second);
    acceptor_.open(tcp_at.protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(tcp_at, ec);
    if (!ec) acceptor_.listen(128, ec);
    if (ec) return Failed("TCP", ec);
    port_ = acceptor_.local_endpoint().port();
    // Several UDP sockets on the port (SO_REUSEPORT: the kernel spreads the
    // clients over them), each read on its own strand, answer at once.
    udp::endpoint udp_at(local.first, static_cast<uint16_t>(port_));
    for (int i = 0; i < std::max(1, options_.udp_sockets); ++i) {
      auto socket = std::make_unique<udp::socket>(net::make_strand(SharedIoContext()));
      socket->open(udp_at.protocol(), ec);
      if (!ec && options_.udp_sockets > 1) socket->set_option(ReusePort(true), ec);
      if (!ec) socket->bind(udp_at, ec);
      if (!ec) socket->non_blocking(true, ec);
      if (ec) return Failed("UDP", ec);
      udp_.push_back(std::move(socket));
    }
    return Status::Ok();
  }

  void Run() {
    for (auto& socket : udp_) Spawn(socket->get_executor(), ServeUdp(*socket));
    Spawn(acceptor_.get_executor(), Accept());
  }

  int port() const override { return port_; }

  void Stop() override {
    if (stopping_.exchange(true)) return;
    // Each socket is closed on its strand; every coroutine then ends. The
    // closes count as running too: one whose coroutine had ended already
    // (or never ran) must not run after this returns and the server goes.
    Post(acceptor_.get_executor(), [this] {
      error_code ignored;
      acceptor_.close(ignored);
    });
    for (auto& socket : udp_) {
      Post(socket->get_executor(), [s = socket.get()] {
        error_code ignored;
        s->close(ignored);
      });
    }
    MutexLock lock(mu_);
    for (const std::shared_ptr<TcpConnection>& c : connections_) {
      net::post(c->socket.get_executor(), [c] { c->Close(); });
    }
    // A query forwarded to a stub domain ends within the forward timeout.
    ScopedBlocking blocking;
    ended_.Wait(lock, [&]() REQUIRES(mu_) { return running_ == 0; });
  }

 private:
  struct Stub {
    std::vector<uint8_t> domain;  // lowercase wire form
    udp::endpoint upstream;
  };

  static Status Failed(const char* what, const error_code& ec) {
    return Status::Unavailable(std::string("DNS server: ") + what + ": " + ec.message());
  }

  // Runs `work` on `ex`; Stop waits for every one of them.
  template <typename Executor>
  void Spawn(const Executor& ex, net::awaitable<void> work) {
    {
      MutexLock lock(mu_);
      ++running_;
    }
    net::co_spawn(ex, std::move(work), [this](std::exception_ptr e) {
      if (e) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& x) {
          spdlog::error("DNS server: {}", x.what());
        }
      }
      // Under mu_: Stop may destroy this once it is released.
      MutexLock lock(mu_);
      if (--running_ == 0) ended_.NotifyAll();
    });
  }

  // Runs `fn` on `ex`; Stop waits for it as for a coroutine.
  template <typename Executor, typename Fn>
  void Post(const Executor& ex, Fn fn) {
    {
      MutexLock lock(mu_);
      ++running_;
    }
    net::post(ex, [this, fn = std::move(fn)]() mutable {
      fn();
      // Under mu_: Stop may destroy this once it is released.
      MutexLock lock(mu_);
      if (--running_ == 0) ended_.NotifyAll();
    });
  }

  // The stub domain `query` asks under; null when none.
  const Stub* StubFor(std::span<const uint8_t> query) const {
    if (stubs_.empty() || query.size() < KNOT_WIRE_HEADER_SIZE) return nullptr;
    knot_pkt_t* q = knot_pkt_new(const_cast<uint8_t*>(query.data()),
                                 static_cast<uint16_t>(query.size()), nullptr);
    const Stub* found = nullptr;
    if (q != nullptr && knot_pkt_parse_question(q) == KNOT_EOK && q->qname_size > 0) {
      for (const Stub& s : stubs_) {
        if (knot_dname_in_bailiwick(knot_pkt_qname(q), s.domain.data()) >= 0) found = &s;
      }
    }
    knot_pkt_free(q);
    return found;
  }

  // Asks the stub domain's server over UDP; its answer, or SERVFAIL when
  // none comes within the forward timeout.
  net::awaitable<Answered> Forward(const Stub& stub, std::span<const uint8_t> query,
                                   std::span<uint8_t> out) {
    auto ex = co_await net::this_coro::executor;
    auto socket = std::make_shared<udp::socket>(ex);
    net::steady_timer timeout(ex);
    size_t n = 0;
    error_code ec;
    socket->open(stub.upstream.protocol(), ec);
    if (!ec) socket->connect(stub.upstream, ec);
    if (!ec) socket->send(net::buffer(query.data(), query.size()), 0, ec);
    if (!ec) {
      timeout.expires_after(options_.forward_timeout);
      timeout.async_wait([socket](error_code e) {
        if (!e) socket->cancel();
      });
      std::tie(ec, n) = co_await socket->async_receive(net::buffer(out.data(), out.size()), kAwait);
      timeout.cancel();
    }
    if (ec || n < KNOT_WIRE_HEADER_SIZE ||
        knot_wire_get_id(out.data()) != knot_wire_get_id(query.data())) {
      co_return ErrorAnswer(query, out, KNOT_RCODE_SERVFAIL);
    }
    co_return Answered{.size = n, .rcode = knot_wire_get_rcode(out.data())};
  }

  // `query`'s answer into `out`: forwarded to its stub domain, or from the
  // zone; counted in the metrics. Size 0: dropped.
  net::awaitable<Answered> Respond(std::span<const uint8_t> query, std::span<uint8_t> out,
                                   Transport t) {
    auto start = std::chrono::steady_clock::now();
    Answered a;
    if (const Stub* stub = StubFor(query)) {
      a = co_await Forward(*stub, query, out);
    } else {
      a = AnswerFromZone(query, out, t);
    }
    Count(a, t, start);
    co_return a;
  }
  Answered AnswerFromZone(std::span<const uint8_t> query, std::span<uint8_t> out, Transport t) {
    std::shared_ptr<const Zone> zone = zone_();
    return Answer(*zone, query, out, t, options_.answer);
  }
  void Count(const Answered& a, Transport t, std::chrono::steady_clock::time_point start) {
    if (a.size == 0) {
      dropped_.Add({Name(t)});
      return;
    }
    queries_.Add({Name(t), TypeName(a.qtype), RcodeName(a.rcode)});
    latency_.Observe(
        {Name(t)}, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }

  // Reads `socket` on its strand: waits until it is readable, then answers
  // every datagram there is before waiting again. A query for a stub domain
  // is forwarded by a coroutine of its own, so that others are answered
  // meanwhile. A response the socket cannot take at once is dropped, as a
  // full socket buffer drops any datagram.
  net::awaitable<void> ServeUdp(udp::socket& socket) {
    std::vector<uint8_t> in(KNOT_WIRE_MAX_PKTSIZE), out(KNOT_WIRE_MAX_PKTSIZE);
    for (;;) {
      auto [ec] = co_await socket.async_wait(udp::socket::wait_read, kAwait);
      if (ec || stopping_) co_return;
      for (;;) {
        udp::endpoint peer;
        error_code read_ec;
        size_t n = socket.receive_from(net::buffer(in), peer, 0, read_ec);
        if (read_ec) break;  // drained (would block), or closed
        std::span<const uint8_t> query(in.data(), n);
        if (const Stub* stub = StubFor(query)) {
          Spawn(socket.get_executor(),
                ForwardUdp(socket, *stub, std::vector<uint8_t>(query.begin(), query.end()), peer));
          continue;
        }
        auto start = std::chrono::steady_clock::now();
        Answered a = AnswerFromZone(query, out, Transport::kUdp);
        Count(a, Transport::kUdp, start);
        if (a.size == 0) continue;
        error_code ignored;
        socket.send_to(net::buffer(out.data(), a.size), peer, 0, ignored);
      }
    }
  }
  // On `socket`'s strand: forwards one query to `stub` (stubs_ outlives
  // every coroutine) and sends the answer back.
  net::awaitable<void> ForwardUdp(udp::socket& socket, const Stub& stub, std::vector<uint8_t> query,
                                  udp::endpoint peer) {
    std::vector<uint8_t> out(KNOT_WIRE_MAX_PKTSIZE);
    auto start = std::chrono::steady_clock::now();
    Answered a = co_await Forward(stub, query, out);
    Count(a, Transport::kUdp, start);
    if (a.size == 0) co_return;

    error_code ignored;
    socket.send_to(net::buffer(out.data(), a.size), peer, 0, ignored);
  }

  // Takes connections, each on its own strand; past max_tcp_connections a
  // new one is closed at once.
  net::awaitable<void> Accept() {
    co_await AcceptConnections(acceptor_, stopping_, [this](tcp::socket socket) {
      auto conn = std::make_shared<TcpConnection>(std::move(socket));
      {
        MutexLock lock(mu_);
        if (stopping_ || static_cast<int>(connections_.size()) >= options_.max_tcp_connections) {
          conn->Close();
          return;
        }
        connections_.insert(conn);
      }
      Spawn(conn->socket.get_executor(), ServeTcp(conn));
    });
  }

  // Length-prefixed queries, answered in order; the connection closes after
  // tcp_idle without a query, or when a response is not taken within
  // tcp_idle (a client that does not read).
  net::awaitable<void> ServeTcp(std::shared_ptr<TcpConnection> conn) {
    std::vector<uint8_t> in(KNOT_WIRE_MAX_PKTSIZE), out(KNOT_WIRE_MAX_PKTSIZE + 2);
    while (!stopping_) {
      conn->Arm(options_.tcp_idle);
      uint8_t len[2];
      auto [ec, got] = co_await net::async_read(conn->socket, net::buffer(len, 2), kAwait);
      if (ec) break;
      size_t n = (size_t{len[0]} << 8) | len[1];
      std::tie(ec, got) = co_await net::async_read(conn->socket, net::buffer(in.data(), n), kAwait);
      if (ec) break;
      std::span<const uint8_t> query(in.data(), n);
      std::span<uint8_t> answer = std::span(out).subspan(2);
      Answered a = co_await Respond(query, answer, Transport::kTcp);
      if (a.size == 0) continue;
      out[0] = static_cast<uint8_t>(a.size >> 8);
      out[1] = static_cast<uint8_t>(a.size & 0xff);
      conn->Arm(options_.tcp_idle);
      std::tie(ec, got) =
          co_await net::async_write(conn->socket, net::buffer(out.data(), a.size + 2), kAwait);
      if (ec) break;
    }
    conn->Close();
    MutexLock lock(mu_);
    connections_.erase(conn);
  }

  const ServerOptions options_;
  ZoneSource zone_;
  metrics::CounterVec& queries_;
  metrics::HistogramVec& latency_;
  metrics::CounterVec& dropped_;
  std::vector<Stub> stubs_;
  tcp::acceptor acceptor_;
  std::vector<std::unique_ptr<udp::socket>> udp_;  // each on its own strand
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  Mutex mu_;
  CondVar ended_;                    // running_ reached zero
  int running_ GUARDED_BY(mu_) = 0;  // coroutines and Stop's closes not yet ended
  std::set<std::shared_ptr<TcpConnection>> connections_ GUARDED_BY(mu_);
};

}  // namespace

StatusOr<std::pair<std::string, int>> SplitHostPort(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return Status::BadRequest("DNS address " + address + ": want HOST:PORT");
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = 0;
  try {
    size_t used = 0;
    port = std::stoi(address.substr(colon + 1), &used);
    if (used != address.size() - colon - 1 || port < 0 || port > 65535) throw std::out_of_range("");
  } catch (const std::exception&) {
    return Status::BadRequest("DNS address " + address + ": the port is no number from 0 to 65535");
  }
  return std::pair{host, port};
}

StatusOr<std::unique_ptr<Server>> Server::Start(const ServerOptions& options, ZoneSource zone,
                                                metrics::Registry& registry) {
  auto server = std::make_unique<ServerImpl>(options, std::move(zone), registry);
  if (Status s = server->Bind(); !s.ok()) return s;
  server->Run();
  spdlog::info("DNS server on {} (UDP and TCP port {})", options.address, server->port());
  return std::unique_ptr<Server>(std::move(server));
}

}  // namespace flotilla::dns
