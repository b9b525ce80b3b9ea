// The admin endpoint and API faults of a member (admin.h).
#include "member/admin.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <thread>

#include "apiserver/request_info.h"
#include "apiserver/responses.h"
#include "base/io.h"
#include "base/mutex.h"
#include "member/object_util.h"

namespace flotilla::member {
namespace {

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) parts.emplace_back(path.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

std::string FormatDuration(Duration d) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms";
}

bool IsMaster(const apiserver::UserInfo& user) {
  return std::find(user.groups.begin(), user.groups.end(), apiserver::kGroupMasters) !=
         user.groups.end();
}

}  // namespace

std::optional<int64_t> ParseMilliCpu(std::string_view text) {
  if (text.empty()) return std::nullopt;
  bool milli = text.back() == 'm';
  if (milli) text.remove_suffix(1);
  if (text.empty() || text.find_first_not_of("0123456789.") != std::string_view::npos) {
    return std::nullopt;
  }
  double value = std::strtod(std::string(text).c_str(), nullptr);
  return static_cast<int64_t>(std::ceil(milli ? value : value * 1000));
}

void Faults::Set(Mode mode, Duration latency) {
  latency_ = mode == Mode::kSlow ? latency.count() : 0;
  mode_ = mode;
}

json::object Faults::State() const {
  Mode m = mode_;
  json::object api{{"mode", m == Mode::kHealthy       ? "healthy"
                            : m == Mode::kUnavailable ? "unavailable"
                                                      : "slow"}};
  if (m == Mode::kSlow) api["latency"] = FormatDuration(latency());
  return api;
}

void Faults::SetRejection(std::optional<Rejection> rule) {
  MutexLock lock(reject_mu_);
  rejection_ = std::move(rule);
  rejecting_ = rejection_.has_value();
}

std::optional<json::object> Faults::RejectionState() const {
  MutexLock lock(reject_mu_);
  if (!rejection_) return std::nullopt;
  json::object state{{"verb", rejection_->verb}, {"resource", rejection_->resource}};
  if (!rejection_->ns.empty()) state["namespace"] = rejection_->ns;
  return state;
}

bool Faults::Rejects(const apiserver::Request& req, std::string* message) const {
  if (!rejecting_) return false;
  apiserver::RequestInfo info = apiserver::ParseRequestInfo(req);
  if (!info.resource_request || info.is_discovery) return false;
  MutexLock lock(reject_mu_);
  if (!rejection_) return false;
  const Rejection& r = *rejection_;
  std::string_view resource = r.resource;
  std::string_view sub;
  if (size_t slash = resource.find('/'); slash != std::string_view::npos) {
    sub = resource.substr(slash + 1);
    resource = resource.substr(0, slash);
  }
  std::string_view group;
  if (size_t dot = resource.find('.'); dot != std::string_view::npos) {
    group = resource.substr(dot + 1);
    resource = resource.substr(0, dot);
  }
  if ((r.verb != "*" && r.verb != info.verb) || info.resource != resource ||
      (!group.empty() && info.group != group) || info.subresource != sub ||
      (!r.ns.empty() && info.ns != r.ns)) {
    return false;
  }
  std::string qualified = info.group.empty() ? info.resource : info.resource + "." + info.group;
  if (!info.subresource.empty()) qualified += "/" + info.subresource;
  *message = qualified + (info.name.empty() ? "" : " \"" + info.name + "\"") +
             " is forbidden: " + info.verb + " of resource \"" + info.resource + "\"" +
             (info.ns.empty() ? "" : " in the namespace \"" + info.ns + "\"") +
             " is rejected (injected fault)";
  return true;
}

bool Faults::Filter(apiserver::Request& req, apiserver::Responder& resp) {
  if (req.path.rfind(kAdminPrefix, 0) == 0) return false;
  if (std::string message; Rejects(req, &message)) {
    apiserver::RespondStatus(resp, Status::Forbidden(message));
    return true;
  }
  switch (mode_.load()) {
    case Mode::kHealthy:
      return false;
    case Mode::kUnavailable:
      apiserver::RespondStatus(
          resp, Status::Unavailable("the member's API is unavailable (injected fault)"));
      return true;
    case Mode::kSlow:
      // Real time on purpose: the fault is latency a client measures.
      ScopedBlocking blocking;
      std::this_thread::sleep_for(latency());
      return false;
  }
  return false;
}

Admin::Admin(std::string name, client::Client& client, Clock& clock, WorkloadDemand& demand,
             Faults& faults, const SimulationOptions& options)
    : name_(std::move(name)),
      client_(client),
      clock_(clock),
      demand_(demand),
      faults_(faults),
      options_(options) {}

