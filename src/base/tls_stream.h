// TlsStream: TLS on a TCP socket, with OpenSSL reading and writing the
// socket itself and asio only saying when the socket is ready.
//
// asio's ssl::stream runs OpenSSL over a BIO pair and copies every record
// through it, and keeps two 17 KiB buffers and a 17 KiB-a-side BIO pair
// per connection whether or not the connection carries anything. This
// stream gives the session a BIO on the socket's descriptor: a record is
// encrypted into the session's own buffer and sent from there, and read
// into it and decrypted from there, and with SSL_MODE_RELEASE_BUFFERS an
// idle connection holds no record buffer at all (docs/client.md, "TLS").
//
// The interface is the part of ssl::stream Flotilla uses, so Beast's HTTP
// and WebSocket code and asio's composed reads and writes take it as they
// took ssl::stream: asynchronous and blocking reads and writes, handshake
// and shutdown, next_layer() and native_handle().
//
// Thread safety: as ssl::stream, one read and one write may be under way at
// once on the stream's executor (a strand); the blocking operations are for
// a thread that has the stream to itself. They poll the descriptor without
// a timeout: shutting the socket down from elsewhere ends them.
#pragma once

#include <openssl/ssl.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/beast/core/role.hpp>
#include <cstddef>
#include <iterator>
#include <type_traits>
#include <utility>

namespace flotilla {

class TlsStream {
 public:
  using next_layer_type = boost::asio::ip::tcp::socket;
  using lowest_layer_type = next_layer_type::lowest_layer_type;
  using executor_type = next_layer_type::executor_type;
  using native_handle_type = SSL*;
  using handshake_type = boost::asio::ssl::stream_base::handshake_type;
  using error_code = boost::system::error_code;

  // `arg` makes the socket: a socket (connected or not) or an executor.
  // The session is made from `ctx` at once (so it can be prepared before
  // the handshake) and meets the descriptor at the first operation.
  template <typename Arg>
  TlsStream(Arg&& arg, boost::asio::ssl::context& ctx)
      : socket_(std::forward<Arg>(arg)), ssl_(NewSession(ctx)) {}
  TlsStream(TlsStream&& other) noexcept
      : socket_(std::move(other.socket_)), ssl_(std::exchange(other.ssl_, nullptr)) {}
  TlsStream& operator=(TlsStream&& other) noexcept;
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;
  ~TlsStream();

  executor_type get_executor() noexcept { return socket_.get_executor(); }
  next_layer_type& next_layer() { return socket_; }
  lowest_layer_type& lowest_layer() { return socket_.lowest_layer(); }
  SSL* native_handle() { return ssl_; }

  template <typename Token>
  auto async_handshake(handshake_type type, Token&& token) {
    return Async<void(error_code)>(
        [type](TlsStream& s, std::size_t&) { return s.HandshakeStep(type); },
        std::forward<Token>(token));
  }
  // Sends this side's close_notify, then waits for the peer's (or for it
  // to close or send anything else), as ssl::stream does: a caller bounds
  // the wait with a deadline that shuts the socket down.
  template <typename Token>
  auto async_shutdown(Token&& token) {
    return Async<void(error_code)>([](TlsStream& s, std::size_t&) { return s.ShutdownStep(); },
                                   std::forward<Token>(token));
  }
  template <typename Buffers, typename Token>
  auto async_read_some(const Buffers& buffers, Token&& token) {
    boost::asio::mutable_buffer b = First(buffers);
    return Async<void(error_code, std::size_t)>(
        [b](TlsStream& s, std::size_t& n) { return s.ReadStep(b, n); }, std::forward<Token>(token));
  }
  // Writes from the buffers' start as much as the socket takes, waiting
  // only when it takes nothing; one record's worth of small buffers
  // gathered into one record.
  template <typename Buffers, typename Token>
  auto async_write_some(const Buffers& buffers, Token&& token) {
    return Async<void(error_code, std::size_t)>(
        [buffers](TlsStream& s, std::size_t& n) { return s.WriteStep(Gather(buffers), n); },
        std::forward<Token>(token));
  }

  // Writes what the socket takes of `b` now, never waiting: the bytes
  // written (all, part, or 0 with `ec` clear when the socket is full), or
  // an error. Any write of the bytes that follow goes on from there.
  std::size_t try_write_some(boost::asio::const_buffer b, error_code& ec) {
    std::size_t n = 0;
    Step s = WriteStep(b, n);
    ec = s.ec;
    return n;
  }

