// The resource interpreter (interpreter.h).
#include "interpreter/interpreter.h"

#include <cctype>

namespace flotilla::interpreter {
namespace {

struct OperationInfo {
  std::string_view name, field, function;
};
constexpr OperationInfo kInfo[] = {
    {"InterpretReplica", "replicaResource", "GetReplicas"},
    {"ReviseReplica", "replicaRevision", "ReviseReplica"},
    {"Retain", "retention", "Retain"},
    {"AggregateStatus", "statusAggregation", "AggregateStatus"},
    {"InterpretStatus", "statusReflection", "ReflectStatus"},
    {"InterpretHealth", "healthInterpretation", "InterpretHealth"},
    {"InterpretDependency", "dependencyInterpretation", "GetDependencies"},
};
const OperationInfo& Info(Operation op) { return kInfo[static_cast<size_t>(op)]; }

std::string ScriptPath(Operation op) {
  return "spec.customizations." + std::string(Info(op).field) + ".luaScript";
}

// Runs the operation's function of `c`.
StatusOr<std::vector<json::value>> RunOperation(const Customization& c, Operation op,
                                                std::vector<json::value> args, int results,
                                                std::vector<const json::value*> references,
                                                EmptyAs empty_root, Limits limits) {
  if (!c.Has(op)) {
    return Status::Invalid("the customization " + c.name + " has no " +
                           std::string(Info(op).field) + " script");
  }
  auto out = Run({.script = c.Script(op),
                  .function = Info(op).function,
                  .args = std::move(args),
                  .results = results,
                  .references = std::move(references),
                  .empty_root = empty_root,
                  .limits = limits});
  if (!out.ok()) {
    return Status::Invalid(std::string(Info(op).function) + ": " +
                           std::string(out.status().message()));
  }
  return out;
}

StatusOr<json::object> ObjectResult(Operation op, const json::value& v) {
  if (!v.is_object()) {
    return Status::Invalid(std::string(Info(op).function) +
                           ": the script must return a table (an object)");
  }
  return v.get_object();
}

}  // namespace

std::string_view OperationName(Operation op) { return Info(op).name; }
std::string_view CustomizationField(Operation op) { return Info(op).field; }
std::string_view LuaFunction(Operation op) { return Info(op).function; }

std::optional<Operation> ParseOperation(std::string_view name) {
  for (Operation op : kOperations) {
    std::string_view want = Info(op).name;
    if (name.size() == want.size() && std::tolower(name[0]) == std::tolower(want[0]) &&
        name.substr(1) == want.substr(1)) {
      return op;
    }
  }
  return std::nullopt;
}

StatusOr<Customization> Read(const json::object& obj) {
  Customization c;
  c.name = StringAt(obj, "metadata.name");
  c.api_version = StringAt(obj, "spec.target.apiVersion");
  c.kind = StringAt(obj, "spec.target.kind");
  if (c.api_version.empty() || c.kind.empty()) {
    return Status::Invalid(
        "spec.target: the customization must name its target's apiVersion and kind");
  }
  for (Operation op : kOperations) {
    const json::value* script = Find(obj, ScriptPath(op));
    if (script == nullptr) continue;
    if (!script->is_string()) return Status::Invalid(ScriptPath(op) + ": must be a string");
    c.scripts[static_cast<size_t>(op)] = std::string(script->get_string());
  }
  return c;
}

std::vector<StatusCause> Validate(const json::object& obj, Limits limits) {
  std::vector<StatusCause> causes;
  for (const char* field : {"apiVersion", "kind"}) {
    std::string path = std::string("spec.target.") + field;
    if (StringAt(obj, path).empty()) {
      causes.push_back({"FieldValueRequired", "Required value", path});
    }
  }
  for (Operation op : kOperations) {
    const json::value* script = Find(obj, ScriptPath(op));
    if (script == nullptr) continue;
    if (!script->is_string() || script->get_string().empty()) {
      causes.push_back({"FieldValueRequired", "Required value", ScriptPath(op)});
      continue;
    }
    Status checked = Check(script->get_string(), Info(op).function, limits);
    if (!checked.ok()) {
      causes.push_back({"FieldValueInvalid", "Invalid value: " + std::string(checked.message()),
                        ScriptPath(op)});
    }
  }
  return causes;
}

StatusOr<Replicas> GetReplicas(const Customization& c, const json::object& obj, Limits limits) {
  json::value in = obj;
  FLOTILLA_ASSIGN_OR_RETURN(
      std::vector<json::value> out,
      RunOperation(c, Operation::kInterpretReplica, {in}, 2, {}, EmptyAs::kObject, limits));
  if (!out[0].is_int64()) {
    return Status::Invalid("GetReplicas: the replica count must be a number");
  }
  Replicas r{.replicas = out[0].get_int64()};
  if (out[1].is_object()) {
    r.requirements = out[1].get_object();
  } else if (!out[1].is_null()) {
    return Status::Invalid("GetReplicas: the requirements must be a table or nil");
  }
  return r;
}

StatusOr<json::object> ReviseReplica(const Customization& c, const json::object& obj,
                                     int64_t replicas, Limits limits) {
  json::value in = obj;
  FLOTILLA_ASSIGN_OR_RETURN(std::vector<json::value> out,
                            RunOperation(c, Operation::kReviseReplica, {in, replicas}, 1, {&in},
                                         EmptyAs::kObject, limits));
  return ObjectResult(Operation::kReviseReplica, out[0]);
}

StatusOr<json::object> Retain(const Customization& c, const json::object& desired,
                              const json::object& observed, Limits limits) {
  json::value d = desired, o = observed;
  FLOTILLA_ASSIGN_OR_RETURN(
      std::vector<json::value> out,
      RunOperation(c, Operation::kRetain, {d, o}, 1, {&d, &o}, EmptyAs::kObject, limits));
  return ObjectResult(Operation::kRetain, out[0]);
}

StatusOr<json::object> AggregateStatus(const Customization& c, const json::object& desired,
                                       const json::array& items, Limits limits) {
  json::value d = desired;
  FLOTILLA_ASSIGN_OR_RETURN(
      std::vector<json::value> out,
      RunOperation(c, Operation::kAggregateStatus, {d, items}, 1, {}, EmptyAs::kObject, limits));
  return ObjectResult(Operation::kAggregateStatus, out[0]);
}

StatusOr<json::value> ReflectStatus(const Customization& c, const json::object& observed,
                                    Limits limits) {
  json::value o = observed;
  FLOTILLA_ASSIGN_OR_RETURN(
      std::vector<json::value> out,
      RunOperation(c, Operation::kInterpretStatus, {o}, 1, {}, EmptyAs::kObject, limits));
  if (!out[0].is_object()) {
    return Status::Invalid("ReflectStatus: the script must return a table");
  }
  return out[0];
}

StatusOr<bool> InterpretHealth(const Customization& c, const json::object& observed,
                               Limits limits) {
  json::value o = observed;
  FLOTILLA_ASSIGN_OR_RETURN(
      std::vector<json::value> out,
      RunOperation(c, Operation::kInterpretHealth, {o}, 1, {}, EmptyAs::kObject, limits));
  if (!out[0].is_bool()) {
    return Status::Invalid("InterpretHealth: the script must return a boolean");
  }
  return out[0].get_bool();
}

StatusOr<json::array> GetDependencies(const Customization& c, const json::object& desired,
                                      Limits limits) {
  json::value d = desired;
  FLOTILLA_ASSIGN_OR_RETURN(
      std::vector<json::value> out,
      RunOperation(c, Operation::kInterpretDependency, {d}, 1, {}, EmptyAs::kArray, limits));
  if (!out[0].is_array()) {
    return Status::Invalid("GetDependencies: the script must return a list");
  }
  for (const json::value& ref : out[0].get_array()) {
    if (!ref.is_object() || StringAt(ref.get_object(), "apiVersion").empty() ||
        StringAt(ref.get_object(), "kind").empty()) {
      return Status::Invalid("GetDependencies: each dependency must have an apiVersion and a kind");
    }
  }
  return out[0].get_array();
}

StatusOr<std::vector<std::pair<std::string, json::value>>> Execute(const Customization& c,
                                                                   Operation op, const Inputs& in,
                                                                   Limits limits) {
  const std::optional<json::object>& object = in.observed ? in.observed : in.desired;
  auto need = [](const std::optional<json::object>& o, const char* flag) -> Status {
    if (o.has_value()) return Status::Ok();
    return Status::Invalid(std::string(flag) + " is required for this operation");
  };
  std::vector<std::pair<std::string, json::value>> out;
  switch (op) {
    case Operation::kInterpretReplica: {
      FLOTILLA_RETURN_IF_ERROR(need(object, "--desired-file or --observed-file"));
      FLOTILLA_ASSIGN_OR_RETURN(Replicas r, GetReplicas(c, *object, limits));
      out.emplace_back("replica", r.replicas);
      out.emplace_back("requires",
                       r.requirements ? json::value(*r.requirements) : json::value(nullptr));
      break;
    }
    case Operation::kReviseReplica: {
      FLOTILLA_RETURN_IF_ERROR(need(object, "--desired-file or --observed-file"));
      FLOTILLA_ASSIGN_OR_RETURN(json::object r,
                                ReviseReplica(c, *object, in.desired_replica, limits));
      out.emplace_back("revised", std::move(r));
      break;
    }
    case Operation::kRetain: {
      FLOTILLA_RETURN_IF_ERROR(need(in.desired, "--desired-file"));
      FLOTILLA_RETURN_IF_ERROR(need(in.observed, "--observed-file"));
      FLOTILLA_ASSIGN_OR_RETURN(json::object r, Retain(c, *in.desired, *in.observed, limits));
      out.emplace_back("retained", std::move(r));
      break;
    }
    case Operation::kAggregateStatus: {
      FLOTILLA_RETURN_IF_ERROR(need(object, "--desired-file or --observed-file"));
      FLOTILLA_ASSIGN_OR_RETURN(json::object r,
                                AggregateStatus(c, *object, in.status_items, limits));
      out.emplace_back("aggregatedStatus", std::move(r));
      break;
    }
    case Operation::kInterpretStatus: {
      FLOTILLA_RETURN_IF_ERROR(need(object, "--observed-file"));
      FLOTILLA_ASSIGN_OR_RETURN(json::value r, ReflectStatus(c, *object, limits));
      out.emplace_back("status", std::move(r));
      break;
    }
    case Operation::kInterpretHealth: {
      FLOTILLA_RETURN_IF_ERROR(need(object, "--observed-file"));
      FLOTILLA_ASSIGN_OR_RETURN(bool healthy, InterpretHealth(c, *object, limits));
      out.emplace_back("healthy", healthy);
      break;
    }
    case Operation::kInterpretDependency: {
      FLOTILLA_RETURN_IF_ERROR(need(object, "--desired-file or --observed-file"));
      FLOTILLA_ASSIGN_OR_RETURN(json::array r, GetDependencies(c, *object, limits));
      out.emplace_back("dependencies", std::move(r));
      break;
    }
  }
  return out;
}

}  // namespace flotilla::interpreter
