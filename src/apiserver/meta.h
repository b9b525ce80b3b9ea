// Small helpers over an object's metadata, used by Objects and the
// controllers inside the server.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/registry.h"
#include "base/json.h"

namespace flotilla::apiserver {

// metadata as a (possibly new) object.
json::object& MetaOf(json::object& obj);
const json::object* FindMeta(const json::object& obj);
std::string MetaString(const json::object& obj, std::string_view field);
int64_t ResourceVersionOf(const json::object& obj);  // 0 when absent or unparsable
bool HasFinalizer(const json::object& obj, std::string_view finalizer);
void AddFinalizer(json::object& obj, std::string_view finalizer);
void RemoveFinalizer(json::object& obj, std::string_view finalizer);

// A random RFC 4122 version 4 UUID.
std::string NewUid();
// n random characters from kube's generateName alphabet.
std::string RandomSuffix(int n);

// True when anything outside metadata and status differs (what bumps
// metadata.generation).
bool SpecChanged(const json::object& old_obj, const json::object& new_obj);
// Whether the kind keeps metadata.generation (workloads, HPAs, Jobs,
// CronJobs, disruption budgets, network policies, clusters, custom kinds).
bool TracksGeneration(const api::Resource& res);

}  // namespace flotilla::apiserver
