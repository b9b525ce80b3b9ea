// A federated set's ControllerRevisions (revision_history.h).
#include "federation/common/revision_history.h"

#include "api/owner.h"
#include "api/views.h"
#include "client/resources.h"

namespace flotilla::federation {
namespace {

bool IsRevisionOf(const json::object& rev, const json::object& set) {
  api::ObjectView owner(set);
  std::string_view name = api::ObjectView(rev).name();
  std::string prefix = std::string(owner.name()) + "-";
  if (!name.starts_with(prefix) || name.find('-', prefix.size()) != std::string_view::npos) {
    return false;
  }
  const json::object* ref = api::ControllerRef(rev);
  return ref == nullptr || GetString(*ref, "uid") == owner.uid();
}

}  // namespace

std::vector<runtime::ObjectPtr> RevisionsOf(runtime::Informer& revisions, const json::object& set) {
  std::vector<runtime::ObjectPtr> out;
  for (runtime::ObjectPtr& rev : revisions.lister().List(api::ObjectView(set).ns())) {
    if (IsRevisionOf(*rev, set)) out.push_back(std::move(rev));
  }
  return out;
}

StatusOr<bool> DeleteRevisions(client::Client& fed, runtime::Informer& revisions,
                               const json::object& set) {
  std::string ns(api::ObjectView(set).ns());
  std::vector<runtime::ObjectPtr> found = RevisionsOf(revisions, set);
  if (found.empty()) {
    FLOTILLA_ASSIGN_OR_RETURN(client::ObjectList live,
                              fed.List(client::kControllerRevisions, ns, {}));
    for (json::object& rev : live.items) {
      if (IsRevisionOf(rev, set))
        found.push_back(std::make_shared<const json::object>(std::move(rev)));
    }
  }
  for (const runtime::ObjectPtr& rev : found) {
    Status s =
        fed.Delete(client::kControllerRevisions, ns, std::string(api::ObjectView(*rev).name()));
    if (!s.ok() && !s.Is(Reason::kNotFound)) return s;
  }
  return found.empty();
}

}  // namespace flotilla::federation
