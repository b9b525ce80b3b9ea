// Whether a member's copy is as the federation wants it, decided on what the
// federation owns and on what the member made of the federation's last
// write, never on bytes: real API servers default fields, drop the ones they
// do not know and normalize others (a template's "creationTimestamp": null,
// a Service without spec.internalTrafficPolicy on an older cluster), so the
// copy they return never equals what was sent.
//
// The owned part of a copy, for a desired copy D: its labels, those of its
// annotations whose keys D has (the member's controllers add their own), and
// each of D's top-level fields other than apiVersion, kind, metadata and
// status (spec, data, ...). Its hash is FNV-1a over canonical JSON, with
// null, {} and [] left out (Go's omitempty: a template written back with
// "creationTimestamp": null hashes as the one sent).
//
// Every copy the federation writes carries kDesiredHashAnnotation: the hash
// of D's owned part (the annotation itself left out). After each write the
// reconciler remembers, per copy, that hash and the hash of the owned part
// of the object the member returned. A copy is then up to date when
//   1. its annotation holds the hash of what is wanted now (else what is
//      wanted changed, or the copy was not written for it), and
//   2. its owned part hashes to what the member returned after the write
//      (else someone edited it in the member; a member's defaults, drops and
//      rewrites are part of what it returned, so they never count).
// A process that has not written the copy (a restarted control plane) has
// no memory of 2; the kind's own comparison decides then (lenient: the
// fields the federation sets hold the values it sets), and a copy that
// passes is remembered as it is.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "base/json.h"
#include "base/mutex.h"

namespace flotilla::federation {

// The hash of `obj`'s owned part for the desired copy `desired` (above).
uint64_t OwnedHash(const json::object& obj, const json::object& desired);
// The annotation's text for a hash.
std::string HashText(uint64_t hash);
// Sets kDesiredHashAnnotation on `desired` to the hash of its owned part;
// returns the hash.
uint64_t StampDesiredHash(json::object& desired);
// The hash `copy` was written for (its kDesiredHashAnnotation); "" when it
// has none.
std::string_view DesiredHashOf(const json::object& copy);

class CopyVersions {
 public:
  struct Written {
    uint64_t want = 0;  // the desired copy's hash
    uint64_t got = 0;   // the owned hash of what the member returned
  };
  // After a write of the copy in `cluster` of federated object `key`.
  void Remember(const std::string& key, const std::string& cluster, Written w);
  std::optional<Written> Find(const std::string& key, const std::string& cluster) const;
  void Forget(const std::string& key);
  // The clusters remembered in all (for tests and metrics).
  size_t size() const;

 private:
  mutable Mutex mu_;
  std::map<std::string, std::map<std::string, Written>> written_ GUARDED_BY(mu_);
};

}  // namespace flotilla::federation
