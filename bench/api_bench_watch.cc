// api_bench's watch fan-out: many watch streams on a few asynchronous client
// threads, each recording when it received each benchmark write.
#include <sys/resource.h>

#include <array>
#include <iostream>
#include <memory>
#include <thread>

#include "bench/api_bench.h"

namespace flotilla::bench {
namespace {

constexpr std::string_view kSeqMarker = "\"bench-seq\":\"";

struct Watcher {
  Watcher(net::io_context& io, ssl::context& ctx) : stream(io, ctx) {}
  TlsStream stream;
  std::array<char, 16384> buf;
  std::string pending;
  bool established = false;
  std::vector<std::pair<int, Clock::time_point>> got;  // (seq, receipt time)
};

class Fanout {
 public:
  Fanout(const Config& cfg, ssl::context& ctx, const std::string& ns) : cfg_(cfg), ctx_(ctx) {
    request_ = "GET " + NsPath(ns) + "?watch=true HTTP/1.1\r\nHost: " + cfg.host + ":" + cfg.port +
               "\r\nAuthorization: Bearer " + cfg.token + "\r\nAccept: application/json\r\n\r\n";
    for (int t = 0; t < cfg.watch_threads; ++t) ios_.push_back(std::make_unique<net::io_context>());
  }
  ~Fanout() { Stop(); }

