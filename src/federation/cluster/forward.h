// Passing one request on to a member and its answer back: what the
// cluster proxy (proxy.h) and an agent (flotilla agent, tunnel.h) both do.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "apiserver/http.h"
#include "base/clock.h"
#include "base/status.h"
#include "client/kubeconfig.h"
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

// The headers of the caller's upgrade request (`headers`, names in lower
// case) that go on to the member: the upgrade's own (Upgrade, Connection,
// Sec-WebSocket-*, X-Stream-Protocol-Version), Origin and User-Agent; not
// the caller's credentials nor its Impersonate-*.
std::vector<std::pair<std::string, std::string>> UpgradeHeaders(
    const std::map<std::string, std::string>& headers);

// Passes an upgrade request (kubectl exec, attach, port-forward) on to a
// member: dials it with `config` (one connection of its own), sends
// `method path` with `headers`, and answers `resp` with the member's
// answer. A 101 switches the caller's connection too, and from then on the
// bytes go both ways between the caller and the member as they come, on
// the caller's connection's strand, holding no thread, until either side
// closes (the other is then closed). A member that cannot be reached is
// answered by `unreachable` with why; an answer that does not switch goes
// back as it is.
void ForwardUpgrade(const client::RestConfig& config, const std::string& method,
                    const std::string& path,
                    const std::vector<std::pair<std::string, std::string>>& headers,
                    Duration timeout, apiserver::Responder& resp,
                    const std::function<void(const Status&)>& unreachable);

}  // namespace flotilla::federation::cluster
