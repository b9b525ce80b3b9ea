// TlsStream over a loopback TCP pair: handshakes, records that the socket
// takes only in part (small socket buffers), gathered buffers, blocking
// writes, and how a connection's end reads (close_notify, truncation,
// cancellation), as asio's ssl::stream reported them.
#include "base/tls_stream.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <string>
#include <thread>
#include <vector>

namespace flotilla {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using boost::system::error_code;
using net::ip::tcp;
constexpr auto kAwait = net::as_tuple(net::use_awaitable);

// A server context with a fresh self-signed P-256 certificate; the client
// does not verify (what is under test is the stream, not the PKI).
void UseSelfSigned(ssl::context& ctx) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("test"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509_sign(cert, key, EVP_sha256());
  SSL_CTX_use_certificate(ctx.native_handle(), cert);
  SSL_CTX_use_PrivateKey(ctx.native_handle(), key);
  X509_free(cert);
  EVP_PKEY_free(key);
}

class TlsStreamTest : public ::testing::Test {
 protected:
  TlsStreamTest() : server_ctx_(ssl::context::tls_server), client_ctx_(ssl::context::tls_client) {
    UseSelfSigned(server_ctx_);
    client_ctx_.set_verify_mode(ssl::verify_none);
  }

  // A connected pair, not yet handshaken; with `small_buffers` each
  // socket's kernel buffers are 128 KiB, far less than a test sends, so
  // writes wait for the socket and records go out in parts. (Smaller ones,
  // below loopback's 64 KiB segment, leave TCP waiting on its persist
  // timer.)
  std::pair<TlsStream, TlsStream> Pair(bool small_buffers = false) {
    tcp::acceptor acceptor(io_, tcp::endpoint(net::ip::address_v4::loopback(), 0));
    tcp::socket client_socket(io_);
    client_socket.connect(acceptor.local_endpoint());
    tcp::socket server_socket = acceptor.accept();
    for (tcp::socket* s : {&client_socket, &server_socket}) s->set_option(tcp::no_delay(true));
    if (small_buffers) {
      for (tcp::socket* s : {&client_socket, &server_socket}) {
        s->set_option(net::socket_base::send_buffer_size(128 * 1024));
        s->set_option(net::socket_base::receive_buffer_size(128 * 1024));
      }
    }
    return {TlsStream(std::move(server_socket), server_ctx_),
            TlsStream(std::move(client_socket), client_ctx_)};
  }

  // Runs `server` and `client` to their ends on the loop.
  void Run(std::function<net::awaitable<void>()> server,
           std::function<net::awaitable<void>()> client) {
    net::co_spawn(io_, server(), net::detached);
    net::co_spawn(io_, client(), net::detached);
    io_.run();
    io_.restart();
  }

  static net::awaitable<error_code> Handshake(TlsStream& s, ssl::stream_base::handshake_type t) {
    auto [ec] = co_await s.async_handshake(t, kAwait);
    co_return ec;
  }

  net::io_context io_;
  ssl::context server_ctx_;
  ssl::context client_ctx_;
};

std::string Pattern(size_t size, char seed) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>(seed + i * 7 % 251);
  return s;
}

TEST_F(TlsStreamTest, BothSidesSendMegabytesThroughSmallSocketBuffers) {
  auto pair = Pair(/*small_buffers=*/true);
  TlsStream& server = pair.first;  // not bindings: lambdas below take them
  TlsStream& client = pair.second;
  const std::string to_client = Pattern(3 << 20, 'a');
  const std::string to_server = Pattern(2 << 20, 'k');
  std::string got_client(to_client.size(), '\0'), got_server(to_server.size(), '\0');
  error_code errors[6];
  // Each side writes while it reads: one read and one write under way at
  // once on a stream, as HTTP/2 does.
  auto side = [&](TlsStream& s, ssl::stream_base::handshake_type t, const std::string& out,
                  std::string& in, error_code* ec) -> net::awaitable<void> {
    ec[0] = co_await Handshake(s, t);
    net::co_spawn(
        s.get_executor(),
        // By value: the write may end after this coroutine's frame is gone.
        [stream = &s, out = &out, ec]() -> net::awaitable<void> {
          auto [wec, n] = co_await net::async_write(*stream, net::buffer(*out), kAwait);
          ec[1] = wec;
        },
        net::detached);
    auto [rec, n] = co_await net::async_read(s, net::buffer(in), kAwait);
    ec[2] = rec;
  };
  Run([&] { return side(server, ssl::stream_base::server, to_client, got_server, errors); },
      [&] { return side(client, ssl::stream_base::client, to_server, got_client, errors + 3); });
  for (const error_code& ec : errors) EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(got_client == to_client);
  EXPECT_TRUE(got_server == to_server);
}

