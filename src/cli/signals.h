// Termination signals for long-running subcommands: block SIGINT/SIGTERM in
// every thread (call before starting any), then wait for one.
#pragma once

namespace flotilla::cli {

void BlockTerminationSignals();
// Returns the signal received.
int WaitForTerminationSignal();
// Waits at most `millis`; returns the signal received, or 0.
int WaitForTerminationSignalFor(int millis);

}  // namespace flotilla::cli
