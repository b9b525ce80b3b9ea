// The members' pod Events on the federation (docs/federation.md, "The
// members' pods"): `kubectl describe pod` of a member's pod on the
// federation, and `kubectl get events` there, show what the member's
// scheduler and kubelet said about it.
//
// MemberEventsController copies each Event about a Pod (the members are
// watched with involvedObject.kind=Pod) from every Ready member into the
// federation's Events: in the Event's namespace, named
// <event name>.<cluster>, labelled federation.kubernetes.io/cluster=CLUSTER,
// with the member's involvedObject (the pod's uid, which the pods view
// keeps, so describe finds them), reason, message, source, counts and
// times. It follows the member: a new occurrence (count, lastTimestamp,
// series) updates the copy, an Event deleted there (its TTL) deletes the
// copy. The copies are ordinary Events of the federation, and its
// --event-ttl expires them; those of a cluster that leaves or stops being
// Ready stay until then, as a pod's Events outlive the pod. An Event in a
// namespace the federation does not have is not copied.
//
// It writes, so it runs with the other controllers, on the leader only
// (--controllers=*,-member-events turns it off).
//
// Thread-safe; handlers only enqueue.
#pragma once

#include <string>

#include "base/json.h"
#include "base/mutex.h"
#include "base/status.h"
#include "federation/common/context.h"
#include "runtime/controller_manager.h"
#include "runtime/event_recorder.h"

namespace flotilla::federation::cluster {

struct MemberEventsOptions {
  int workers = 2;
  // How many copies the controller remembers writing (Written below).
  size_t remembered = 16384;
};

class MemberEventsController {
 public:
  static constexpr char kName[] = "member-events";

  // Registers with `ctx` (which must outlive this) before it starts.
  MemberEventsController(FederationContext& ctx, MemberEventsOptions options = {});
  ~MemberEventsController();
  MemberEventsController(const MemberEventsController&) = delete;
  MemberEventsController& operator=(const MemberEventsController&) = delete;

 private:
  // `key` is "CLUSTER/NAMESPACE/NAME" of a member's Event.
  StatusOr<runtime::Result> Reconcile(const std::string& key);
  // Makes the copy `desired` say what it should, `written` (when known) its
  // resourceVersion as last written here; returns its resourceVersion now,
  // empty when it is not copied.
  StatusOr<std::string> Write(json::object desired, const std::string& written);

  // What the controller last wrote of a copy, by "NAMESPACE/COPY NAME": the
  // member Event's resourceVersion it was made from and the copy's own. A
  // member Event seen again unchanged (a relist, a resync) costs no read of
  // the federation; a new occurrence updates the copy without one. A copy
  // not remembered is created first and read only if it exists.
  struct Written {
    std::string from;  // the member Event's resourceVersion
    std::string copy;  // the copy's
  };

  FederationContext& ctx_;
  Mutex written_mu_;
  runtime::Lru<Written> written_ GUARDED_BY(written_mu_);
  runtime::Controller* controller_ = nullptr;
  MemberInformers::HandlerId handler_ = 0;
};

// The name of the federation's copy of `cluster`'s Event `name`:
// "<name>.<cluster>", or, when that is longer than a name may be, the
// first part of it with a hash of the whole.
std::string EventCopyName(const std::string& name, const std::string& cluster);

// The federation's copy of `cluster`'s Event `event`: its own fields, its
// namespace, labels (with the cluster's) and annotations, named by
// EventCopyName; none of the member's identity (uid, resourceVersion,
// managedFields).
json::object EventCopy(const json::object& event, const std::string& cluster);

// What the federation's informers keep of a member's Event (their
// runtime::Transform): the metadata the informer reads, and the Event
// itself without its managedFields as one string under "event", from which
// the copy is made (CachedEvent); nothing else reads a member's Events. A
// string of about 1 KB instead of a parsed tree of about 4: the federation
// caches every pod Event of every member, four or five per pod. Idempotent.
json::object CompactEvent(const json::object& event);
// The Event a CompactEvent holds; `cached` itself when it holds none (an
// Event that was never compacted).
json::object CachedEvent(const json::object& cached);

// Whether the copy `current` says something other than `desired` (an
// EventCopy): what a server leaves empty and what it writes as null or ""
// are the same.
bool EventCopyDiffers(const json::object& current, const json::object& desired);

}  // namespace flotilla::federation::cluster
