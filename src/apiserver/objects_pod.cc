// Objects: what kube-apiserver does for pods beyond the generic verbs: the
// pods/binding subresource the scheduler writes, and graceful deletion of
// pods that a kubelet runs (see objects.h).
#include <chrono>

#include "api/views.h"
#include "apiserver/meta.h"
#include "apiserver/objects.h"

namespace flotilla::apiserver {
namespace {

bool IsPods(const api::Resource& res) { return res.group.empty() && res.plural == "pods"; }

// Sets the PodScheduled condition to True, as podutil.UpdatePodCondition
// does: the transition time moves only when the status changes.
void MarkScheduled(json::object& pod, TimePoint now) {
  json::object& status = EnsureObject(pod, "status");
  json::value& conds = status["conditions"];
  if (!conds.is_array()) conds = json::array();
  for (json::value& c : conds.as_array()) {
    if (!c.is_object() || GetString(c.as_object(), "type").value_or("") != "PodScheduled") {
      continue;
    }
    json::object& cond = c.as_object();
    if (GetString(cond, "status").value_or("") != "True") {
      cond["lastTransitionTime"] = FormatRfc3339(now);
    }
    cond["status"] = "True";
    cond.erase("reason");
    cond.erase("message");
    return;
  }
  conds.as_array().push_back(json::object{{"type", "PodScheduled"},
                                          {"status", "True"},
                                          {"lastProbeTime", nullptr},
                                          {"lastTransitionTime", FormatRfc3339(now)}});
}

Status BindingConflict(std::string_view name, std::string_view why) {
  return Status::Conflict("Operation cannot be fulfilled on pods/binding \"" + std::string(name) +
                          "\": " + std::string(why));
}

}  // namespace

bool GracefulKind(const api::Resource& res) { return IsPods(res); }
bool HasBinding(const api::Resource& res) { return IsPods(res); }
bool HasLog(const api::Resource& res) { return IsPods(res); }

std::optional<int64_t> GracefulDeletePeriod(const api::Resource& res, const json::object& obj,
                                            const DeleteOptions& opts) {
  if (!GracefulKind(res)) return std::nullopt;
  const json::value* node = Find(obj, "spec.nodeName");
  if (node == nullptr || !node->is_string() || node->get_string().empty()) return 0;
  const json::value* phase = Find(obj, "status.phase");
  if (phase != nullptr && (*phase == "Failed" || *phase == "Succeeded")) return 0;
  int64_t period = 30;
  if (opts.grace_period_seconds) {
    period = *opts.grace_period_seconds;
  } else if (const json::value* spec = Find(obj, "spec.terminationGracePeriodSeconds");
             spec != nullptr && spec->is_int64()) {
    period = spec->as_int64();
  }
  // A negative period from a user means "as soon as possible but not
  // forced", which kube-apiserver turns into one second.
  return period < 0 ? 1 : period;
}

void ShortenGracePeriod(json::object& obj, int64_t period) {
  json::object& meta = MetaOf(obj);
  std::optional<int64_t> old = GetInt(meta, "deletionGracePeriodSeconds");
  if (old && period >= *old) return;
  TimePoint when;
  if (!ParseRfc3339(MetaString(obj, "deletionTimestamp"), &when)) return;
  when += std::chrono::seconds(period - old.value_or(0));
  meta["deletionTimestamp"] = FormatRfc3339(when);
  meta["deletionGracePeriodSeconds"] = period;
}

StatusOr<json::object> Objects::Bind(const api::Resource& res, const std::string& ns,
                                     const std::string& name, const json::object& binding,
                                     const WriteOptions& opts) {
  if (!IsPods(res)) return Status::NotFound("the server could not find the requested resource");
  std::string binding_name = MetaString(binding, "name");
  if (!binding_name.empty() && binding_name != name) {
    return Status::BadRequest("name in URL does not match name in Binding object");
  }
  const json::value* target_kind = Find(binding, "target.kind");
  const json::value* target_name = Find(binding, "target.name");
  std::string node = target_name != nullptr && target_name->is_string()
                         ? std::string(target_name->get_string())
                         : "";
  std::vector<StatusCause> causes;
  if (target_kind != nullptr && !(*target_kind == "" || *target_kind == "Node")) {
    std::string got = target_kind->is_string() ? std::string(target_kind->get_string()) : "";
    causes.push_back({"FieldValueNotSupported",
                      "Unsupported value: \"" + got + "\": supported values: \"Node\", \"<empty>\"",
                      "target.kind"});
  }
  if (node.empty()) causes.push_back({"FieldValueRequired", "Required value", "target.name"});
  if (!causes.empty()) {
    const api::Resource binding_res{.group = "", .version = "v1", .kind = "Binding"};
    return InvalidError(binding_res, name, std::move(causes));
  }
  std::string want_uid = MetaString(binding, "uid");
  Transform transform = [&](const json::object& current) -> StatusOr<json::object> {
    if (!want_uid.empty() && want_uid != MetaString(current, "uid")) {
      return BindingConflict(name, "Precondition failed: UID in precondition: " + want_uid +
                                       ", UID in object meta: " + MetaString(current, "uid"));
    }
    if (api::IsBeingDeleted(current)) {
      return BindingConflict(name,
                             "pod " + name + " is being deleted, cannot be assigned to a host");
    }
    const json::value* assigned = Find(current, "spec.nodeName");
    if (assigned != nullptr && assigned->is_string() && !assigned->get_string().empty()) {
      return BindingConflict(name, "pod " + name + " is already assigned to node \"" +
                                       std::string(assigned->get_string()) + "\"");
    }
    json::object pod = current;
    EnsureObject(pod, "spec")["nodeName"] = node;
    if (const json::value* annotations = Find(binding, "metadata.annotations");
        annotations != nullptr && annotations->is_object()) {
      json::object& mine = EnsureObject(MetaOf(pod), "annotations");
      for (const auto& [k, v] : annotations->as_object()) mine[k] = v;
    }
    MarkScheduled(pod, clock_.Now());
    return pod;
  };
  FLOTILLA_ASSIGN_OR_RETURN(json::object bound,
                            GuaranteedUpdate(res, ns, name, transform, true, opts));
  (void)bound;
  return json::object{{"kind", "Status"},
                      {"apiVersion", "v1"},
                      {"metadata", json::object()},
                      {"status", "Success"},
                      {"code", 201}};
}

}  // namespace flotilla::apiserver
