// The resource interpreter's customizations on the federation
// (config.karmada.io/v1alpha1 ResourceInterpreterCustomization;
// docs/interpreter.md, "In the federation"), as every federated kind's
// reconciler reads them: per target kind, the scripts that apply.
//
// The operations that mean the same for every kind are the reconciler's
// (reconciler.h): Retain (what a member keeps of its copy on each update)
// and GetDependencies (dependencies.h). A kind's strategy runs the others
// where they mean something for it (the sync controller: replicas, status
// and health of custom kinds, status of Services).
//
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "base/json.h"
#include "base/mutex.h"
#include "client/client.h"
#include "interpreter/interpreter.h"
#include "runtime/informer.h"

namespace flotilla::federation {

inline const client::ResourceRef kResourceInterpreterCustomizations{
    "config.karmada.io", "v1alpha1", "resourceinterpretercustomizations", false};

// A kind's scripts; null when no customization targets it.
using CustomizationPtr = std::shared_ptr<const interpreter::Customization>;

class Customizations {
 public:
  // `informer` (on kResourceInterpreterCustomizations) must outlive this;
  // Changed() must be called from its handlers.
  explicit Customizations(runtime::Informer& informer) : informer_(informer) {}

  // The scripts for `kind` of `api_version`: per operation, that of the
  // first customization (by name) that targets the kind and defines it.
  // Worked out once per kind between changes.
  CustomizationPtr For(std::string_view api_version, std::string_view kind) const;
  // A customization was added, changed or deleted.
  void Changed();

 private:
  CustomizationPtr Merge(std::string_view api_version, std::string_view kind) const;

  runtime::Informer& informer_;
  mutable Mutex mu_;
  mutable std::map<std::pair<std::string, std::string>, CustomizationPtr> known_ GUARDED_BY(mu_);
  uint64_t generation_ GUARDED_BY(mu_) = 0;
};

// `updated` (a copy about to be written) with what Retain keeps of
// `existing`; `updated` itself without a customization or a retention, or
// when the script fails (logged: a copy is still written as the
// federation wants it).
json::object Retained(const CustomizationPtr& c, json::object updated,
                      const json::object& existing);

}  // namespace flotilla::federation
