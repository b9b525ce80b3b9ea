// What a pod asks of a node and what a node offers, as kube-scheduler's
// NodeResourcesFit plugin counts them: cpu in millicores, memory and
// ephemeral storage in bytes, and pods. Pure functions; thread-safe.
// Shared by the member's scheduler and the federation's room estimate
// (federation/applications/applications.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/json.h"

namespace flotilla::api {

struct Resources {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t ephemeral_storage = 0;
  int64_t pods = 0;

  Resources& operator+=(const Resources& o) {
    milli_cpu += o.milli_cpu;
    memory += o.memory;
    ephemeral_storage += o.ephemeral_storage;
    pods += o.pods;
    return *this;
  }
  Resources& operator-=(const Resources& o) {
    milli_cpu -= o.milli_cpu;
    memory -= o.memory;
    ephemeral_storage -= o.ephemeral_storage;
    pods -= o.pods;
    return *this;
  }
};

// A resource.Quantity ("100m", "0.5", "2", "1e3", "64Mi", "1.5Gi", or a JSON
// number) times `scale`, rounded up as Quantity.Value() (scale 1) and
// MilliValue() (scale 1000) round. nullopt when it is not a quantity;
// values beyond int64 saturate.
std::optional<int64_t> ParseQuantity(std::string_view text, int64_t scale);
std::optional<int64_t> QuantityValue(const json::value& q, int64_t scale);

// resourcehelper.PodRequests: the sum of the containers' requests (a
// container's limit stands in for a missing request, as API defaulting
// does), raised to the largest init container's request where that is
// higher (restartable init containers, sidecars, add to the sum), plus
// spec.overhead. `pods` is 1.
Resources PodRequests(const json::object& pod);

// The requests kube-scheduler scores with: a container without a cpu or
// memory request counts as 100m and 200Mi (schedutil's non-zero defaults),
// so that pods without requests still spread.
Resources NonZeroPodRequests(const json::object& pod);

// resourcehelper.PodLimits: the same sums over the containers' limits (a
// container without a limit adds 0), plus spec.overhead. `pods` is 1.
Resources PodLimits(const json::object& pod);

// status.allocatable of a node; absent entries are 0.
Resources Allocatable(const json::object& node);

// A node new pods may go to: its Ready condition True and not
// spec.unschedulable.
bool NodeSchedulable(const json::object& node);
// A pod that holds its node's resources: bound, not Succeeded or Failed,
// not being deleted.
bool PodHoldsNode(const json::object& pod);

// Quantities as resource.Quantity's String() writes them: cpu millicores in
// DecimalSI ("1500m", "2"), bytes in BinarySI when a power of 1024 divides
// them ("64Gi", "1536Mi"), else in bytes.
std::string FormatMilliCpu(int64_t milli);
std::string FormatBytes(int64_t bytes);

}  // namespace flotilla::api
