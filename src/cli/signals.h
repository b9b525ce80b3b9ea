// Termination signals for long-running subcommands: block SIGINT/SIGTERM in
// every thread (call before starting any), then wait for one.
#pragma once

namespace flotilla::cli {

void BlockTerminationSignals();
// Returns the signal received.
int WaitForTerminationSignal();

}  // namespace flotilla::cli
