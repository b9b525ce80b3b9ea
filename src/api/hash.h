// What Kubernetes' controllers hash objects with to name what they make
// (a Deployment's ReplicaSets, a StatefulSet's ControllerRevisions): a
// canonical JSON text of a value and rand.SafeEncodeString. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/json.h"

namespace flotilla::api {

// JSON with object keys sorted at every level and no spaces (the bytes Go's
// encoding/json writes for a map[string]interface{}), so that equal values
// give equal text whatever order their fields came in.
std::string CanonicalJson(const json::value& v);

// 64-bit FNV-1a of `s`.
uint64_t Fnv1a64(std::string_view s);

// k8s.io/apimachinery/pkg/util/rand.SafeEncodeString: each byte mapped into
// an alphabet without vowels or look-alike characters, so a hash never
// spells a word.
std::string SafeEncodeString(std::string_view s);

}  // namespace flotilla::api
