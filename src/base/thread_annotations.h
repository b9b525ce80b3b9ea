// Clang's thread-safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html)
// under the names that documentation uses, spelled through Abseil's macros
// (which are empty where the compiler does not know the attributes).
// scripts/thread_safety checks them with -Werror=thread-safety.
//
// A field: `int n_ GUARDED_BY(mu_);`. A function called with the lock held:
// `void Grow() REQUIRES(mu_);`. One that takes it: `EXCLUDES(mu_)`. A lambda
// run under the lock (a wait's predicate): `[&]() REQUIRES(mu_) { ... }`.
#pragma once

// Defines GUARDED_BY, PT_GUARDED_BY, ACQUIRED_AFTER, ACQUIRED_BEFORE and
// NO_THREAD_SAFETY_ANALYSIS itself, the same way as below.
#include "absl/base/thread_annotations.h"

#ifndef GUARDED_BY
#define GUARDED_BY(x) ABSL_GUARDED_BY(x)
#endif
#ifndef PT_GUARDED_BY
#define PT_GUARDED_BY(x) ABSL_PT_GUARDED_BY(x)
#endif
#ifndef ACQUIRED_AFTER
#define ACQUIRED_AFTER(...) ABSL_ACQUIRED_AFTER(__VA_ARGS__)
#endif
#ifndef ACQUIRED_BEFORE
#define ACQUIRED_BEFORE(...) ABSL_ACQUIRED_BEFORE(__VA_ARGS__)
#endif
#ifndef NO_THREAD_SAFETY_ANALYSIS
#define NO_THREAD_SAFETY_ANALYSIS ABSL_NO_THREAD_SAFETY_ANALYSIS
#endif

#define CAPABILITY ABSL_LOCKABLE
#define SCOPED_CAPABILITY ABSL_SCOPED_LOCKABLE
#define REQUIRES(...) ABSL_EXCLUSIVE_LOCKS_REQUIRED(__VA_ARGS__)
#define REQUIRES_SHARED(...) ABSL_SHARED_LOCKS_REQUIRED(__VA_ARGS__)
#define EXCLUDES(...) ABSL_LOCKS_EXCLUDED(__VA_ARGS__)
#define ACQUIRE(...) ABSL_EXCLUSIVE_LOCK_FUNCTION(__VA_ARGS__)
#define ACQUIRE_SHARED(...) ABSL_SHARED_LOCK_FUNCTION(__VA_ARGS__)
#define RELEASE(...) ABSL_UNLOCK_FUNCTION(__VA_ARGS__)
#define ASSERT_CAPABILITY(x) ABSL_ASSERT_EXCLUSIVE_LOCK(x)
#define RETURN_CAPABILITY(x) ABSL_LOCK_RETURNED(x)
