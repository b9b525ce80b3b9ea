// The accept loop of the servers on the shared event loop (the API
// server's HTTPS, DNS over TCP).
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <functional>

namespace flotilla {

// Accepts connections on `acceptor` until `stopping` is set or the acceptor
// is closed, each socket on a strand of its own of SharedIoContext(), and
// hands each to `take` (which runs on the loop: it must not block). A
// failed accept (out of descriptors, say) waits 50 ms rather than spin.
// `acceptor` and `stopping` must outlive the coroutine.
boost::asio::awaitable<void> AcceptConnections(
    boost::asio::ip::tcp::acceptor& acceptor, const std::atomic<bool>& stopping,
    std::function<void(boost::asio::ip::tcp::socket)> take);

}  // namespace flotilla
