// Passing one request on to a member and its answer back: what the
// cluster proxy (proxy.h) and an agent (flotilla agent, tunnel.h) both do.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "apiserver/http.h"
#include "base/clock.h"
#include "base/http2.h"
#include "base/status.h"
#include "client/kubeconfig.h"
#include "client/transport.h"
#include "client/upgrade.h"

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
    const apiserver::HeaderMap& headers);

// One of two upgraded connections whose bytes go both ways between them
// (Splice): a server's connection that switched (http2::Upgraded) or one
// dialled (client::Switched).
struct SpliceEnd {
  std::shared_ptr<void> owner;  // keeps `stream` alive
  http2::TlsStream* stream = nullptr;
  std::string received;  // bytes read past the 101, for the other end first
  // Called once the splice is done with the stream; null: the splice
  // closes it.
  std::function<void()> done;
};
SpliceEnd EndOf(http2::Upgraded up);
SpliceEnd EndOf(std::shared_ptr<client::Switched> switched);

// Copies the bytes of `a` to `b` and of `b` to `a` as they come, on `a`'s
// strand, holding no thread, until either side closes; then both are shut
// and closed (or given back, `done`).
void Splice(SpliceEnd a, SpliceEnd b);
// Shuts `end` down and closes it (or gives it back), unspliced.
void CloseEnd(const SpliceEnd& end);

// Answers `resp` with a 101 carrying the upgrade's headers of `switched`
// (a member's 101, names in lower case) and splices the caller's
// connection with `other`. A caller that cannot switch (HTTP/2) is
// answered 400 and `other` closed.
void SwitchAndSplice(apiserver::Responder& resp,
                     const std::vector<std::pair<std::string, std::string>>& switched,
                     SpliceEnd other);

// Answers `resp` with a member's answer to an upgrade that did not
// switch, as it is: its code, body, Content-Type and Warnings.
void RespondUnswitched(apiserver::Responder& resp, client::UpgradeAnswer answer);

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