  // Opens every watch; returns the number established within `timeout`.
  int Open(std::chrono::seconds timeout) {
    boost::system::error_code ec;
    auto eps = tcp::resolver(*ios_[0]).resolve(cfg_.host, cfg_.port, ec);
    if (ec || eps.empty()) return 0;
    endpoint_ = *eps.begin();
    for (int i = 0; i < cfg_.watchers; ++i) {
      watchers_.push_back(std::make_unique<Watcher>(*ios_[i % ios_.size()], ctx_));
      Start(*watchers_.back());
    }
    for (auto& io : ios_) threads_.emplace_back([&io] { io->run(); });
    auto deadline = Clock::now() + timeout;
    while (established_ + failed_ < cfg_.watchers && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return established_;
  }
  int failed() const { return failed_; }
  int64_t received() const { return received_; }

  void Stop() {
    for (auto& io : ios_) io->stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  const std::vector<std::unique_ptr<Watcher>>& watchers() const { return watchers_; }

 private:
  void Start(Watcher& w) {
    w.stream.set_verify_callback(ssl::host_name_verification(cfg_.host));
    w.stream.next_layer().async_connect(endpoint_, [this, &w](boost::system::error_code ec) {
      if (ec) return Fail(ec);
      w.stream.async_handshake(ssl::stream_base::client, [this, &w](boost::system::error_code ec) {
        if (ec) return Fail(ec);
        net::async_write(w.stream, net::buffer(request_),
                         [this, &w](boost::system::error_code ec, size_t) {
                           if (ec) return Fail(ec);
                           Read(w);
                         });
      });
    });
  }

  void Read(Watcher& w) {
    w.stream.async_read_some(net::buffer(w.buf),
                             [this, &w](boost::system::error_code ec, size_t n) {
                               if (ec) return Fail(ec);
                               OnData(w, n);
                               Read(w);
                             });
  }

  // Every event is one line; a line holding the marker carries its seq.
  void OnData(Watcher& w, size_t n) {
    auto now = Clock::now();
    w.pending.append(w.buf.data(), n);
    if (!w.established && w.pending.size() >= 12) {
      if (w.pending.rfind("HTTP/1.1 200", 0) != 0) return Fail({});
      w.established = true;
      ++established_;
    }
    size_t pos = 0;
    for (size_t nl; (nl = w.pending.find('\n', pos)) != std::string::npos; pos = nl + 1) {
      size_t m = w.pending.find(kSeqMarker, pos);
      if (m == std::string::npos || m > nl) continue;
      w.got.emplace_back(std::atoi(w.pending.c_str() + m + kSeqMarker.size()), now);
      ++received_;
    }
    w.pending.erase(0, pos);
  }

  void Fail(boost::system::error_code ec) {
    if (failed_++ < 3) std::cerr << "watch: " << (ec ? ec.message() : "not 200") << "\n";
  }

  const Config& cfg_;
  ssl::context& ctx_;
  std::string request_;
  tcp::endpoint endpoint_;
  std::vector<std::unique_ptr<net::io_context>> ios_;
  std::vector<std::unique_ptr<Watcher>> watchers_;  // destroyed before ios_ (declared after)
  std::vector<std::thread> threads_;
  std::atomic<int> established_{0}, failed_{0};
  std::atomic<int64_t> received_{0};
};

// CPU seconds this process (the bench's watch threads and its writer) has used.
double OwnCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

// Delivery latencies of every (watcher, write) pair received.
void SummarizeDelivery(const Fanout& fanout, const std::vector<Clock::time_point>& sent,
                       const std::vector<Clock::time_point>& acked, int64_t expected,
                       json::object& out) {
  std::vector<double> from_ack, from_send;
  int64_t before_ack = 0;
  for (const auto& w : fanout.watchers()) {
    for (const auto& [seq, at] : w->got) {
      if (seq < 0 || seq >= static_cast<int>(sent.size())) continue;
      from_send.push_back(Ms(at - sent[seq]));
      from_ack.push_back(std::max(0.0, Ms(at - acked[seq])));
      before_ack += at < acked[seq];
    }
  }
  out["events_expected"] = expected;
  out["events_received"] = from_ack.size();
  out["received_before_ack"] = before_ack;
  out["delivery_after_ack"] = Summarize(from_ack, expected - from_ack.size(), 0);
  out["delivery_after_send"] = Summarize(from_send, 0, 0);
}

}  // namespace

json::object RunWatch(const Config& cfg, ssl::context& ctx, const std::string& ns,
                      std::atomic<int64_t>& created) {
  json::object out{{"watchers", cfg.watchers},
                   {"writes", cfg.watch_writes},
                   {"writes_per_second", cfg.watch_rate}};
  Fanout fanout(cfg, ctx, ns);
  auto t0 = Clock::now();
  int up = fanout.Open(std::chrono::seconds(120));
  out["established"] = up;
  out["connect_failures"] = fanout.failed();
  out["seconds_to_establish"] = Round2(Ms(Clock::now() - t0) / 1000);
  double idle_before = ServerCpuSeconds(cfg);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  out["server_idle_cpu_percent"] = Round2((ServerCpuSeconds(cfg) - idle_before) * 50);
  out["server_with_watchers"] = ServerMemory(cfg);
  Conn writer(cfg, ctx);
  if (Status s = writer.Connect(); !s.ok()) return out;
  std::vector<Clock::time_point> sent(cfg.watch_writes), acked(cfg.watch_writes);
  std::vector<double> write_ms;
  double cpu_before = ServerCpuSeconds(cfg);
  double own_cpu_before = OwnCpuSeconds();
  auto start = Clock::now();
  for (int seq = 0; seq < cfg.watch_writes; ++seq) {
    std::this_thread::sleep_until(
        start + std::chrono::microseconds(static_cast<int64_t>(seq * 1e6 / cfg.watch_rate)));
    std::string data = SmallData() + ",\"bench-seq\":\"" + std::to_string(seq) + "\"";
    sent[seq] = Clock::now();
    auto code =
        writer.Do(http::verb::post, NsPath(ns), ConfigMap("w-" + std::to_string(seq), data));
    acked[seq] = Clock::now();
    if (code.ok() && *code == 201) ++created;
    write_ms.push_back(Ms(acked[seq] - sent[seq]));
  }
  int64_t expected = int64_t{up} * cfg.watch_writes;
  auto deadline = Clock::now() + std::chrono::seconds(15);
  while (fanout.received() < expected && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  double cpu_seconds = ServerCpuSeconds(cfg) - cpu_before;
  double own_cpu_seconds = OwnCpuSeconds() - own_cpu_before;
  fanout.Stop();
  int64_t events = std::max<int64_t>(1, fanout.received());
  out["server_cpu_us_per_event"] = Round2(cpu_seconds * 1e6 / events);
  // The watchers share the cores with the server: what receiving costs
  // them, and the write rate the writer reached (it waits for each ack).
  out["bench_cpu_us_per_event"] = Round2(own_cpu_seconds * 1e6 / events);
  if (cfg.watch_writes > 1) {
    out["writes_per_second_reached"] =
        Round2((cfg.watch_writes - 1) * 1000 / std::max(1.0, Ms(sent.back() - sent.front())));
  }
  out["write_latency"] = Summarize(write_ms, 0, 0);
  SummarizeDelivery(fanout, sent, acked, expected, out);
  return out;
}

}  // namespace flotilla::bench
