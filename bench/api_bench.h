// The pieces of api_bench (bench/api_bench.cc) shared by its files: options,
// request bodies, result summaries and a blocking keep-alive HTTPS client.
#pragma once

#include <algorithm>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "base/status.h"

namespace flotilla::bench {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using TlsStream = ssl::stream<tcp::socket>;
using Clock = std::chrono::steady_clock;

struct Config {
  std::string server, token, ca_file, host, port, phases = "create,get,list,watch,fill";
  int concurrency = 8, fill_concurrency = 32, count = 0, server_pid = 0, fill = 0;
  double duration = 5;
  int watchers = 1000, watch_writes = 200, watch_threads = 2;
  double watch_rate = 20;
  std::vector<int> list_sizes = {1000, 2000, 10000};
  bool Has(const std::string& phase) const { return phases.find(phase) != std::string::npos; }
};

inline double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
inline double Round2(double v) { return std::round(v * 100) / 100; }

inline std::string NsPath(const std::string& ns) {
  return "/api/v1/namespaces/" + ns + "/configmaps";
}
inline std::string ConfigMap(const std::string& name, const std::string& data) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name + R"("},"data":{)" +
         data + "}}";
}
// The data of a small ConfigMap: one 100-byte value.
inline std::string SmallData() { return "\"k\":\"" + std::string(100, 'v') + "\""; }

// The server's VmRSS, VmHWM (MiB) and thread count; nulls without --server-pid.
json::object ServerMemory(const Config& cfg);

// The server's user + system CPU time so far; 0 without --server-pid.
double ServerCpuSeconds(const Config& cfg);

// Count, errors, p50/p99/max of `ms` (sorted in place); a rate when seconds > 0.
json::object Summarize(std::vector<double>& ms, int64_t errors, double seconds);

// Watch fan-out: cfg.watchers watches on `ns`, then cfg.watch_writes creates at
// cfg.watch_rate; delivery latency from each write's acknowledgement (and
// from its sending) to each watcher's receipt. Adds its creates to `created`.
json::object RunWatch(const Config& cfg, ssl::context& ctx, const std::string& ns,
                      std::atomic<int64_t>& created);

// One blocking keep-alive TLS connection. Not thread-safe; one per worker.
class Conn {
 public:
  Conn(const Config& cfg, ssl::context& ctx) : cfg_(cfg), stream_(io_, ctx) {}

  Status Connect() {
    boost::system::error_code ec;
    auto endpoints = tcp::resolver(io_).resolve(cfg_.host, cfg_.port, ec);
    if (!ec) net::connect(stream_.next_layer(), endpoints, ec);
    if (!ec) stream_.next_layer().set_option(tcp::no_delay(true), ec);
    stream_.set_verify_callback(ssl::host_name_verification(cfg_.host));
    if (!ec) stream_.handshake(ssl::stream_base::client, ec);
    return ec ? Status::Unavailable("connect: " + ec.message()) : Status::Ok();
  }

  // Sends one request and reads the whole response; returns its HTTP code.
  StatusOr<int> Do(http::verb verb, const std::string& target, std::string body,
                   std::string* response_body = nullptr) {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, cfg_.host + ":" + cfg_.port);
    req.set(http::field::authorization, "Bearer " + cfg_.token);
    req.set(http::field::accept, "application/json");
    if (!body.empty()) {
      req.set(http::field::content_type,
              verb == http::verb::patch ? "application/merge-patch+json" : "application/json");
    }
    req.body() = std::move(body);
    req.prepare_payload();
    boost::system::error_code ec;
    http::write(stream_, req, ec);
    http::response_parser<http::string_body> parser;
    parser.body_limit(1ULL << 31);
    if (!ec) http::read(stream_, buffer_, parser, ec);
    if (ec) {
      return Status::Unavailable(std::string(http::to_string(verb)) + " " + target + ": " +
                                 ec.message());
    }
    if (response_body != nullptr) *response_body = std::move(parser.get().body());
    return static_cast<int>(parser.get().result_int());
  }

 private:
  const Config& cfg_;
  net::io_context io_;
  TlsStream stream_;
  boost::beast::flat_buffer buffer_;
};

}  // namespace flotilla::bench
