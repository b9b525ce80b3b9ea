// The kube library (kube_lib.h).
#include "interpreter/kube_lib.h"

#include <lua.hpp>
#include <set>
#include <string>

#include "api/resources.h"
#include "interpreter/lua_vm.h"
#include "interpreter/native.h"

namespace flotilla::interpreter {
namespace {

json::object TemplateArg(lua_State* L, const char* fn) {
  luaL_checktype(L, 1, LUA_TTABLE);
  json::value v = ToJson(L, 1, EmptyAs::kObject);
  if (!v.is_object()) luaL_error(L, "%s: the pod template must be an object", fn);
  return v.get_object();
}

// GenerateReplicaRequirements: what a replica of the template asks of a
// cluster.
int AccuratePodRequirements(lua_State* L) {
  if (lua_gettop(L) != 1) return luaL_error(L, "accuratePodRequirements only accepts one argument");
  json::object tmpl = TemplateArg(L, "accuratePodRequirements");
  const json::object* spec = GetObject(tmpl, "spec");
  json::object pod{{"spec", spec != nullptr ? *spec : json::object()}};
  json::object claim;
  if (spec != nullptr) {
    const json::object* selector = GetObject(*spec, "nodeSelector");
    if (selector != nullptr && !selector->empty()) claim["nodeSelector"] = *selector;
    const json::array* tolerations = GetArray(*spec, "tolerations");
    if (tolerations != nullptr && !tolerations->empty()) claim["tolerations"] = *tolerations;
    const json::value* required =
        Find(*spec, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution");
    if (required != nullptr && required->is_object()) claim["hardNodeAffinity"] = *required;
  }
  api::Resources requests = api::PodRequests(pod);
  json::object request;
  if (requests.milli_cpu > 0) request["cpu"] = api::FormatMilliCpu(requests.milli_cpu);
  if (requests.memory > 0) request["memory"] = api::FormatBytes(requests.memory);
  if (requests.ephemeral_storage > 0) {
    request["ephemeral-storage"] = api::FormatBytes(requests.ephemeral_storage);
  }
  if (claim.empty() && request.empty()) {
    lua_pushnil(L);
    return 1;
  }
  json::object out;
  if (!claim.empty()) out["nodeClaim"] = std::move(claim);
  if (!request.empty()) out["resourceRequest"] = std::move(request);
  PushJson(L, out);
  return 1;
}

// GetDependenciesFromPodTemplate: the objects the pod template uses.
int GetPodDependencies(lua_State* L) {
  if (lua_gettop(L) != 2) return luaL_error(L, "getPodDependencies only accepts two arguments");
  json::object tmpl = TemplateArg(L, "getPodDependencies");
  std::string ns = lua_isnil(L, 2) ? "default" : luaL_checkstring(L, 2);
  PushJson(L, PodDependencies(tmpl, ns));
  return 1;
}

// A quantity argument in milli-units; nil is zero.
int64_t QuantityArg(lua_State* L, int i, bool* binary) {
  if (lua_isnil(L, i)) return 0;
  std::string text = luaL_checkstring(L, i);
  std::optional<int64_t> milli = api::ParseQuantity(text, 1000);
  if (!milli.has_value())
    luaL_error(L, "quantities must match the regular expression: %s", text.c_str());
  if (binary != nullptr && text.size() > 1 && text.back() == 'i') *binary = true;
  return *milli;
}

int ResourceAdd(lua_State* L) {
  int64_t sum = 0;
  bool binary = false;
  for (int i = 1; i <= lua_gettop(L); ++i) sum += QuantityArg(L, i, &binary);
  std::string out =
      binary && sum % 1000 == 0 ? api::FormatBytes(sum / 1000) : api::FormatMilliCpu(sum);
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

int GetResourceQuantity(lua_State* L) {
  if (lua_gettop(L) != 1) return luaL_error(L, "getResourceQuantity only accepts one argument");
  int64_t milli = QuantityArg(L, 1, nullptr);
  if (milli < 0) return luaL_error(L, "the quantity is negative");
  lua_pushnumber(L, static_cast<double>(milli) / 1000.0);
  return 1;
}

}  // namespace

void OpenKube(lua_State* L) {
  static const luaL_Reg kFunctions[] = {{"accuratePodRequirements", AccuratePodRequirements},
                                        {"getPodDependencies", GetPodDependencies},
                                        {"resourceAdd", ResourceAdd},
                                        {"getResourceQuantity", GetResourceQuantity},
                                        {nullptr, nullptr}};
  luaL_newlib(L, kFunctions);
}

}  // namespace flotilla::interpreter
