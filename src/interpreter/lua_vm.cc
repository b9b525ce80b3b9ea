// The sandboxed Lua (lua_vm.h).
#include "interpreter/lua_vm.h"

#include <algorithm>
#include <cmath>
#include <lua.hpp>
#include <memory>
#include <string>

#include "interpreter/kube_lib.h"

namespace flotilla::interpreter {
namespace {

constexpr int kHookEvery = 1000;  // instructions between two counts
constexpr int kMaxDepth = 200;    // nesting of tables converted

// What one call may use, and has used; the state's allocator and hook
// reach it through their user data.
struct Budget {
  Limits limits;
  size_t used = 0;
  int64_t instructions = 0;
  bool out_of_memory = false;
};

void* Allocate(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* budget = static_cast<Budget*>(ud);
  size_t old = ptr != nullptr ? osize : 0;
  if (nsize == 0) {
    std::free(ptr);
    budget->used -= old;
    return nullptr;
  }
  if (nsize > old && budget->used + (nsize - old) > budget->limits.memory) {
    budget->out_of_memory = true;
    return nullptr;
  }
  void* out = std::realloc(ptr, nsize);
  if (out != nullptr) budget->used = budget->used - old + nsize;
  return out;
}

Budget* BudgetOf(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  return static_cast<Budget*>(ud);
}

void CountInstructions(lua_State* L, lua_Debug*) {
  Budget* budget = BudgetOf(L);
  budget->instructions += kHookEvery;
  if (budget->instructions > budget->limits.instructions) {
    luaL_error(L, "the script ran more than %I instructions (a loop that does not end?)",
               static_cast<lua_Integer>(budget->limits.instructions));
  }
}

int NotSupported(lua_State* L) {
  return luaL_error(L, "call function %s is not supported in the resource interpreter",
                    lua_tostring(L, lua_upvalueindex(1)));
}

int Require(lua_State* L) {
  std::string_view name = luaL_checkstring(L, 1);
  if (name != "kube") {
    return luaL_error(L, "module '%s' not found: only 'kube' can be required", name.data());
  }
  lua_getfield(L, LUA_REGISTRYINDEX, "flotilla.kube");
  return 1;
}

// The libraries a script may use, and nothing else.
void OpenSandbox(lua_State* L) {
  luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
  luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
  luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
  luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1);
  luaL_requiref(L, LUA_OSLIBNAME, luaopen_os, 0);  // not global: its pure functions are
  lua_pop(L, 6);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getfield(L, -1, LUA_OSLIBNAME);
  lua_createtable(L, 0, 4);
  for (const char* fn : {"date", "time", "clock", "difftime"}) {
    lua_getfield(L, -2, fn);
    lua_setfield(L, -2, fn);
  }
  lua_setglobal(L, "os");
  lua_pop(L, 2);
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  lua_pop(L, 1);
  for (const char* fn : {"dofile", "loadfile", "load", "collectgarbage", "getmetatable",
                         "setmetatable", "rawequal", "rawget", "rawset", "rawlen", "print"}) {
    lua_pushstring(L, fn);
    lua_pushcclosure(L, NotSupported, 1);
    lua_setglobal(L, fn);
  }
  OpenKube(L);
  lua_setfield(L, LUA_REGISTRYINDEX, "flotilla.kube");
  lua_pushcfunction(L, Require);
  lua_setglobal(L, "require");
}

// The kinds of empty value the references hold at `path` (object keys;
// array elements are looked through), as a mask.
constexpr int kEmptyObject = 1, kEmptyArray = 2;
int EmptyAt(const json::value& v, const std::vector<std::string>& path, size_t i) {
  if (v.is_array()) {
    int mask = 0;
    for (const json::value& e : v.get_array()) mask |= EmptyAt(e, path, i);
    return mask;
  }
  if (i == path.size()) {
    if (v.is_object() && v.get_object().empty()) return kEmptyObject;
    return 0;
  }
  if (!v.is_object()) return 0;
  const json::value* next = v.get_object().if_contains(path[i]);
  if (next == nullptr) return 0;
  if (i + 1 == path.size() && next->is_array() && next->get_array().empty()) return kEmptyArray;
  return EmptyAt(*next, path, i + 1);
}

struct Converter {
  lua_State* L;
  const std::vector<const json::value*>& references;

