#include "interpreter/lua_vm.h"

#include <gtest/gtest.h>

namespace flotilla::interpreter {
namespace {

json::value Parse(std::string_view text) { return json::parse(text); }

StatusOr<json::value> RunOne(std::string_view script, std::vector<json::value> args = {},
                             std::vector<const json::value*> refs = {}, Limits limits = {}) {
  auto out = Run({.script = script,
                  .function = "F",
                  .args = std::move(args),
                  .references = std::move(refs),
                  .limits = limits});
  if (!out.ok()) return out.status();
  return out->front();
}

TEST(LuaVmTest, ValuesGoInAndComeOutAsJson) {
  auto out = RunOne(R"(function F(o)
      o.spec.replicas = o.spec.replicas * 2
      o.spec.half = 1.5
      o.spec.whole = 4.0
      o.list[#o.list + 1] = "c"
      return o
    end)",
                    {Parse(R"({"spec":{"replicas":3,"flag":true},"list":["a","b"]})")});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, Parse(R"({"list":["a","b","c"],
      "spec":{"flag":true,"half":1.5,"replicas":6,"whole":4}})"));
}

TEST(LuaVmTest, EmptyTablesAreWhatTheReferencesHoldThereOrDropped) {
  json::value in = Parse(R"({"a":{},"b":[],"c":{"d":[]},"items":[{"e":{}}]})");
  auto out = RunOne(R"(function F(o)
      o.extra = {}
      return o
    end)",
                    {in}, {&in});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, Parse(R"({"a":{},"b":[],"c":{"d":[]},"items":[{"e":{}}]})"));
  // Without references an empty table inside is dropped, at the top it is
  // what the caller says.
  out = RunOne("function F() return {a = {}, b = 1} end");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, Parse(R"({"b":1})"));
  out = RunOne("function F() return {} end");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, json::value(json::object()));
}

TEST(LuaVmTest, TheSandboxHasOnlyPureLibraries) {
  auto out = RunOne(R"(function F()
      return {io = type(io), execute = type(os.execute), getenv = type(os.getenv),
              date = type(os.date("%Y")), time = math.type(os.time()), clock = type(os.clock()),
              dump = type(string.dump), debug = type(debug), package = type(package),
              upper = string.upper("x"), n = #table.concat({"a", "b"}),
              kube = type(require("kube").accuratePodRequirements)}
    end)");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, Parse(R"({"clock":"number","date":"string","debug":"nil","dump":"nil",
      "execute":"nil","getenv":"nil","io":"nil","kube":"function","n":2,"package":"nil",
      "time":"integer","upper":"X"})"));
  for (const char* call :
       {"load('return 1')", "dofile('/etc/passwd')", "loadfile('/x')", "setmetatable({}, {})",
        "rawget({}, 1)", "collectgarbage()", "print('x')"}) {
    auto refused = RunOne(std::string("function F() return ") + call + " end");
    ASSERT_FALSE(refused.ok()) << call;
    EXPECT_NE(refused.status().message().find("is not supported"), std::string::npos)
        << refused.status().ToString();
  }
  auto required = RunOne("function F() return require('io') end");
  ASSERT_FALSE(required.ok());
  EXPECT_NE(required.status().message().find("only 'kube' can be required"), std::string::npos);
}

TEST(LuaVmTest, ALoopThatNeverEndsIsStopped) {
  auto out = RunOne("function F() while true do end end", {}, {}, {.instructions = 100'000});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("more than 100000 instructions"), std::string::npos)
      << out.status().ToString();
  // At the top level too.
  EXPECT_FALSE(Check("while true do end function F() end", "F", {.instructions = 100'000}).ok());
}

TEST(LuaVmTest, AllocationBeyondTheLimitIsStopped) {
  auto out = RunOne(R"(function F()
      local t = {}
      for i = 1, 1e9 do t[i] = string.rep("x", 1000) .. i end
    end)",
                    {}, {}, {.instructions = 1'000'000'000, .memory = 4u << 20});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("more than 4194304 bytes"), std::string::npos)
      << out.status().ToString();
}

TEST(LuaVmTest, ErrorsSayWhatAndWhere) {
  auto syntax = RunOne("function F( return end");
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.status().message().find("script:1:"), std::string::npos)
      << syntax.status().ToString();
  auto runtime = RunOne("function F(o)\n  return o.spec.replicas\nend", {json::object()});
  ASSERT_FALSE(runtime.ok());
  EXPECT_NE(runtime.status().message().find("script:2: attempt to index a nil value"),
            std::string::npos)
      << runtime.status().ToString();
  auto missing = RunOne("function G() end");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("defines no function F"), std::string::npos);
  auto function = RunOne("function F() return {f = print} end");
  ASSERT_FALSE(function.ok());
  EXPECT_NE(function.status().message().find("which JSON cannot"), std::string::npos);
  auto cycle = RunOne("function F() local t = {} t.t = t return t end");
  ASSERT_FALSE(cycle.ok());
  EXPECT_TRUE(Check("function F() end", "F").ok());
  EXPECT_FALSE(Check("F = 1", "F").ok());
}

}  // namespace
}  // namespace flotilla::interpreter
