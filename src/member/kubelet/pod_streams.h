// What the simulated kubelet serves of pods/exec and pods/attach
// (ApiServerOptions::pod_connect, docs/member.md "Exec and attach"): the
// Kubernetes streaming protocol over a WebSocket, as kube-apiserver serves
// it to kubectl 1.30 and later and to the official clients.
//
// The request is kube's: GET with `Upgrade: websocket` and the
// subprotocols v5.channel.k8s.io or v4.channel.k8s.io offered
// (Sec-WebSocket-Protocol; v5 is chosen when offered), and the query
// `command` (repeated; exec only), `container`, `stdin`, `stdout`,
// `stderr`, `tty`. Each binary message is one channel's bytes after a
// channel byte: 0 stdin, 1 stdout, 2 stderr, 3 the outcome (a
// metav1.Status: Success, or Failure NonZeroExitCode with the exit code as
// its cause), 4 a terminal resize (ignored); with v5 the client ends stdin
// with the message {255, 0}. The server sends the outcome and closes.
//
// exec runs the command as sim_process.h answers it; attach shows what the
// container's main process writes from now on (its log lines, pod_logs.h)
// until it ends or the client leaves. Errors come before the upgrade, as a
// Status, with kube's words: a container that is not running, a pod that
// completed, no command, no stream asked for, a request that is not a
// WebSocket upgrade (400 "Upgrade request required"), SPDY (kubectl falls
// back to it only when the WebSocket upgrade fails), an unknown
// subprotocol. portforward is 400: a simulated container has no network
// stack to forward to.
//
// Thread-safe.
#pragma once

#include <functional>
#include <string>

#include "apiserver/api_server.h"
#include "base/clock.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::member::kubelet {

// The streaming subprotocols served, most preferred first.
inline constexpr const char* kStreamProtocolV5 = "v5.channel.k8s.io";
inline constexpr const char* kStreamProtocolV4 = "v4.channel.k8s.io";

class PodStreams {
 public:
  explicit PodStreams(Clock& clock) : clock_(clock) {}
  // `reread` reads the pod again (an attach that must notice it going).
  void Serve(apiserver::Request& req, const std::string& subresource, const json::object& pod,
             std::function<StatusOr<json::object>()> reread, apiserver::Responder& resp);

 private:
  Clock& clock_;
};

}  // namespace flotilla::member::kubelet
