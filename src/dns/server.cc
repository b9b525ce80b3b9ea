// The DNS server's sockets and threads (server.h).
#include "dns/server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <list>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace flotilla::dns {
namespace {

const char* Name(Transport t) { return t == Transport::kUdp ? "udp" : "tcp"; }

struct Endpoint {
  sockaddr_storage addr{};
  socklen_t len = 0;
  int family = AF_INET;
  int port = 0;
};

// HOST:PORT as a socket address (numeric hosts only; empty: any).
StatusOr<Endpoint> Resolve(const std::string& address) {
  auto hp = SplitHostPort(address);
  if (!hp.ok()) return hp.status();
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
  hints.ai_family = AF_UNSPEC;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(hp->first.empty() ? nullptr : hp->first.c_str(), nullptr, &hints, &res);
      rc != 0) {
    return Status::BadRequest("DNS address " + address + ": " + gai_strerror(rc));
  }
  Endpoint e;
  std::memcpy(&e.addr, res->ai_addr, res->ai_addrlen);
  e.len = res->ai_addrlen;
  e.family = res->ai_family;
  freeaddrinfo(res);
  e.port = hp->second;
  uint16_t port = htons(static_cast<uint16_t>(e.port));
  if (e.family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&e.addr)->sin_port = port;
  } else {
    reinterpret_cast<sockaddr_in6*>(&e.addr)->sin6_port = port;
  }
  return e;
}

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
                                  {"transport"})) {}
  ~ServerImpl() override { Stop(); }

  Status Bind() {
    for (const StubDomain& stub : options_.stub_domains) {
      FLOTILLA_ASSIGN_OR_RETURN(Endpoint upstream, Resolve(stub.address));
      knot_dname_storage_t wire;
      std::string name = stub.domain.ends_with(".") ? stub.domain : stub.domain + ".";
      if (knot_dname_from_str(wire, name.c_str(), sizeof(wire)) == nullptr) {
        return Status::BadRequest("stub domain " + stub.domain + " is no DNS name");
      }
      knot_dname_to_lower(wire);
      stubs_.push_back(Stub{std::vector<uint8_t>(wire, wire + knot_dname_size(wire)), upstream});
    }
    FLOTILLA_ASSIGN_OR_RETURN(Endpoint local, Resolve(options_.address));
    sockaddr_storage addr = local.addr;
    socklen_t len = local.len;
    int family = local.family;
    auto set_port = [&](int port) {
      if (family == AF_INET) {
        reinterpret_cast<sockaddr_in*>(&addr)->sin_port = htons(static_cast<uint16_t>(port));
      } else {
        reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port = htons(static_cast<uint16_t>(port));
      }
    };
    set_port(local.port);
    // Port 0: TCP picks one, UDP takes the same.
    tcp_ = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    udp_ = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (tcp_ < 0 || udp_ < 0) return Errno("socket");
    int one = 1;
    setsockopt(tcp_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(tcp_, reinterpret_cast<sockaddr*>(&addr), len) != 0) return Errno("bind tcp");
    if (listen(tcp_, 128) != 0) return Errno("listen");
    sockaddr_storage bound{};
    socklen_t bound_len = sizeof(bound);
    getsockname(tcp_, reinterpret_cast<sockaddr*>(&bound), &bound_len);
    port_ = family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port)
                              : ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    set_port(port_);
    if (bind(udp_, reinterpret_cast<sockaddr*>(&addr), len) != 0) return Errno("bind udp");
    wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_ < 0) return Errno("eventfd");
    return Status::Ok();
  }

  void Run() {
    for (int i = 0; i < std::max(1, options_.udp_threads); ++i) {
      threads_.emplace_back([this] { ServeUdp(); });
    }
    threads_.emplace_back([this] { AcceptTcp(); });
  }

  int port() const override { return port_; }

  void Stop() override {
    if (stopping_.exchange(true)) return;
    if (wake_ >= 0) {
      uint64_t v = 1;
      (void)!write(wake_, &v, sizeof(v));
    }
    {
      MutexLock lock(mu_);
      for (Connection& c : connections_) shutdown(c.fd, SHUT_RDWR);
    }
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    std::list<Connection> left;
    {
      MutexLock lock(mu_);
      left.swap(connections_);
    }
    for (Connection& c : left) c.thread.join();
    for (int* fd : {&udp_, &tcp_, &wake_}) {
      if (*fd >= 0) close(*fd);
      *fd = -1;
    }
  }

 private:
  struct Stub {
    std::vector<uint8_t> domain;  // lowercase wire form
    Endpoint upstream;
  };
  std::vector<Stub> stubs_;

  struct Connection {
    int fd = -1;
    std::thread thread;
    bool done = false;
  };

  static Status Errno(const char* what) {
    return Status::Unavailable(std::string("DNS server: ") + what + ": " + std::strerror(errno));
  }

  // Waits until `fd` is readable; false when the server stops.
  bool Wait(int fd) {
    pollfd fds[2] = {{.fd = fd, .events = POLLIN}, {.fd = wake_, .events = POLLIN}};
    while (!stopping_) {
      int n = poll(fds, 2, -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || fds[1].revents != 0) return false;
      if (fds[0].revents != 0) return true;
    }
    return false;
  }

  // The stub domain `query` asks under; null when none.
  const struct Stub* StubFor(std::span<const uint8_t> query) const {
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

  // Asks the stub domain's server; its answer, or SERVFAIL.
  Answered Forward(const Stub& stub, std::span<const uint8_t> query, std::span<uint8_t> out) {
    int fd = socket(stub.upstream.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ssize_t n = -1;
    if (fd >= 0 &&
        connect(fd, reinterpret_cast<const sockaddr*>(&stub.upstream.addr), stub.upstream.len) ==
            0 &&
        send(fd, query.data(), query.size(), 0) == static_cast<ssize_t>(query.size())) {
      pollfd p{.fd = fd, .events = POLLIN};
      if (poll(&p, 1, static_cast<int>(options_.forward_timeout.count())) == 1) {
        n = recv(fd, out.data(), out.size(), 0);
      }
    }
    if (fd >= 0) close(fd);
    if (n < static_cast<ssize_t>(KNOT_WIRE_HEADER_SIZE) ||
        knot_wire_get_id(out.data()) != knot_wire_get_id(query.data())) {
      return ErrorAnswer(query, out, KNOT_RCODE_SERVFAIL);
    }
    return Answered{.size = static_cast<size_t>(n), .rcode = knot_wire_get_rcode(out.data())};
  }

  Answered Respond(std::span<const uint8_t> query, std::span<uint8_t> out, Transport t) {
    auto start = std::chrono::steady_clock::now();
    Answered a;
    if (const Stub* stub = StubFor(query)) {
      a = Forward(*stub, query, out);
    } else {
      std::shared_ptr<const Zone> zone = zone_();
      a = Answer(*zone, query, out, t, options_.answer);
    }
    if (a.size == 0) {
      dropped_.Add({Name(t)});
      return a;
    }
    queries_.Add({Name(t), TypeName(a.qtype), RcodeName(a.rcode)});
    latency_.Observe(
        {Name(t)}, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return a;
  }

  void ServeUdp() {
    std::vector<uint8_t> in(KNOT_WIRE_MAX_PKTSIZE), out(KNOT_WIRE_MAX_PKTSIZE);
    while (Wait(udp_)) {
      // Drain what is there before polling again.
      for (;;) {
        sockaddr_storage peer{};
        socklen_t peer_len = sizeof(peer);
        ssize_t n = recvfrom(udp_, in.data(), in.size(), MSG_DONTWAIT,
                             reinterpret_cast<sockaddr*>(&peer), &peer_len);
        if (n < 0) break;
        Answered a = Respond(std::span(in.data(), static_cast<size_t>(n)), out, Transport::kUdp);
        if (a.size == 0) continue;
        sendto(udp_, out.data(), a.size, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&peer),
               peer_len);
      }
    }
  }

  void AcceptTcp() {
    while (Wait(tcp_)) {
      int fd = accept4(tcp_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      MutexLock lock(mu_);
      Reap();
      if (static_cast<int>(connections_.size()) >= options_.max_tcp_connections) {
        close(fd);
        continue;
      }
      timeval idle{.tv_sec = static_cast<time_t>(options_.tcp_idle.count() / 1000),
                   .tv_usec = static_cast<suseconds_t>((options_.tcp_idle.count() % 1000) * 1000)};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle));
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &idle, sizeof(idle));
      Connection& c = connections_.emplace_back();
      c.fd = fd;
      c.thread = std::thread([this, &c] { ServeTcp(c); });
    }
  }

  // Joins the connections that ended.
  void Reap() REQUIRES(mu_) {
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (it->done) {
        it->thread.join();
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
  }

  static bool ReadAll(int fd, uint8_t* p, size_t n) {
    while (n > 0) {
      ssize_t r = recv(fd, p, n, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      p += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  }

  static bool WriteAll(int fd, const uint8_t* p, size_t n) {
    while (n > 0) {
      ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }

  void ServeTcp(Connection& c) {
    std::vector<uint8_t> in(KNOT_WIRE_MAX_PKTSIZE), out(KNOT_WIRE_MAX_PKTSIZE + 2);
    while (!stopping_) {
      uint8_t len[2];
      if (!ReadAll(c.fd, len, 2)) break;
      size_t n = (size_t{len[0]} << 8) | len[1];
      if (!ReadAll(c.fd, in.data(), n)) break;
      Answered a = Respond(std::span(in.data(), n), std::span(out).subspan(2), Transport::kTcp);
      if (a.size == 0) continue;
      out[0] = static_cast<uint8_t>(a.size >> 8);
      out[1] = static_cast<uint8_t>(a.size & 0xff);
      if (!WriteAll(c.fd, out.data(), a.size + 2)) break;
    }
    MutexLock lock(mu_);
    close(c.fd);
    c.fd = -1;
    c.done = true;
  }

  const ServerOptions options_;
  ZoneSource zone_;
  metrics::CounterVec& queries_;
  metrics::HistogramVec& latency_;
  metrics::CounterVec& dropped_;
  int udp_ = -1, tcp_ = -1, wake_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
  Mutex mu_;
  std::list<Connection> connections_ GUARDED_BY(mu_);
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