  template <typename Buffers>
  std::size_t read_some(const Buffers& buffers, error_code& ec) {
    std::size_t n = 0;
    boost::asio::mutable_buffer b = First(buffers);
    ec = Block([&] { return ReadStep(b, n); });
    return n;
  }
  template <typename Buffers>
  std::size_t write_some(const Buffers& buffers, error_code& ec) {
    std::size_t n = 0;
    ec = Block([&] { return WriteStep(Gather(buffers), n); });
    return n;
  }
  template <typename Buffers>
  std::size_t read_some(const Buffers& buffers) {
    error_code ec;
    std::size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }
  template <typename Buffers>
  std::size_t write_some(const Buffers& buffers) {
    error_code ec;
    std::size_t n = write_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }
  void handshake(handshake_type type, error_code& ec) {
    ec = Block([&] { return HandshakeStep(type); });
  }
  void shutdown(error_code& ec) {
    ec = Block([&] { return ShutdownStep(); });
  }

 private:
  // What one call into the session came to: done (with `ec`), or waiting
  // for the socket to become readable or writable.
  enum class Want { kNothing, kRead, kWrite };
  struct Step {
    Want want = Want::kNothing;
    error_code ec;
  };

  static SSL* NewSession(boost::asio::ssl::context& ctx);
  // Gives the session a BIO on the socket's descriptor, once it has one.
  void Bind();
  Step Classify(int ret);
  Step HandshakeStep(handshake_type type);
  Step ShutdownStep();
  Step ReadStep(boost::asio::mutable_buffer b, std::size_t& n);
  Step WriteStep(boost::asio::const_buffer b, std::size_t& n);
  // Repeats `step`, polling the descriptor between tries.
  template <typename StepFn>
  error_code Block(StepFn step) {
    for (;;) {
      Step s = step();
      if (s.want == Want::kNothing) return s.ec;
      if (error_code ec = Poll(s.want)) return ec;
    }
  }
  error_code Poll(Want want);

  template <typename Buffers>
  static boost::asio::mutable_buffer First(const Buffers& buffers) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      boost::asio::mutable_buffer b(*it);
      if (b.size() > 0) return b;
    }
    return {};
  }
  // The first buffer, or, when it is shorter than a record and others
  // follow, up to a record's worth of them copied into this thread's
  // scratch. A record the socket took in part is finished from the bytes
  // the next write begins with, which gathering the same buffers again
  // gives (SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER lets them sit elsewhere).
  template <typename Buffers>
  static boost::asio::const_buffer Gather(const Buffers& buffers) {
    auto it = boost::asio::buffer_sequence_begin(buffers);
    const auto end = boost::asio::buffer_sequence_end(buffers);
    while (it != end && boost::asio::const_buffer(*it).size() == 0) ++it;
    if (it == end) return {};
    boost::asio::const_buffer first(*it);
    if (first.size() >= kRecord || std::next(it) == end) return first;
    char* scratch = Scratch();
    std::size_t size = 0;
    for (; it != end && size < kRecord; ++it) {
      size += boost::asio::buffer_copy(boost::asio::buffer(scratch + size, kRecord - size), *it);
    }
    return {scratch, size};
  }
  static constexpr std::size_t kRecord = 16 * 1024;
  static char* Scratch();

  // One asynchronous operation: `step` until it is done, waiting for the
  // socket in between. One that is done at the first step completes through
  // a post, never inside its initiation.
  template <typename Signature, typename StepFn, typename Token>
  auto Async(StepFn step, Token&& token) {
    return boost::asio::async_compose<Token, Signature>(
        Op<StepFn, Signature>{this, std::move(step)}, token, socket_);
  }
  template <typename StepFn, typename Signature>
  struct Op {
    TlsStream* stream;
    StepFn step;
    bool waited = false;
    bool posted = false;
    error_code ec;
    std::size_t n = 0;

    template <typename Self>
    void operator()(Self& self, error_code wait_ec = {}) {
      if (posted) return Complete(self);
      if (wait_ec) {
        ec = wait_ec;
        return Complete(self);
      }
      Step s = step(*stream, n);
      if (s.want != Want::kNothing) {
        waited = true;
        stream->socket_.async_wait(
            s.want == Want::kRead ? next_layer_type::wait_read : next_layer_type::wait_write,
            std::move(self));
        return;
      }
      ec = s.ec;
      if (!waited) {
        posted = true;
        return boost::asio::post(stream->socket_.get_executor(), std::move(self));
      }
      Complete(self);
    }
    template <typename Self>
    void Complete(Self& self) {
      if constexpr (std::is_same_v<Signature, void(error_code)>) {
        self.complete(ec);
      } else {
        self.complete(ec, n);
      }
    }
  };

  next_layer_type socket_;
  SSL* ssl_;
};

// For Beast's WebSocket stream over a TlsStream: its closing handshake ends
// with the TLS shutdown, as for ssl::stream.
void teardown(boost::beast::role_type role, TlsStream& stream, boost::system::error_code& ec);
template <typename Handler>
void async_teardown(boost::beast::role_type, TlsStream& stream, Handler&& handler) {
  stream.async_shutdown(std::forward<Handler>(handler));
}

}  // namespace flotilla