TEST_F(TlsStreamTest, SmallBuffersAreGatheredAndArriveInOrder) {
  auto pair = Pair();
  TlsStream& server = pair.first;  // not bindings: lambdas below take them
  TlsStream& client = pair.second;
  std::vector<std::string> parts;
  std::vector<net::const_buffer> buffers;
  std::string whole;
  for (int i = 0; i < 500; ++i) parts.push_back(Pattern(37 + i % 300, static_cast<char>(i)));
  for (const std::string& p : parts) {
    buffers.push_back(net::buffer(p));
    whole += p;
  }
  std::string got(whole.size(), '\0');
  error_code wec, rec;
  size_t written = 0;
  Run(
      [&]() -> net::awaitable<void> {
        co_await Handshake(server, ssl::stream_base::server);
        auto [ec, n] = co_await net::async_write(server, buffers, kAwait);
        wec = ec;
        written = n;
      },
      [&]() -> net::awaitable<void> {
        co_await Handshake(client, ssl::stream_base::client);
        auto [ec, n] = co_await net::async_read(client, net::buffer(got), kAwait);
        rec = ec;
      });
  EXPECT_FALSE(wec) << wec.message();
  EXPECT_FALSE(rec) << rec.message();
  EXPECT_EQ(written, whole.size());
  EXPECT_TRUE(got == whole);
}

// A write that the socket took only in part goes on in any slices of the
// bytes after it, as a socket's does: here asio's composed writes, which
// hand the stream 64 KiB at a time, one asynchronous and one blocking. (A
// session that had to write a buffer whole would refuse every slice
// shorter than what it had begun, and end the connection.)
TEST_F(TlsStreamTest, AWriteTheSocketTookInPartGoesOnInSlices) {
  for (bool blocking : {false, true}) {
    SCOPED_TRACE(blocking ? "blocking" : "asynchronous");
    auto pair = Pair(/*small_buffers=*/true);
    TlsStream& server = pair.first;  // not bindings: lambdas below take them
    TlsStream& client = pair.second;
    const std::string body = Pattern(4 << 20, blocking ? 'b' : 'a');
    std::string got(body.size(), '\0');
    error_code hs, first_ec, wec, rec;
    size_t first = 0, written = 0;
    std::thread writer;
    Run(
        [&]() -> net::awaitable<void> {
          hs = co_await Handshake(server, ssl::stream_base::server);
          // Nothing reads while this runs on the loop: the socket's buffers
          // fill, far short of the body.
          first = server.try_write_some(net::buffer(body), first_ec);
          net::const_buffer rest = net::buffer(body) + first;
          // A write that fails ends the connection, so the reader ends too.
          auto ended = [&] {
            error_code ignored;
            if (wec) server.next_layer().shutdown(tcp::socket::shutdown_send, ignored);
          };
          if (blocking) {
            writer = std::thread([&, rest, ended] {
              written = net::write(server, rest, wec);
              ended();
            });
          } else {
            auto [ec, n] = co_await net::async_write(server, rest, kAwait);
            wec = ec;
            written = n;
            ended();
          }
        },
        [&]() -> net::awaitable<void> {
          co_await Handshake(client, ssl::stream_base::client);
          auto [ec, n] = co_await net::async_read(client, net::buffer(got), kAwait);
          rec = ec;
        });
    if (writer.joinable()) writer.join();
    EXPECT_FALSE(hs) << hs.message();
    EXPECT_FALSE(first_ec) << first_ec.message();
    EXPECT_GT(first, 0u);
    EXPECT_LT(first, body.size());
    EXPECT_FALSE(wec) << wec.message();
    EXPECT_EQ(first + written, body.size());
    EXPECT_FALSE(rec) << rec.message();
    EXPECT_TRUE(got == body);
  }
}

