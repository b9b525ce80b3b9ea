// The simulated containers' logs (pod_logs.h).
#include "member/kubelet/pod_logs.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "apiserver/responses.h"
#include "base/mutex.h"
#include "base/timer.h"

namespace flotilla::member::kubelet {
namespace {

using std::chrono::seconds;

const json::array* ArrayAt(const json::object& o, std::string_view path) {
  const json::value* v = Find(o, path);
  return v != nullptr && v->is_array() ? &v->get_array() : nullptr;
}

// The element of `list` (objects) whose "name" is `name`.
const json::object* Named(const json::array* list, std::string_view name) {
  if (list == nullptr) return nullptr;
  for (const json::value& v : *list) {
    if (v.is_object() && StringAt(v.get_object(), "name") == name) return &v.get_object();
  }
  return nullptr;
}

std::optional<TimePoint> TimeAt(const json::object& o, std::string_view path) {
  TimePoint t;
  std::string s = StringAt(o, path);
  if (s.empty() || !ParseRfc3339(s, &t)) return std::nullopt;
  return t;
}

// Words of a JSON array of strings, space-separated.
std::string Words(const json::object& o, std::string_view path) {
  std::string out;
  if (const json::array* a = ArrayAt(o, path)) {
    for (const json::value& v : *a) {
      if (!v.is_string()) continue;
      if (!out.empty()) out += ' ';
      out += std::string_view(v.get_string());
    }
  }
  return out;
}

// Go's time.Duration String for whole seconds: "45s", "3m0s", "2h5m0s".
std::string GoDuration(int64_t secs) {
  std::string out;
  if (secs >= 3600) out += std::to_string(secs / 3600) + "h";
  if (secs >= 60) out += std::to_string(secs / 60 % 60) + "m";
  return out + std::to_string(secs % 60) + "s";
}

// A probe's port: a number, or a container port's name resolved.
std::string ProbePort(const json::value* port, const json::object& container) {
  if (port == nullptr) return "";
  if (port->is_int64()) return std::to_string(port->get_int64());
  if (!port->is_string()) return "";
  const json::object* named = Named(ArrayAt(container, "ports"), port->get_string());
  return named != nullptr ? std::to_string(IntAt(*named, "containerPort"))
                          : std::string(port->get_string());
}

// The line of one successful probe of `probe` (a readinessProbe or
// livenessProbe object), `kind` "readiness" or "liveness".
std::string ProbeLine(const json::object& probe, const char* kind, const ContainerRun& run) {
  std::string ip = run.pod_ip.empty() ? "127.0.0.1" : run.pod_ip;
  std::string what;
  if (const json::value* http = probe.if_contains("httpGet"); http && http->is_object()) {
    const json::object& h = http->get_object();
    std::string scheme = StringAt(h, "scheme");
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string host = StringAt(h, "host");
    std::string path = StringAt(h, "path");
    what = "GET " + (scheme.empty() ? std::string("http") : scheme) + "://" +
           (host.empty() ? ip : host) + ":" + ProbePort(h.if_contains("port"), run.spec) +
           (path.empty() ? "/" : path) + ": 200 OK";
  } else if (const json::value* tcp = probe.if_contains("tcpSocket"); tcp && tcp->is_object()) {
    what = "TCP " + ip + ":" + ProbePort(tcp->get_object().if_contains("port"), run.spec) +
           ": connected";
  } else if (const json::value* exec = probe.if_contains("exec"); exec && exec->is_object()) {
    what = "exec [" + Words(exec->get_object(), "command") + "]: exit 0";
  } else if (const json::value* grpc = probe.if_contains("grpc"); grpc && grpc->is_object()) {
    what = "gRPC " + ip + ":" + ProbePort(grpc->get_object().if_contains("port"), run.spec) +
           " health: SERVING";
  } else {
    what = "ok";
  }
  return what + " (" + kind + " probe)";
}

// When the periodic lines come and what they say.
struct Ticks {
  TimePoint first;
  Duration period;
  std::string probe_kind;  // "": no probe, the running-for line
  const json::object* probe = nullptr;
};

Ticks TicksOf(const ContainerRun& run) {
  for (const char* kind : {"readiness", "liveness"}) {
    const json::value* p = run.spec.if_contains(std::string(kind) + "Probe");
    if (p == nullptr || !p->is_object()) continue;
    const json::object& probe = p->get_object();
    int64_t period = std::max<int64_t>(1, IntAt(probe, "periodSeconds", 10));
    int64_t delay = std::max<int64_t>(0, IntAt(probe, "initialDelaySeconds", 0));
    return {run.started + seconds(delay), seconds(period), kind, &probe};
  }
  return {run.started + seconds(60), seconds(60), "", nullptr};
}

std::string TickLine(const Ticks& ticks, const ContainerRun& run, TimePoint at) {
  if (ticks.probe != nullptr) return ProbeLine(*ticks.probe, ticks.probe_kind.c_str(), run);
  int64_t secs = std::chrono::duration_cast<seconds>(at - run.started).count();
  return "[flotilla-sim] container \"" + run.container + "\" running for " + GoDuration(secs);
}

// RFC 3339 with nanoseconds, as the kubelet's timestamps=true writes.
std::string Timestamp(TimePoint t) {
  std::string s = FormatRfc3339(t);  // "...:SSZ"
  auto since = t.time_since_epoch();
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   since - std::chrono::duration_cast<seconds>(since))
                   .count();
  char frac[16];
  std::snprintf(frac, sizeof(frac), ".%09lld", static_cast<long long>(nanos));
  return s.substr(0, s.size() - 1) + frac + "Z";
}

struct LogQuery {
  std::string container;
  bool previous = false, timestamps = false, follow = false;
  std::optional<int64_t> tail_lines, since_seconds, limit_bytes;
  std::optional<TimePoint> since_time;
};

// The query as kube validates PodLogOptions: 422 naming the field.
StatusOr<LogQuery> ParseQuery(const apiserver::Request& req, const std::string& pod) {
  LogQuery q;
  q.container = req.Query("container");
  q.previous = req.QueryBool("previous");
  q.timestamps = req.QueryBool("timestamps");
  q.follow = req.QueryBool("follow");
  auto invalid = [&](const std::string& field, const std::string& value, const std::string& why) {
    return Status::Invalid("PodLogOptions \"" + pod + "\" is invalid: " + field +
                               ": Invalid value: " + value + ": " + why,
                           {{"FieldValueInvalid", why, field}});
  };
  auto integer = [&](const char* field, int64_t min, std::optional<int64_t>* out) -> Status {
    if (!req.HasQuery(field)) return Status::Ok();
    std::string text = req.Query(field);
    char* end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0') {
      return Status::BadRequest("invalid " + std::string(field) + " \"" + text + "\"");
    }
    if (v < min) {
      return invalid(field, text, "must be greater than or equal to " + std::to_string(min));
    }
    *out = v;
    return Status::Ok();
  };
  FLOTILLA_RETURN_IF_ERROR(integer("tailLines", 0, &q.tail_lines));
  FLOTILLA_RETURN_IF_ERROR(integer("sinceSeconds", 1, &q.since_seconds));
  FLOTILLA_RETURN_IF_ERROR(integer("limitBytes", 1, &q.limit_bytes));
  if (req.HasQuery("sinceTime")) {
    TimePoint t;
    if (!ParseRfc3339(req.Query("sinceTime"), &t)) {
      return Status::BadRequest("invalid sinceTime \"" + req.Query("sinceTime") + "\"");
    }
    q.since_time = t;
  }
  if (q.since_time && q.since_seconds) {
    return invalid("sinceSeconds", std::to_string(*q.since_seconds),
                   "at most one of `sinceTime` or `sinceSeconds` may be specified");
  }
  return q;
}

