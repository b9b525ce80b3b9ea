// QuotaAdmission: kube-apiserver's ResourceQuota admission plugin, for a
// server that serves v1 ResourceQuota (the members; docs/member.md,
// "Resource quotas"). A create in a namespace is checked against every
// quota there that counts it (api/resource_quota.h): its usage on top of
// what the stored objects of its kind already use must stay within each
// quota's spec.hard, and a pod must ask for the cpu and memory a quota
// limits. Usage is counted from the store at the time of the create, not
// from the quota's status (which the member's quota controller writes for
// people to read), and creates a quota counts are serialized from their
// check to their write, so concurrent creates cannot both take the last
// unit. Updates are not charged (a pod's resources cannot change).
//
// Thread-safe.
#pragma once

#include <mutex>
#include <string_view>

#include "api/registry.h"
#include "base/json.h"
#include "base/status.h"
#include "storage/store.h"

namespace flotilla::apiserver {

class QuotaAdmission {
 public:
  explicit QuotaAdmission(storage::Store& store) : store_(store) {}

  // Checks the create of `obj`, an object of `res` in namespace `ns`.
  // Forbidden as Kubernetes words it ("exceeded quota: ...", "failed
  // quota: ..."). When a quota counts the object, the lock returned is
  // held: the caller keeps it until the object is stored (or the store
  // refused it). Otherwise it holds nothing.
  StatusOr<std::unique_lock<std::mutex>> AdmitCreate(const api::Resource& res, std::string_view ns,
                                                     const json::object& obj);

 private:
  storage::Store& store_;
  // One for every namespace: only creates a quota counts take it.
  std::mutex mu_;
};

}  // namespace flotilla::apiserver
