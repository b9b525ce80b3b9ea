// Any text as a label selector and as a field selector (as they come in
// labelSelector= and fieldSelector=): a selector that parses must print a
// canonical form that parses back to the same selector (a field selector's
// terms may come back in another order, as in apimachinery), and match
// objects without failing; the same text as a list's query through the
// request path must get a clean 2xx or 4xx.
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "api/fields.h"
#include "api/labels.h"
#include "apiserver/url.h"
#include "fuzz/api_server.h"
#include "fuzz/targets.h"

namespace flotilla::fuzz {

void Selectors(std::span<const uint8_t> data) {
  std::string_view text = AsText(data);
  static const json::object labels{{"app", "web"}, {"tier", "front"}, {"version", "3"}};
  if (auto s = api::LabelSelector::Parse(text); s.ok()) {
    std::string canonical = s->ToString();
    auto again = api::LabelSelector::Parse(canonical);
    if (!again.ok()) Broken("a label selector's canonical form does not parse", canonical);
    if (again->ToString() != canonical)
      Broken("a label selector's canonical form moves", canonical);
    (void)s->Matches(&labels);
  }
  if (auto s = api::FieldSelector::Parse(text); s.ok()) {
    std::string canonical = s->ToString();
    auto again = api::FieldSelector::Parse(canonical);
    if (!again.ok()) Broken("a field selector's canonical form does not parse", canonical);
    // The same terms, maybe in another order: apimachinery sorts the terms
    // as written, before "==" becomes "=", and so do we.
    auto terms = [](const api::FieldSelector& f) {
      std::vector<std::tuple<std::string, bool, std::string>> out;
      for (const api::FieldRequirement& r : f.requirements())
        out.emplace_back(r.field, r.equals, r.value);
      std::sort(out.begin(), out.end());
      return out;
    };
    if (terms(*again) != terms(*s))
      Broken("a field selector's canonical form means another", canonical);
    (void)s->Matches([](std::string_view field) -> std::optional<std::string> {
      if (field == "metadata.name") return "web";
      if (field == "metadata.namespace") return "default";
      return std::nullopt;
    });
  }
  std::string encoded = PercentEncode(text);
  for (const char* param : {"labelSelector", "fieldSelector"}) {
    std::string target =
        std::string("/api/v1/namespaces/default/pods?limit=1&") + param + "=" + encoded;
    ExpectClean(Call("GET", target, "", ""), target);
  }
}

}  // namespace flotilla::fuzz