std::string Render(const std::vector<LogLine>& lines, size_t skip, bool timestamps) {
  std::string out;
  for (size_t i = skip; i < lines.size(); ++i) {
    if (timestamps) out += Timestamp(lines[i].at) + " ";
    out += lines[i].text;
    out += '\n';
  }
  return out;
}

// A followed log: every second, the lines whose time has come, until the
// container ends or restarts, its pod goes, or the reader leaves.
class Follower : public std::enable_shared_from_this<Follower> {
 public:
  Follower(Clock& clock, ContainerRun run, LogQuery q,
           std::function<StatusOr<json::object>()> reread,
           std::shared_ptr<apiserver::ChunkStream> out, TimePoint next_from)
      : clock_(clock),
        run_(std::move(run)),
        query_(std::move(q)),
        reread_(std::move(reread)),
        out_(std::move(out)),
        next_from_(next_from) {}

  void Start() {
    std::weak_ptr<Follower> weak = weak_from_this();
    timer_ = std::make_unique<Timer>(clock_, [weak] {
      if (auto self = weak.lock()) self->Tick();
    });
    std::shared_ptr<apiserver::ChunkStream> out;
    {
      MutexLock lock(mu_);
      out = out_;
    }
    timer_->ArmAfter(seconds(1));
    out->OnEnd([self = shared_from_this()] { self->Stop(); });
  }

