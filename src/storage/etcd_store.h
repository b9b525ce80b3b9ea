// The etcd backend: the Store contract over etcd's v3 API (gRPC), as
// kube-apiserver uses etcd (docs/storage.md, "etcd").
//
// - Keys are `prefix + key`; a resourceVersion is etcd's mod_revision.
// - Create is a transaction on `create_revision == 0`; update and delete
//   carry a precondition on `mod_revision`.
// - Get reads etcd (linearizable). List is a consistent read from an
//   in-memory cache (the shared State) once it has caught up with etcd's
//   current revision, else from etcd; a List with a revision (a continue
//   token's) reads etcd at that revision, so the pages of one list are one
//   snapshot.
// - Watches are served from the cache, fed by one etcd watch over the
//   prefix with prev_kv, which resumes from its last revision after a broken
//   stream.
// - A compactor compacts etcd every compaction_interval to the revision it
//   saw one interval before, coordinated between servers through the key
//   `prefix/compact_rev_key` as kube-apiserver's is through its
//   `compact_rev_key`; every server's cache follows the compactions it sees
//   on that key, so a watch from a compacted revision is Expired (410).
//
// The revision a write gets is known only once etcd applied it. A mutation
// is run with the revision etcd is expected to give it (the latest one seen
// plus one); the value is stored behind a short header naming that guess.
// A read whose mod_revision differs from the guess (another writer came
// first) has the revision set by EtcdOptions::set_revision.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "storage/store.h"

namespace flotilla::storage {

struct EtcdOptions {
  // http://HOST:PORT or https://HOST:PORT, one per etcd member.
  std::vector<std::string> endpoints;
  // TLS: the CA that signed etcd's serving certificates, and the client's
  // certificate and key when etcd asks for one.
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  // Every key lives under this prefix.
  std::string prefix = "/registry";
  // How long one request to etcd may take, waiting for a member to be
  // reachable included.
  std::chrono::milliseconds request_timeout = std::chrono::seconds(10);
  // 0 = this server does not compact.
  std::chrono::milliseconds compaction_interval = std::chrono::minutes(5);
  // Events the watch cache keeps for watches that resume.
  int64_t history_events = 100000;
  // Returns `value` with its revision set to `revision`, for a value whose
  // write got another revision than the one its mutation was given. Null:
  // values are stored as they are.
  std::function<StatusOr<std::string>(std::string_view value, int64_t revision)> set_revision;
};

// Connects to etcd (waiting up to request_timeout for a member), loads the
// watch cache and starts its watch. Unavailable when etcd cannot be reached.
StatusOr<std::unique_ptr<Store>> OpenEtcdStore(const EtcdOptions& opts);

// The end of the range of keys starting with `prefix` (etcd's range_end):
// the prefix with its last byte below 0xff incremented.
std::string PrefixRangeEnd(std::string_view prefix);

}  // namespace flotilla::storage
