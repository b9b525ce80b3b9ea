// What Kubernetes' controllers hash objects with to name what they make
// (a Deployment's ReplicaSets, a StatefulSet's ControllerRevisions): a
// canonical JSON text of a value and rand.SafeEncodeString. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json.h"

namespace flotilla::api {

// JSON with object keys sorted at every level and no spaces (the bytes Go's
// encoding/json writes for a map[string]interface{}), so that equal values
// give equal text whatever order their fields came in.
std::string CanonicalJson(const json::value& v);

// An object's fields by name, the values not copied.
using FieldRefs = std::vector<std::pair<std::string_view, const json::value*>>;

// Appends to `out` the CanonicalJson of the object holding `fields` (in any
// order) with every null, {} and [] member left out, at every depth, once
// what is within it has been left out (Go's omitempty: a template written
// back with "creationTimestamp": null reads as the one sent without it).
// Array elements stay where they are. Returns false, `out` as it was, when
// nothing is left of the object.
bool AppendPrunedCanonical(FieldRefs fields, std::string& out);

// 64-bit FNV-1a of `s`.
uint64_t Fnv1a64(std::string_view s);

// k8s.io/apimachinery/pkg/util/rand.SafeEncodeString: each byte mapped into
// an alphabet without vowels or look-alike characters, so a hash never
// spells a word.
std::string SafeEncodeString(std::string_view s);

}  // namespace flotilla::api
