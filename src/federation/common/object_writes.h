// Writes of a controller to the federated objects it manages: annotations,
// and the status with the annotations that go with it, each written only
// when it changes; deletions of exactly the object read. The writes carry the object's
// resourceVersion, so a stale object gets Conflict (the caller's next check sees the newer one).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "client/client.h"

namespace flotilla::federation {

// `obj` with annotation `key` set to `value`: written unless it already
// has it. Returns the object as stored afterwards, nullopt when `obj` had
// it already (nothing written, nothing copied).
StatusOr<std::optional<json::object>> SetAnnotation(client::Client& client,
                                                    const client::ResourceRef& resource,
                                                    const json::object& obj, std::string_view key,
                                                    std::string_view value);

// Whether `obj` has each annotation of `set` with its value and none of
// `remove`: then a write would change nothing.
bool HasAnnotations(const json::object& obj, const std::map<std::string, std::string>& set,
                    const std::vector<std::string>& remove);

// `obj` with each annotation of `set` set to its value and each of
// `remove` removed: written unless nothing changes (HasAnnotations).
// Returns the object as stored afterwards, nullopt when nothing changed.
StatusOr<std::optional<json::object>> SetAnnotations(client::Client& client,
                                                     const client::ResourceRef& resource,
                                                     const json::object& obj,
                                                     const std::map<std::string, std::string>& set,
                                                     const std::vector<std::string>& remove = {});

// Writes `status`, with each annotation of `set` set to its value and each
// of `remove` removed, in one write through the status subresource (which
// takes the metadata of Kubernetes' own kinds too); nothing when `obj` has
// them all already.
Status WriteStatusIfChanged(client::Client& client, const client::ResourceRef& resource,
                            const json::object& obj, json::object status,
                            const std::map<std::string, std::string>& set = {},
                            const std::vector<std::string>& remove = {});

// Options that delete `obj` itself and not an object made under its name
// meanwhile (a precondition on its uid), with propagation `policy` ("":
// the kind's default).
client::DeleteOptions DeleteOptionsFor(const json::object& obj, std::string policy = "");

// Deletes the federated `obj` so (DeleteOptionsFor): NotFound and Conflict
// come back as they are.
Status DeleteExactly(client::Client& client, const client::ResourceRef& resource,
                     const json::object& obj, std::string policy = "");

}  // namespace flotilla::federation
