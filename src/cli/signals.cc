#include "cli/signals.h"

#include <csignal>

namespace flotilla::cli {
namespace {

sigset_t TerminationSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

void BlockTerminationSignals() {
  sigset_t set = TerminationSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int WaitForTerminationSignal() {
  sigset_t set = TerminationSet();
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

int WaitForTerminationSignalFor(int millis) {
  sigset_t set = TerminationSet();
  timespec timeout{millis / 1000, static_cast<long>(millis % 1000) * 1000000};
  int sig = sigtimedwait(&set, nullptr, &timeout);
  return sig > 0 ? sig : 0;
}

}  // namespace flotilla::cli
