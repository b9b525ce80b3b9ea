// What RBAC costs a request (docs/benchmarks.md, "RBAC"): one authorization
// decision against the bootstrap policy plus N RoleBindings (one per
// namespace, each for its own user) for a user allowed by a binding, for a
// user no binding names (every cluster binding and every binding of the
// namespace looked at), and for system:masters, which bypasses RBAC; the
// escalation check of a RoleBinding to `admin`; and a whole GET through the
// API server in process, as the admin (the bypass: the same request without
// RBAC, the peer in this run) and as a user bound to `edit`.
#include <benchmark/benchmark.h>

#include <map>
#include <string>

#include "apiserver/api_server_test_util.h"
#include "apiserver/rbac.h"
#include "apiserver/rbac_bootstrap.h"

namespace flotilla::apiserver {
namespace {

rbac::Policy MakePolicy(int bindings) {
  rbac::Policy policy = rbac::BootstrappedPolicy();
  for (int i = 0; i < bindings; ++i) {
    std::string n = std::to_string(i);
    policy.PutBinding({"team-" + n, "edit", {"ClusterRole", "edit"}, {{"User", "user-" + n, ""}}});
  }
  return policy;
}

RequestAttributes GetConfigMap(const std::string& ns) {
  return {"get", "", "configmaps", "", ns, "settings", true, ""};
}

// One decision for `user` on a ConfigMap in team-0, which must come out as
// `allowed`.
void BM_Authorize(benchmark::State& state, const char* user, bool allowed) {
  rbac::Policy policy = MakePolicy(static_cast<int>(state.range(0)));
  UserInfo info{user, "", {"system:authenticated"}};
  RequestAttributes attrs = GetConfigMap("team-0");
  for (auto _ : state) {
    Decision d = policy.Authorize(info, attrs);
    if (d.allowed != allowed) state.SkipWithError("unexpected decision");
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK_CAPTURE(BM_Authorize, Allowed, "user-0", true)->Arg(10)->Arg(1000)->Arg(10000);
BENCHMARK_CAPTURE(BM_Authorize, Denied, "nobody", false)->Arg(10)->Arg(1000)->Arg(10000);

void BM_EscalationCheckBindAdmin(benchmark::State& state) {
  rbac::Policy policy = MakePolicy(10);
  policy.PutBinding({"team-0", "admin", {"ClusterRole", "admin"}, {{"User", "user-0", ""}}});
  UserInfo user{"user-0", "", {"system:authenticated"}};
  const std::vector<rbac::PolicyRule> wanted = *policy.Role("", "admin");
  state.counters["rules"] = static_cast<double>(wanted.size());
  for (auto _ : state) {
    bool ok = rbac::Covers(policy.RulesFor(user, "team-0"), wanted);
    if (!ok) state.SkipWithError("not covered");
    benchmark::DoNotOptimize(ok);
  }
}
BENCHMARK(BM_EscalationCheckBindAdmin);

// A GET of one ConfigMap through ApiServer::Handle (no TLS, no socket).
class ServerFixture {
 public:
  ServerFixture()
      : s_({.tokens_csv = "tok-admin,admin,1,system:masters\ntok-ann,ann,2\n", .rbac = true}) {
    Do("tok-admin", "POST", "/api/v1/namespaces", R"({"metadata": {"name": "team"}})");
    Do("tok-admin", "POST", "/api/v1/namespaces/team/configmaps",
       R"({"metadata": {"name": "settings"}, "data": {"a": "1"}})");
    Do("tok-admin", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings",
       R"({"metadata": {"name": "ann"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
           "kind": "ClusterRole", "name": "edit"}, "subjects": [{"apiGroup":
           "rbac.authorization.k8s.io", "kind": "User", "name": "ann"}]})");
    s_.api().rbac().WaitForRevision(s_.store().CurrentRevision());
  }

  int Do(const std::string& token, const std::string& method, const std::string& target,
         const std::string& body = "") {
    testing::RecordingResponder resp;
    s_.Do(resp, method, target, body, "application/json", "application/json",
          {{"authorization", "Bearer " + token}});
    return resp.code();
  }

 private:
  testing::TestServer s_;
};

void BM_HandleGet(benchmark::State& state, const char* token) {
  static ServerFixture* fixture = new ServerFixture();
  for (auto _ : state) {
    int code = fixture->Do(token, "GET", "/api/v1/namespaces/team/configmaps/settings");
    if (code != 200) state.SkipWithError("not 200");
  }
}
BENCHMARK_CAPTURE(BM_HandleGet, admin_bypass, "tok-admin");
BENCHMARK_CAPTURE(BM_HandleGet, edit_user_rbac, "tok-ann");

}  // namespace
}  // namespace flotilla::apiserver

BENCHMARK_MAIN();