  int EmptyKind(const std::vector<std::string>& path) const {
    int mask = 0;
    for (const json::value* r : references) mask |= EmptyAt(*r, path, 0);
    return mask;
  }

  // The value at `idx`; nullopt for an empty table that is dropped.
  std::optional<json::value> ToJson(int idx, std::vector<std::string>& path, int depth) {
    if (depth > kMaxDepth) luaL_error(L, "the result nests more than %d tables", kMaxDepth);
    idx = lua_absindex(L, idx);
    switch (lua_type(L, idx)) {
      case LUA_TNIL:
        return json::value(nullptr);
      case LUA_TBOOLEAN:
        return json::value(lua_toboolean(L, idx) != 0);
      case LUA_TNUMBER: {
        if (lua_isinteger(L, idx)) return json::value(static_cast<int64_t>(lua_tointeger(L, idx)));
        double d = lua_tonumber(L, idx);
        if (!std::isfinite(d)) luaL_error(L, "the result holds a number JSON cannot (%f)", d);
        if (d == std::floor(d) && std::fabs(d) < 9.2e18)
          return json::value(static_cast<int64_t>(d));
        return json::value(d);
      }
      case LUA_TSTRING: {
        size_t n = 0;
        const char* s = lua_tolstring(L, idx, &n);
        return json::value(json::string(s, n));
      }
      case LUA_TTABLE:
        return TableToJson(idx, path, depth);
      default:
        luaL_error(L, "the result holds a %s, which JSON cannot", luaL_typename(L, idx));
        return std::nullopt;
    }
  }

  std::optional<json::value> TableToJson(int idx, std::vector<std::string>& path, int depth) {
    luaL_checkstack(L, 4, "nested tables");
    lua_Integer count = 0;
    bool sequence = true;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
      ++count;
      if (!lua_isinteger(L, -2)) sequence = false;
      lua_pop(L, 1);
    }
    if (count == 0) {
      int kind = EmptyKind(path);
      if (kind & kEmptyObject) return json::value(json::object());
      if (kind & kEmptyArray) return json::value(json::array());
      return std::nullopt;
    }
    if (sequence) {
      for (lua_Integer i = 1; i <= count && sequence; ++i) {
        sequence = lua_rawgeti(L, idx, i) != LUA_TNIL;
        lua_pop(L, 1);
      }
    }
    if (sequence) {
      json::array out;
      for (lua_Integer i = 1; i <= count; ++i) {
        lua_rawgeti(L, idx, i);
        std::optional<json::value> v = ToJson(-1, path, depth + 1);
        lua_pop(L, 1);
        if (v.has_value()) out.push_back(std::move(*v));
      }
      return json::value(std::move(out));
    }
    // An object, its keys sorted (as Go writes a map).
    std::vector<std::string> keys;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
      lua_pop(L, 1);
      if (lua_type(L, -1) == LUA_TSTRING) {
        size_t n = 0;
        const char* s = lua_tolstring(L, -1, &n);
        keys.emplace_back(s, n);
      } else if (lua_isinteger(L, -1)) {
        keys.push_back(std::to_string(lua_tointeger(L, -1)));
      } else {
        luaL_error(L, "the result has a table key of type %s", luaL_typename(L, -1));
      }
    }
    std::sort(keys.begin(), keys.end());
    json::object out;
    for (const std::string& key : keys) {
      lua_pushlstring(L, key.data(), key.size());
      if (lua_rawget(L, idx) == LUA_TNIL) {  // an integer key
        lua_pop(L, 1);
        lua_rawgeti(L, idx, std::stoll(key));
      }
      path.push_back(key);
      std::optional<json::value> v = ToJson(-1, path, depth + 1);
      path.pop_back();
      lua_pop(L, 1);
      if (v.has_value()) out[key] = std::move(*v);
    }
    return json::value(std::move(out));
  }
};