TEST_F(TlsStreamTest, ABlockingWriteWaitsForASlowReader) {
  auto pair = Pair(/*small_buffers=*/true);
  TlsStream& server = pair.first;  // not bindings: lambdas below take them
  TlsStream& client = pair.second;
  const std::string body = Pattern(1 << 20, 'q');
  std::string got(body.size(), '\0');
  error_code hs, wec, rec;
  std::thread writer;
  Run(
      [&]() -> net::awaitable<void> {
        hs = co_await Handshake(server, ssl::stream_base::server);
        // The loop goes on reading on the other side while this thread
        // writes with blocking calls, as a handler on the pool does.
        writer = std::thread([&] { net::write(server, net::buffer(body), wec); });
      },
      [&]() -> net::awaitable<void> {
        co_await Handshake(client, ssl::stream_base::client);
        auto [ec, n] = co_await net::async_read(client, net::buffer(got), kAwait);
        rec = ec;
      });
  writer.join();
  EXPECT_FALSE(hs) << hs.message();
  EXPECT_FALSE(wec) << wec.message();
  EXPECT_FALSE(rec) << rec.message();
  EXPECT_TRUE(got == body);
}

TEST_F(TlsStreamTest, ClosingTheSessionReadsAsEndOfFileAndShutdownCompletes) {
  auto pair = Pair();
  TlsStream& server = pair.first;  // not bindings: lambdas below take them
  TlsStream& client = pair.second;
  error_code shutdown_ec, read_ec;
  size_t read = 0;
  Run(
      [&]() -> net::awaitable<void> {
        co_await Handshake(server, ssl::stream_base::server);
        co_await net::async_write(server, net::buffer(std::string("bye")), kAwait);
        auto [ec] = co_await server.async_shutdown(kAwait);
        shutdown_ec = ec;
      },
      [&]() -> net::awaitable<void> {
        co_await Handshake(client, ssl::stream_base::client);
        char buf[16];
        for (;;) {
          auto [ec, n] = co_await client.async_read_some(net::buffer(buf), kAwait);
          read += n;
          if (ec) {
            read_ec = ec;
            break;
          }
        }
        co_await client.async_shutdown(kAwait);  // answers the server's
      });
  EXPECT_EQ(read, 3u);
  EXPECT_EQ(read_ec, net::error::eof) << read_ec.message();
  EXPECT_FALSE(shutdown_ec) << shutdown_ec.message();
}

TEST_F(TlsStreamTest, APeerThatDropsTheConnectionReadsAsTruncated) {
  auto pair = Pair();
  TlsStream& server = pair.first;  // not bindings: lambdas below take them
  TlsStream& client = pair.second;
  error_code read_ec;
  Run(
      [&]() -> net::awaitable<void> {
        co_await Handshake(server, ssl::stream_base::server);
        server.next_layer().close();
      },
      [&]() -> net::awaitable<void> {
        co_await Handshake(client, ssl::stream_base::client);
        char buf[16];
        auto [ec, n] = co_await client.async_read_some(net::buffer(buf), kAwait);
        read_ec = ec;
      });
  EXPECT_EQ(read_ec, ssl::error::stream_truncated) << read_ec.message();
}

TEST_F(TlsStreamTest, CancellingTheSocketEndsAWaitingRead) {
  auto pair = Pair();
  TlsStream& server = pair.first;  // not bindings: lambdas below take them
  TlsStream& client = pair.second;
  error_code read_ec;
  Run(
      [&]() -> net::awaitable<void> {
        co_await Handshake(server, ssl::stream_base::server);
        char buf[16];
        // Runs once the read below waits.
        net::post(io_, [&] { server.next_layer().cancel(); });
        auto [ec, n] = co_await server.async_read_some(net::buffer(buf), kAwait);
        read_ec = ec;
        server.next_layer().close();
      },
      [&]() -> net::awaitable<void> {
        co_await Handshake(client, ssl::stream_base::client);
        char buf[16];
        co_await client.async_read_some(net::buffer(buf), kAwait);  // the server's close
      });
  EXPECT_EQ(read_ec, net::error::operation_aborted) << read_ec.message();
}

TEST_F(TlsStreamTest, AHandshakeWithSomethingElseFails) {
  auto pair = Pair();
  TlsStream& server = pair.first;  // not bindings: lambdas below take them
  TlsStream& client = pair.second;
  error_code hs;
  Run([&]() -> net::awaitable<void> { hs = co_await Handshake(server, ssl::stream_base::server); },
      [&]() -> net::awaitable<void> {
        std::string plain = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        co_await net::async_write(client.next_layer(), net::buffer(plain), kAwait);
        client.next_layer().shutdown(tcp::socket::shutdown_send);
      });
  EXPECT_TRUE(hs);
  EXPECT_EQ(hs.category(), net::error::get_ssl_category()) << hs.message();
}

}  // namespace
}  // namespace flotilla
