// Any bytes as a kubeconfig (YAML or JSON), as `flotilla join` and every
// command read one, and as the kubeconfig a member's Secret holds: parsed,
// then its current context resolved. Errors are values; nothing else may
// happen.
#include "client/kubeconfig.h"

#include "fuzz/targets.h"

namespace flotilla::fuzz {

void Kubeconfig(std::span<const uint8_t> data) {
  auto config = client::ParseKubeconfig(AsText(data), "fuzz", "/nonexistent");
  if (config.ok()) (void)client::ResolveRestConfig(*config);
}

}  // namespace flotilla::fuzz
