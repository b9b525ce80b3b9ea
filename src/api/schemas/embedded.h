// The builtin OpenAPI definitions, embedded in the binary.
//
// scripts/gen_schemas.py writes them at build time, from python3-kubernetes
// and the files of this folder, into a generated source that defines these
// symbols (docs/openapi.md). The JSON object of definitions is the
// concatenation of the parts, in order.
#pragma once

#include <cstddef>

namespace flotilla::api::schemas {

extern const char* const kEmbeddedDefinitionParts[];
extern const size_t kEmbeddedDefinitionPartCount;

}  // namespace flotilla::api::schemas
