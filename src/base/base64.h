// Standard base64 (RFC 4648, with padding), as Kubernetes uses for Secret
// data, kubeconfig *-data fields and continue tokens.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace flotilla {

std::string Base64Encode(std::string_view data);
// nullopt on invalid input. Whitespace is not allowed.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace flotilla
