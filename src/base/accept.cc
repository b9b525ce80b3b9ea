#include "base/accept.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>

#include "base/io.h"

namespace flotilla {

namespace net = boost::asio;

boost::asio::awaitable<void> AcceptConnections(net::ip::tcp::acceptor& acceptor,
                                               const std::atomic<bool>& stopping,
                                               std::function<void(net::ip::tcp::socket)> take) {
  constexpr auto kAwait = net::as_tuple(net::use_awaitable);
  net::steady_timer backoff(acceptor.get_executor());
  while (!stopping) {
    auto strand = net::make_strand(SharedIoContext());
    auto [ec, socket] = co_await acceptor.async_accept(strand, kAwait);
    if (ec) {
      if (stopping || ec == net::error::operation_aborted) co_return;
      backoff.expires_after(std::chrono::milliseconds(50));
      co_await backoff.async_wait(kAwait);
      continue;
    }
    take(std::move(socket));
  }
}

}  // namespace flotilla