 private:
  void Tick() {
    auto pod = reread_();
    std::optional<ContainerRun> now_run;
    if (pod.ok()) {
      auto r = RunOf(*pod, run_.container, false);
      if (r.ok() && r->started == run_.started) now_run = std::move(*r);
    }
    TimePoint to = clock_.Now() + Duration(1);
    bool ends = !now_run || now_run->finished.has_value();
    if (now_run) run_ = std::move(*now_run);
    MutexLock lock(mu_);
    if (out_ == nullptr) return;
    std::string text = Render(LinesBetween(run_, next_from_, to), 0, query_.timestamps);
    next_from_ = to;
    if (query_.limit_bytes) {
      if (static_cast<int64_t>(text.size()) >= *query_.limit_bytes) {
        text.resize(static_cast<size_t>(*query_.limit_bytes));
        ends = true;
      }
      *query_.limit_bytes -= static_cast<int64_t>(text.size());
    }
    if (!text.empty() && !out_->Write(std::move(text))) ends = true;
    if (ends) {
      std::exchange(out_, nullptr)->End();
      return;
    }
    timer_->ArmAfter(seconds(1));
  }

  void Stop() {
    if (timer_) timer_->Cancel();
    MutexLock lock(mu_);
    out_.reset();
  }

  Clock& clock_;
  ContainerRun run_;  // the timer's thread only
  LogQuery query_;    // the timer's thread only
  std::function<StatusOr<json::object>()> reread_;
  std::unique_ptr<Timer> timer_;
  Mutex mu_;
  std::shared_ptr<apiserver::ChunkStream> out_ GUARDED_BY(mu_);
  TimePoint next_from_;  // the timer's thread only
};

}  // namespace

void FollowLines(Clock& clock, ContainerRun run, std::function<StatusOr<json::object>()> reread,
                 std::shared_ptr<apiserver::ChunkStream> out, TimePoint from) {
  std::make_shared<Follower>(clock, std::move(run), LogQuery{}, std::move(reread), std::move(out),
                             from)
      ->Start();
}

StatusOr<ContainerRun> RunOf(const json::object& pod, const std::string& container, bool previous) {
  ContainerRun run;
  run.pod = StringAt(pod, "metadata.name");
  const json::array* containers = ArrayAt(pod, "spec.containers");
  std::string name = container;
  if (name.empty()) {
    if (containers != nullptr && containers->size() == 1 && containers->front().is_object()) {
      name = StringAt(containers->front().get_object(), "name");
    } else {
      std::string names;
      for (const json::value& c : containers ? *containers : json::array()) {
        if (!c.is_object()) continue;
        names += (names.empty() ? "" : " ") + StringAt(c.get_object(), "name");
      }
      return Status::BadRequest("a container name must be specified for pod " + run.pod +
                                ", choose one of: [" + names + "]");
    }
  }
  const json::object* spec = Named(containers, name);
  const json::object* status = Named(ArrayAt(pod, "status.containerStatuses"), name);
  if (spec == nullptr) {
    spec = Named(ArrayAt(pod, "spec.initContainers"), name);
    status = Named(ArrayAt(pod, "status.initContainerStatuses"), name);
  }
  if (spec == nullptr) {
    return Status::BadRequest("container " + name + " is not valid for pod " + run.pod);
  }
  run.container = name;
  run.spec = *spec;
  run.node = StringAt(pod, "spec.nodeName");
  run.pod_ip = StringAt(pod, "status.podIP");
  std::string state_path = previous ? "lastState" : "state";
  const json::object* state = nullptr;
  if (status != nullptr) {
    if (const json::value* s = Find(*status, state_path); s && s->is_object()) {
      state = &s->get_object();
    }
  }
  if (previous) {
    auto started = state ? TimeAt(*state, "terminated.startedAt") : std::nullopt;
    auto finished = state ? TimeAt(*state, "terminated.finishedAt") : std::nullopt;
    if (!started || !finished) {
      return Status::BadRequest("previous terminated container \"" + name + "\" in pod \"" +
                                run.pod + "\" not found");
    }
    run.started = *started;
    run.finished = *finished;
    run.exit_code = IntAt(*state, "terminated.exitCode");
    run.reason = StringAt(*state, "terminated.reason");
    return run;
  }
  if (auto started = state ? TimeAt(*state, "running.startedAt") : std::nullopt) {
    run.started = *started;
    return run;
  }
  if (auto started = state ? TimeAt(*state, "terminated.startedAt") : std::nullopt) {
    run.started = *started;
    run.finished = TimeAt(*state, "terminated.finishedAt").value_or(*started);
    run.exit_code = IntAt(*state, "terminated.exitCode");
    run.reason = StringAt(*state, "terminated.reason");
    return run;
  }
  std::string waiting = state ? StringAt(*state, "waiting.reason") : "";
  return Status::BadRequest(
      "container \"" + name + "\" in pod \"" + run.pod +
      "\" is waiting to start: " + (waiting.empty() ? "ContainerCreating" : waiting));
}

