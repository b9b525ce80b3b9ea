// Any bytes as an audit policy file (--audit-policy-file): Parse accepts a
// Policy or says why not, never crashes; a policy it accepts decides every
// kind of request without crashing and with a level it knows.
#include "apiserver/audit.h"
#include "fuzz/targets.h"

namespace flotilla::fuzz {

void AuditPolicy(std::span<const uint8_t> data) {
  auto policy = apiserver::AuditPolicy::Parse(AsText(data));
  if (!policy.ok()) return;
  const apiserver::UserInfo users[] = {
      {"alice", "", {"system:authenticated"}}, {"system:anonymous", "", {}}, {"", "", {"g"}}};
  const apiserver::RequestAttributes requests[] = {
      {"get", "", "pods", "log", "default", "p", true, ""},
      {"create", "apps", "deployments", "", "ns", "", true, ""},
      {"update", "apps", "deployments", "scale", "", "web", true, ""},
      {"get", "", "", "", "", "", false, "/healthz/etcd"},
      {"post", "", "", "", "", "", false, ""}};
  for (const auto& user : users) {
    for (const auto& attrs : requests) {
      auto [level, omit] = policy->Decide(user, attrs);
      if (level < apiserver::AuditLevel::kNone || level > apiserver::AuditLevel::kRequestResponse) {
        Broken("a level outside the four", AsText(data));
      }
    }
  }
}

}  // namespace flotilla::fuzz
