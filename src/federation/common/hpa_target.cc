// The clusters a federated HPA chose for its target (hpa_target.h).
#include "federation/common/hpa_target.h"

#include <algorithm>

#include "api/annotations.h"
#include "api/federated.h"

namespace flotilla::federation {

std::optional<HpaTargetList> HpaTargetListOf(const json::object& target) {
  const json::value* value = api::FindAnnotation(target, api::kHpaTargetClusterListAnnotation);
  if (value == nullptr || !value->is_string()) return std::nullopt;
  StatusOr<json::value> doc = ParseJson(value->get_string());
  if (!doc.ok() || !doc->is_object()) return std::nullopt;
  const json::object& obj = doc->get_object();
  const json::value* hpa = obj.if_contains("hpa");
  const json::value* clusters = obj.if_contains("clusters");
  if (hpa == nullptr || !hpa->is_string() || clusters == nullptr || !clusters->is_array()) {
    return std::nullopt;
  }
  HpaTargetList out{.hpa = std::string(hpa->get_string())};
  for (const json::value& c : clusters->get_array()) {
    if (!c.is_string()) return std::nullopt;
    out.clusters.emplace_back(c.get_string());
  }
  std::sort(out.clusters.begin(), out.clusters.end());
  return out;
}

std::string RenderHpaTargetList(const HpaTargetList& list) {
  json::array clusters;
  std::vector<std::string> sorted = list.clusters;
  std::sort(sorted.begin(), sorted.end());
  for (const std::string& c : sorted) clusters.emplace_back(c);
  return json::serialize(json::object{{"hpa", list.hpa}, {"clusters", std::move(clusters)}});
}

}  // namespace flotilla::federation