struct Context {
  const Call* call = nullptr;
  bool only_check = false;
  std::vector<json::value> results;
};

int Main(lua_State* L) {
  auto* ctx = static_cast<Context*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  OpenSandbox(L);
  lua_sethook(L, CountInstructions, LUA_MASKCOUNT, kHookEvery);
  const Call& call = *ctx->call;
  if (luaL_loadbufferx(L, call.script.data(), call.script.size(), "=script", "t") != LUA_OK) {
    return lua_error(L);
  }
  lua_call(L, 0, 0);
  std::string function(call.function);
  if (lua_getglobal(L, function.c_str()) != LUA_TFUNCTION) {
    return luaL_error(L, "the script defines no function %s", function.c_str());
  }
  if (ctx->only_check) return 0;
  for (const json::value& arg : call.args) PushJson(L, arg);
  lua_call(L, static_cast<int>(call.args.size()), call.results);
  Converter converter{L, call.references};
  for (int i = 0; i < call.results; ++i) {
    std::vector<std::string> path;
    std::optional<json::value> v = converter.ToJson(i - call.results, path, 0);
    if (!v.has_value()) {
      v = call.empty_root == EmptyAs::kObject ? json::value(json::object())
                                              : json::value(json::array());
    }
    ctx->results.push_back(std::move(*v));
  }
  return 0;
}

StatusOr<std::vector<json::value>> Execute(const Call& call, bool only_check) {
  Budget budget{.limits = call.limits};
  std::unique_ptr<lua_State, decltype(&lua_close)> state(lua_newstate(Allocate, &budget),
                                                         &lua_close);
  if (state == nullptr) return Status::Internal("cannot make a Lua state");
  lua_State* L = state.get();
  Context ctx{.call = &call, .only_check = only_check};
  lua_pushcfunction(L, Main);
  lua_pushlightuserdata(L, &ctx);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
    std::string message = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "an error";
    if (budget.out_of_memory) {
      message = "the script used more than " + std::to_string(call.limits.memory) +
                " bytes of memory (" + message + ")";
    }
    return Status::Invalid(message);
  }
  return std::move(ctx.results);
}

}  // namespace

void PushJson(lua_State* L, const json::value& v) {
  luaL_checkstack(L, 3, "nested values");
  switch (v.kind()) {
    case json::kind::null:
      lua_pushnil(L);
      return;
    case json::kind::bool_:
      lua_pushboolean(L, v.get_bool());
      return;
    case json::kind::int64:
      lua_pushinteger(L, v.get_int64());
      return;
    case json::kind::uint64:
      lua_pushinteger(L, static_cast<lua_Integer>(v.get_uint64()));
      return;
    case json::kind::double_:
      lua_pushnumber(L, v.get_double());
      return;
    case json::kind::string:
      lua_pushlstring(L, v.get_string().data(), v.get_string().size());
      return;
    case json::kind::array: {
      const json::array& a = v.get_array();
      lua_createtable(L, static_cast<int>(a.size()), 0);
      for (size_t i = 0; i < a.size(); ++i) {
        PushJson(L, a[i]);
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
      return;
    }
    case json::kind::object: {
      const json::object& o = v.get_object();
      lua_createtable(L, 0, static_cast<int>(o.size()));
      for (const auto& [key, value] : o) {
        lua_pushlstring(L, key.data(), key.size());
        PushJson(L, value);
        lua_rawset(L, -3);
      }
      return;
    }
  }
}

json::value ToJson(lua_State* L, int idx, EmptyAs empty) {
  std::vector<const json::value*> none;
  Converter converter{L, none};
  std::vector<std::string> path;
  std::optional<json::value> v = converter.ToJson(idx, path, 0);
  if (v.has_value()) return std::move(*v);
  return empty == EmptyAs::kObject ? json::value(json::object()) : json::value(json::array());
}

StatusOr<std::vector<json::value>> Run(const Call& call) { return Execute(call, false); }

Status Check(std::string_view script, std::string_view function, Limits limits) {
  Call call{.script = script, .function = function, .limits = limits};
  return Execute(call, true).status();
}

}  // namespace flotilla::interpreter