bool Admin::Handle(apiserver::Request& req, const apiserver::UserInfo& user,
                   apiserver::Responder& resp) {
  if (req.path.rfind(kAdminPrefix, 0) != 0) return false;
  if (!IsMaster(user)) {
    apiserver::RespondStatus(
        resp, Status::Forbidden("forbidden: User \"" + user.name + "\" cannot " +
                                (req.method == "GET" ? "get" : "use") + " path \"" + req.path +
                                "\": the member's admin endpoint needs group system:masters"));
    return true;
  }
  json::object body;
  if (!req.body.empty()) {
    auto parsed = ParseJsonObject(req.body);
    if (!parsed.ok()) {
      apiserver::RespondStatus(
          resp, Status::BadRequest("the body is not a JSON object: " + parsed.status().message()));
      return true;
    }
    body = std::move(*parsed);
  }
  auto result = Serve(req, body);
  if (!result.ok()) {
    apiserver::RespondStatus(resp, result.status());
  } else {
    apiserver::RespondJson(resp, result->first, json::serialize(result->second));
  }
  return true;
}

StatusOr<std::pair<int, json::object>> Admin::Serve(const apiserver::Request& req,
                                                    const json::object& body) {
  std::vector<std::string> p = Split(req.path.substr(kAdminPrefix.size()));
  const std::string& m = req.method;
  auto ok = [](StatusOr<json::object> r, int code = 200) -> StatusOr<std::pair<int, json::object>> {
    if (!r.ok()) return r.status();
    return std::make_pair(code, std::move(*r));
  };
  if (p.empty() || p[0] != "v1") return Status::NotFound("no such admin path: " + req.path);
  p.erase(p.begin());
  if (p.size() == 1 && p[0] == "state" && m == "GET") return ok(State());
  if (p.size() == 1 && p[0] == "api" && m == "POST") return ok(SetApi(body));
  if (p.size() == 1 && p[0] == "reject" && m == "POST") return ok(SetRejection(body));
  if (p.size() == 1 && p[0] == "reject" && m == "DELETE") {
    faults_.SetRejection(std::nullopt);
    return ok(State());
  }
  if (p.size() == 1 && p[0] == "demand" && m == "POST") return ok(SetDemand(body));
  if (p.size() == 1 && p[0] == "nodes" && m == "POST") return ok(AddNode(body), 201);
  if (p.size() == 2 && p[0] == "nodes" && m == "PATCH") return ok(SetNode(p[1], body));
  if (p.size() == 2 && p[0] == "nodes" && m == "DELETE") return ok(RemoveNode(p[1]));
  if (p.size() == 4 && p[0] == "pods" && p[3] == "fail" && m == "POST") {
    return ok(FailPod(p[1], p[2], body));
  }
  if (p.size() == 4 && p[0] == "pods" && p[3] == "crash" && m == "POST") {
    return ok(CrashPod(p[1], p[2]));
  }
  return Status::NotFound("no such admin operation: " + m + " " + req.path);
}

json::object Admin::State() const {
  json::object state{{"name", name_}, {"api", faults_.State()}};
  if (auto rejection = faults_.RejectionState()) state["reject"] = std::move(*rejection);
  return state;
}

StatusOr<json::object> Admin::SetRejection(const json::object& body) {
  static const std::set<std::string> kVerbs = {
      "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "*"};
  Rejection rule{FieldString(body, "verb"), FieldString(body, "resource"),
                 FieldString(body, "namespace")};
  if (kVerbs.count(rule.verb) == 0) {
    return Status::BadRequest("verb: Unsupported value: \"" + rule.verb +
                              "\": supported values: get, list, watch, create, update, patch, "
                              "delete, deletecollection, *");
  }
  if (rule.resource.empty()) return Status::BadRequest("resource: Required value");
  faults_.SetRejection(std::move(rule));
  return State();
}

StatusOr<json::object> Admin::SetApi(const json::object& body) {
  std::string mode = FieldString(body, "mode");
  if (mode == "healthy") {
    faults_.Set(Faults::Mode::kHealthy);
  } else if (mode == "unavailable") {
    faults_.Set(Faults::Mode::kUnavailable);
  } else if (mode == "slow") {
    std::string text = FieldString(body, "latency");
    auto latency = ParseGoDuration(text.empty() ? "1s" : text);
    if (!latency) return Status::BadRequest("latency: invalid duration \"" + text + "\"");
    faults_.Set(Faults::Mode::kSlow, *latency);
  } else {
    return Status::BadRequest("mode: Unsupported value: \"" + mode +
                              "\": supported values: \"healthy\", \"unavailable\", \"slow\"");
  }
  return State();
}

StatusOr<json::object> Admin::SetDemand(const json::object& body) {
  std::string kind = FieldString(body, "kind");
  std::string ns = FieldString(body, "namespace");
  std::string name = FieldString(body, "name");
  std::string cpu = FieldString(body, "cpu");
  if (kind != "Deployment" && kind != "ReplicaSet" && kind != "StatefulSet") {
    return Status::BadRequest("kind: Unsupported value: \"" + kind +
                              "\": supported values: \"Deployment\", \"ReplicaSet\", "
                              "\"StatefulSet\"");
  }
  if (name.empty()) return Status::BadRequest("name: Required value");
  if (ns.empty()) ns = "default";
  auto milli = ParseMilliCpu(cpu);
  if (!milli) return Status::BadRequest("cpu: invalid quantity \"" + cpu + "\"");
  demand_.Set(kind, ns, name, *milli);
  return json::object{{"kind", kind}, {"namespace", ns}, {"name", name}, {"cpuMillicores", *milli}};
}

}  // namespace flotilla::member