std::vector<LogLine> LinesBetween(const ContainerRun& run, TimePoint from, TimePoint to) {
  std::vector<LogLine> lines;
  auto in = [&](TimePoint t) { return t >= from && t < to; };
  if (in(run.started)) {
    std::string image = StringAt(run.spec, "image");
    lines.push_back({run.started, "[flotilla-sim] container \"" + run.container +
                                      "\" started: image " + image +
                                      (run.node.empty() ? "" : ", node " + run.node)});
    std::string exec = Words(run.spec, "command");
    std::string args = Words(run.spec, "args");
    if (!args.empty()) exec += (exec.empty() ? "" : " ") + args;
    if (!exec.empty()) lines.push_back({run.started, "[flotilla-sim] exec: " + exec});
  }
  Ticks ticks = TicksOf(run);
  TimePoint end = run.finished ? std::min(to, *run.finished) : to;
  TimePoint begin = std::max(from, ticks.first);
  if (begin < end) {
    auto period = ticks.period.count();
    int64_t first = std::chrono::duration_cast<Duration>(begin - ticks.first).count() / period;
    if (ticks.first + Duration(first * period) < begin) ++first;
    int64_t last = std::chrono::duration_cast<Duration>(end - ticks.first).count() / period;
    if (ticks.first + Duration(last * period) >= end) --last;
    first = std::max<int64_t>(first, last - static_cast<int64_t>(kMaxLines) + 1);
    for (int64_t k = first; k <= last; ++k) {
      TimePoint at = ticks.first + Duration(k * period);
      lines.push_back({at, TickLine(ticks, run, at)});
    }
  }
  if (run.finished && in(*run.finished)) {
    lines.push_back({*run.finished, "[flotilla-sim] container \"" + run.container +
                                        "\" exited with code " + std::to_string(run.exit_code) +
                                        (run.reason.empty() ? "" : " (" + run.reason + ")")});
  }
  if (lines.size() > kMaxLines) lines.erase(lines.begin(), lines.end() - kMaxLines);
  return lines;
}

void PodLogs::Serve(apiserver::Request& req, const json::object& pod,
                    std::function<StatusOr<json::object>()> reread, apiserver::Responder& resp) {
  std::string name = StringAt(pod, "metadata.name");
  auto query = ParseQuery(req, name);
  if (!query.ok()) return apiserver::RespondStatus(resp, query.status(), name);
  auto run = RunOf(pod, query->container, query->previous);
  if (!run.ok()) return apiserver::RespondStatus(resp, run.status(), name);
  TimePoint now = clock_.Now();
  TimePoint from = run->started;
  if (query->since_seconds) from = std::max(from, now - seconds(*query->since_seconds));
  if (query->since_time) from = std::max(from, *query->since_time);
  TimePoint to = now + Duration(1);
  std::vector<LogLine> lines = LinesBetween(*run, from, to);
  size_t skip = 0;
  if (query->tail_lines && lines.size() > static_cast<size_t>(*query->tail_lines)) {
    skip = lines.size() - static_cast<size_t>(*query->tail_lines);
  }
  std::string text = Render(lines, skip, query->timestamps);
  bool full = false;
  if (query->limit_bytes) {
    full = static_cast<int64_t>(text.size()) >= *query->limit_bytes;
    if (full) text.resize(static_cast<size_t>(*query->limit_bytes));
    *query->limit_bytes -= static_cast<int64_t>(text.size());
  }
  const apiserver::Headers headers{{"Content-Type", "text/plain"}};
  if (!query->follow || run->finished || full) return resp.Respond(200, headers, std::move(text));
  std::shared_ptr<apiserver::ChunkStream> out = resp.StartAsyncStream(200, headers);
  if (out == nullptr) return;
  if (!text.empty() && !out->Write(std::move(text))) return;
  auto follower = std::make_shared<Follower>(clock_, std::move(*run), std::move(*query),
                                             std::move(reread), std::move(out), to);
  follower->Start();
}

}  // namespace flotilla::member::kubelet
