// CopyStrategy: the part of a federated kind's controller that copies the
// object as a SyncKind says (kinds.h: labels, annotations and the content
// fields; the member's defaults tolerated or not), for kinds whose
// controller decides itself where a copy belongs and what the federated
// status is: PodDisruptionBudgets (disruption/), Ingresses (ingress/).
// A subclass implements Plan and Finish, and calls StartReconciler at the
// end of its constructor (the reconciler calls its virtual functions).
//
// Thread-safe as its subclass is.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "federation/common/context.h"
#include "federation/common/placer.h"
#include "federation/common/reconciler.h"
#include "federation/sync/kinds.h"

namespace flotilla::federation::sync {

class CopyStrategy : public Strategy {
 public:
  const client::ResourceRef& resource() const override { return kind_.resource; }
  std::string kind() const override { return kind_.kind; }
  bool UpToDate(const Copy& c) const override {
    return CopyUpToDate(kind_, *c.desired, *c.existing);
  }
  json::object Updated(const Copy& c) const override {
    return UpdatedCopy(kind_, *c.desired, *c.existing);
  }

 protected:
  // `ctx` must outlive this.
  CopyStrategy(FederationContext& ctx, const WorkloadOptions& options, SyncKind kind)
      : ctx_(ctx), options_(options), kind_(std::move(kind)) {}

  // Registers the reconciler named `name` with the context.
  void StartReconciler(const std::string& name) {
    reconciler_.emplace(ctx_, *this,
                        ReconcilerOptions{.name = name,
                                          .workers = options_.workers,
                                          .member_change_delay = options_.member_change_delay,
                                          .sync_grace = options_.sync_grace});
  }
  Reconciler& reconciler() { return *reconciler_; }
  const Reconciler& reconciler() const { return *reconciler_; }
  // The copy of `obj` a cluster gets (before what Plan changes in it).
  json::object CopyOf(const json::object& obj) const { return DesiredCopy(kind_, obj); }
  // Enqueues the federated objects of `ns` for which `affected` is true,
  // after the member-change delay: a member change of another kind (a
  // workload, Endpoints) that decides where their copies go.
  void EnqueueWhere(const std::string& ns,
                    const std::function<bool(const json::object&)>& affected) {
    for (const runtime::ObjectPtr& obj : reconciler_->objects().lister().List(ns)) {
      if (affected(*obj)) {
        reconciler_->Enqueue(runtime::ObjectKey(*obj), options_.member_change_delay);
      }
    }
  }

  FederationContext& ctx_;

 private:
  const WorkloadOptions options_;
  const SyncKind kind_;
  std::optional<Reconciler> reconciler_;
};

}  // namespace flotilla::federation::sync
