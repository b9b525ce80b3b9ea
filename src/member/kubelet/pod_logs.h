// What the simulated kubelet serves as a container's log (GET pods/NAME/log,
// ApiServerOptions::pod_logs): lines made from the pod as stored, so that
// they tell what the member did with it and a reader can check them
// against the pod.
//
// A container instance (the running one, or with previous=true the one
// that ended last) writes, each line at a time on the member's clock:
//   at its start:   [flotilla-sim] container "web" started: image nginx:1.27, node n1
//                   [flotilla-sim] exec: nginx -g daemon off;   (its command and args)
//   then a line per probe period (the readiness probe's, else the
//   liveness probe's) from the probe's initial delay:
//                   GET http://10.244.0.3:8080/healthz: 200 OK (readiness probe)
//                   TCP 10.244.0.3:5432: connected (liveness probe)
//                   exec [cat /tmp/ready]: exit 0 (readiness probe)
//   or, with no probe, one a minute:
//                   [flotilla-sim] container "web" running for 3m0s
//   at its end:     [flotilla-sim] container "web" exited with code 1 (Error)
//
// The query is kubectl's: container (required when the pod has several,
// as in kube), previous, timestamps (RFC 3339 with nanoseconds, then a
// space), tailLines, sinceSeconds, sinceTime, limitBytes, follow. With
// follow the response streams each line when its time comes and ends when
// the container ends, restarts or its pod goes (or the reader leaves). A
// container that has not started is 400 `container "c" in pod "p" is
// waiting to start: ContainerCreating`, as kube answers. At most
// kMaxLines lines are kept, as a kubelet rotates its logs.
//
// Thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apiserver/api_server.h"
#include "base/clock.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::member::kubelet {

inline constexpr size_t kMaxLines = 10000;

struct LogLine {
  TimePoint at;
  std::string text;
};

// One container instance as its log sees it.
struct ContainerRun {
  std::string pod, container;
  json::object spec;  // the container's spec
  std::string node, pod_ip;
  TimePoint started;
  std::optional<TimePoint> finished;  // set when it ended
  int64_t exit_code = 0;
  std::string reason;  // why it ended
};

// The instance `container` ("" when the pod has one) of `pod` names: the
// current one, or the last that ended with `previous`. BadRequest with
// kube's words when there is no such container or it has not started.
StatusOr<ContainerRun> RunOf(const json::object& pod, const std::string& container, bool previous);

// The lines `run` wrote at times in [from, to), in order; the last
// kMaxLines of them when there are more.
std::vector<LogLine> LinesBetween(const ContainerRun& run, TimePoint from, TimePoint to);

// Writes to `out` the lines `run` writes from `from` on, each when its time
// comes on `clock`, until the container ends or restarts, its pod goes
// (`reread`), or `out` ends: a followed log, and what `kubectl attach`
// shows of a container's main process.
void FollowLines(Clock& clock, ContainerRun run, std::function<StatusOr<json::object>()> reread,
                 std::shared_ptr<apiserver::ChunkStream> out, TimePoint from);

// Serves pods/log (see the file comment) on `clock`.
class PodLogs {
 public:
  explicit PodLogs(Clock& clock) : clock_(clock) {}
  void Serve(apiserver::Request& req, const json::object& pod,
             std::function<StatusOr<json::object>()> reread, apiserver::Responder& resp);

 private:
  Clock& clock_;
};

}  // namespace flotilla::member::kubelet
