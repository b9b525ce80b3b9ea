// Passing one request on to a member and its answer back: what the
// cluster proxy (proxy.h) and an agent (flotilla agent, tunnel.h) both do.
#pragma once

#include <functional>

#include "apiserver/http.h"
#include "base/status.h"
#include "client/transport.h"

namespace flotilla::federation::cluster {

// Sends `request` over `transport` and answers `resp` with the response's
// status, Content-Type, Warnings and body. With `streams` (a watch, a
// followed log) the body streams to the caller as it arrives, holding no
// thread once the head is in, and the request ends when the caller goes;
// else it is one exchange. A request that gets no response is answered by
// `unreachable` with why.
void Forward(client::Transport& transport, client::ApiRequest request, bool streams,
             apiserver::Responder& resp, const std::function<void(const Status&)>& unreachable);

}  // namespace flotilla::federation::cluster
