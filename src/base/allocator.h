// The allocator's settings for Flotilla's processes (docs/architecture.md,
// "The allocator").
//
// glibc's malloc keeps a small cache of freed chunks per thread and size
// (its tcache: 7 chunks by default); what overflows goes to the arena's
// fast bins, and every later request of 1 KiB or more first merges all of
// them back (malloc_consolidate). A controller's check or a watch event
// frees whole JSON trees at once, so that cycle ran all the time: during a
// federation's cold start about a quarter of its CPU was malloc and free.
// A larger cache takes CPU off that and holds more memory per thread: 128
// chunks per size, measured against larger and smaller counts in
// docs/benchmarks.md ("The allocator's thread cache").
//
// glibc takes the setting only from GLIBC_TUNABLES as a process starts, so
// a process that does not have it in its environment starts itself again
// with it (same program, arguments and pid).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace flotilla {

// The thread cache's count Flotilla runs with.
inline constexpr int kMallocThreadCacheCount = 128;

// GLIBC_TUNABLES with the thread cache's count added to `current` (a
// colon-separated list of name=value); nullopt when `current` sets that
// count already (the user's own choice is kept: glibc.malloc.tcache_count=7
// is glibc's default).
std::optional<std::string> WithMallocTunables(std::string_view current);

// When the environment lacks the count (WithMallocTunables), sets it and
// executes this program again with `argv`; returns where that cannot be
// done (no /proc/self/exe, a set-user-ID start, a sanitizer's allocator),
// the process then running with glibc's defaults. Called first thing in
// main, before any thread starts.
void TuneAllocator(char** argv);

}  // namespace flotilla
