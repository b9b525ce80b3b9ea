// One streamed HTTPS request on the process's shared loop (base/io.h): the
// REST transport's watches, which hold no thread while they wait. Each has
// a connection of its own, as a watch over HTTP/1.1 has in client-go.
#pragma once

#include <functional>
#include <memory>

#include "base/clock.h"
#include "client/connection.h"
#include "client/endpoint.h"
#include "client/transport.h"

namespace flotilla::client {

struct HttpsStreamParams {
  std::shared_ptr<boost::asio::ssl::context> tls;
  Endpoint endpoint;
  http::request<http::string_body> request;
  // Bounds connecting, sending and reading the head (on the steady clock:
  // the loop's timers); zero means no bound. The body has none.
  Duration head_timeout = Duration::zero();
  // Names a failure as the REST client names it ("Get \"https://...\": ...").
  std::function<Status(const Status&)> describe;
};

// Starts the request; `sink` gets the response (transport.h). A stream the
// server closes, even mid-event, ends with OK, as in client-go.
std::shared_ptr<StreamCall> StartHttpsStream(HttpsStreamParams params,
                                             std::shared_ptr<AsyncStreamSink> sink);

}  // namespace flotilla::client
