// A sandboxed Lua 5.4 for resource interpreter scripts (docs/interpreter.md):
// the Lua functions of Karmada's ResourceInterpreterCustomization run here,
// on JSON values in and out.
//
// Every call gets a fresh state with only what those scripts use: the base
// library without dofile, loadfile, load, collectgarbage, getmetatable,
// setmetatable, rawequal, rawget, rawset, print (each of these raises "call
// function X is not supported"), string (without string.dump), table, math,
// utf8, an `os` of its pure functions (os.date, os.time, os.clock,
// os.difftime), and `require` that gives only the `kube` library
// (kube_lib.h). No io, no package loading, no debug library. A call stops
// with an error once it has run `instructions` Lua instructions or holds
// more than `memory` bytes, whatever the script does.
//
// JSON to Lua: objects and arrays become tables (arrays 1-based), numbers
// integers where they are integral, null nil. Lua to JSON: a table whose
// keys are exactly 1..n is an array, any other non-empty table an object;
// an empty table is what `references` (the objects the script was given)
// hold at the same path, {} or [], and is dropped when they hold neither
// (as Karmada does); integral floats become integers. Errors are
// Invalid with Lua's message.
//
// Lua is Debian's liblua5.4-c++: a Lua error unwinds C++ frames as an
// exception, so the conversions may hold C++ objects while calling Lua.
// Thread-safe: nothing is shared between calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::interpreter {

struct Limits {
  int64_t instructions = 10'000'000;
  size_t memory = 32u << 20;
};

// How an empty table in a result is read when no reference says.
enum class EmptyAs { kObject, kArray };

struct Call {
  std::string_view script;
  std::string_view function;
  std::vector<json::value> args;
  int results = 1;
  // What empty tables in the results are, by path (the script's inputs).
  std::vector<const json::value*> references;
  EmptyAs empty_root = EmptyAs::kObject;
  Limits limits;
};

// Runs the script (its top level), then calls its global `function` with
// the arguments; the results, nil as null.
StatusOr<std::vector<json::value>> Run(const Call& call);

// The script compiles, runs its top level within the limits, and defines a
// global function `function`.
Status Check(std::string_view script, std::string_view function, Limits limits = {});

}  // namespace flotilla::interpreter
