#include "base/tls_stream.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace flotilla {
namespace {

namespace net = boost::asio;
using boost::system::error_code;

// The BIO on the descriptor: send and recv, never a signal for a peer that
// has gone. It never reports end of file (BIO_eof): told of one, OpenSSL 3
// sends the peer a fatal alert on the way to saying it was unexpected,
// bytes nobody reads from a client that dropped an idle connection. Not
// told, it reports a read of nothing, which Classify names as truncation,
// as asio's stream did.
int Fd(BIO* bio) { return static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio))); }

int SocketWrite(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  ssize_t n;
  do {
    n = ::send(Fd(bio), data, static_cast<size_t>(size), MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_write(bio);
  return static_cast<int>(n);
}

int SocketRead(BIO* bio, char* data, int size) {
  BIO_clear_retry_flags(bio);
  ssize_t n;
  do {
    n = ::recv(Fd(bio), data, static_cast<size_t>(size), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_read(bio);
  return static_cast<int>(n);
}

long SocketCtrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

BIO_METHOD* SocketMethod() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
                                 "flotilla socket");
    BIO_meth_set_write(m, SocketWrite);
    BIO_meth_set_read(m, SocketRead);
    BIO_meth_set_ctrl(m, SocketCtrl);
    return m;
  }();
  return method;
}

// SSL_get_error reads the thread's error queue, which must be empty before
// an operation. Clearing an empty queue walks every slot of it; looking is
// cheaper, and an operation finds it empty nearly always.
void ClearErrors() {
  if (ERR_peek_error() != 0) ERR_clear_error();
}

}  // namespace

SSL* TlsStream::NewSession(net::ssl::context& ctx) {
  SSL* ssl = SSL_new(ctx.native_handle());
  if (ssl == nullptr) {
    throw boost::system::system_error(
        error_code(static_cast<int>(ERR_get_error()), net::error::get_ssl_category()), "SSL_new");
  }
  // A write ends with the records the socket took (WriteStep), so that the
  // caller goes on with the bytes after them, in whatever slices it likes: a
  // session that had to write a buffer whole would take back only that same
  // buffer after the socket was full, and end the connection on any other.
  // A record the socket took in part is finished from wherever its bytes
  // are then (Gather); an idle session frees its record buffers; a read
  // takes what the socket has, not a record header and then its body.
  SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                        SSL_MODE_RELEASE_BUFFERS);
  SSL_set_read_ahead(ssl, 1);
  return ssl;
}

TlsStream& TlsStream::operator=(TlsStream&& other) noexcept {
  if (this != &other) {
    if (ssl_ != nullptr) SSL_free(ssl_);
    socket_ = std::move(other.socket_);
    ssl_ = std::exchange(other.ssl_, nullptr);
  }
  return *this;
}

TlsStream::~TlsStream() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

void TlsStream::Bind() {
  if (SSL_get_rbio(ssl_) != nullptr || !socket_.is_open()) return;
  error_code ignored;
  socket_.non_blocking(true, ignored);
  BIO* bio = BIO_new(SocketMethod());
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(socket_.native_handle())));
  BIO_set_init(bio, 1);
  SSL_set_bio(ssl_, bio, bio);  // the session owns it, once for each side
}

TlsStream::Step TlsStream::Classify(int ret) {
  const int err = SSL_get_error(ssl_, ret);
  const int sys = errno;
  switch (err) {
    case SSL_ERROR_NONE:
      return {};
    case SSL_ERROR_WANT_READ:
      return {Want::kRead, {}};
    case SSL_ERROR_WANT_WRITE:
      return {Want::kWrite, {}};
    case SSL_ERROR_ZERO_RETURN:
      return {Want::kNothing, net::error::eof};
    case SSL_ERROR_SYSCALL: {
      unsigned long e = ERR_get_error();
      ERR_clear_error();
      if (e != 0)
        return {Want::kNothing, error_code(static_cast<int>(e), net::error::get_ssl_category())};
      if (sys != 0) return {Want::kNothing, error_code(sys, boost::system::system_category())};
      return {Want::kNothing, net::ssl::error::stream_truncated};
    }
    default: {
      unsigned long e = ERR_peek_last_error();
      ERR_clear_error();
      if (ERR_GET_LIB(e) == ERR_LIB_SSL &&
          ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
        return {Want::kNothing, net::ssl::error::stream_truncated};
      }
      return {Want::kNothing, error_code(static_cast<int>(e), net::error::get_ssl_category())};
    }
  }
}

TlsStream::Step TlsStream::HandshakeStep(handshake_type type) {
  Bind();
  if (SSL_get_state(ssl_) == TLS_ST_BEFORE) {  // not started: which side this is
    if (type == net::ssl::stream_base::client) {
      SSL_set_connect_state(ssl_);
    } else {
      SSL_set_accept_state(ssl_);
    }
  }
  ClearErrors();
  errno = 0;
  int r = SSL_do_handshake(ssl_);
  return r == 1 ? Step{} : Classify(r);
}

TlsStream::Step TlsStream::ShutdownStep() {
  Bind();
  ClearErrors();
  errno = 0;
  int r = SSL_shutdown(ssl_);
  if (r == 1) return {};
  if (r == 0) return {Want::kRead, {}};  // ours is out; the peer's is awaited
  Step s = Classify(r);
  // The peer closed the connection, or sent data after all: either way
  // there is nothing more to wait for.
  if (s.want == Want::kNothing && s.ec == net::ssl::error::stream_truncated) return {};
  return s;
}

TlsStream::Step TlsStream::ReadStep(net::mutable_buffer b, std::size_t& n) {
  n = 0;
  if (b.size() == 0) return {};
  Bind();
  ClearErrors();
  errno = 0;
  int r = SSL_read_ex(ssl_, b.data(), b.size(), &n);
  return r == 1 ? Step{} : Classify(r);
}

// A record at a time (partial writes), until the buffer is written or the
// socket is full: the records before a full socket count as written, and
// the one it took in part is finished by the next write.
TlsStream::Step TlsStream::WriteStep(net::const_buffer b, std::size_t& n) {
  n = 0;
  if (b.size() == 0) return {};
  Bind();
  const char* data = static_cast<const char*>(b.data());
  while (n < b.size()) {
    ClearErrors();
    errno = 0;
    std::size_t written = 0;
    int r = SSL_write_ex(ssl_, data + n, b.size() - n, &written);
    if (r != 1) {
      Step s = Classify(r);
      return n > 0 && s.want != Want::kNothing ? Step{} : s;
    }
    n += written;
  }
  return {};
}

error_code TlsStream::Poll(Want want) {
  pollfd p{socket_.native_handle(), static_cast<short>(want == Want::kRead ? POLLIN : POLLOUT), 0};
  for (;;) {
    int r = ::poll(&p, 1, -1);
    if (r >= 0) return {};
    if (errno != EINTR) return error_code(errno, boost::system::system_category());
  }
}

char* TlsStream::Scratch() {
  thread_local char scratch[kRecord];
  return scratch;
}

void teardown(boost::beast::role_type, TlsStream& stream, error_code& ec) { stream.shutdown(ec); }

}  // namespace flotilla
