// dns_bench's failover phase (dns_failover.cc).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace flotilla::bench {

// Milliseconds from a member's Endpoints losing their last address to the
// federation's DNS (on `dns_port`) answering without its address, once per
// failover.
StatusOr<std::vector<double>> MeasureDnsFailover(const std::string& binary, const std::string& dir,
                                                 int dns_port, int failovers);

}  // namespace flotilla::bench
