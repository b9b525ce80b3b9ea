// The process's limit on open descriptors. A server holds one per
// connection (each watch is one), and a federation one per watch of each
// member: the default soft limit of 1,024 is far too low for either.
#pragma once

#include <cstdint>

namespace flotilla {

// Raises the soft RLIMIT_NOFILE as far as this process may: to `want`
// where it is allowed to raise the hard limit too (CAP_SYS_RESOURCE), else
// to the hard limit. Never lowers it. Returns the soft limit now in force
// (0 if it cannot be read). Children inherit it.
uint64_t RaiseDescriptorLimit(uint64_t want = 0);

}  // namespace flotilla
