// End-to-end tests of the runtime against a real `flotilla server` process
// and the real kubectl: an informer sees every change kubectl makes, across a
// watch that really expires (410) and across a server restart, and leader
// election between two processes survives kill -9 of the leader.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <regex>

#include "base/json.h"
#include "base/mutex.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "runtime/e2e_util.h"
#include "runtime/forwarding_client.h"
#include "runtime/informer.h"
#include "runtime/test_util.h"

namespace flotilla::runtime {
namespace {

using namespace std::chrono_literals;
using e2e::Process;
using testing::Eventually;

using testing::kConfigMaps;

class Server {
 public:
  explicit Server(const std::string& dir) : dir_(dir) {}
  // Starts the server on `port` (0: a free one); false if it never got ready.
  bool Start(int port = 0) {
    const char* binary = std::getenv("FLOTILLA_BINARY");
    process_ = std::make_unique<Process>(
        std::vector<std::string>{binary != nullptr ? binary : "flotilla", "server", "--data-dir",
                                 dir_, "--secure-port", std::to_string(port), "--storage", "sqlite",
                                 "--watch-history", "50"},
        dir_ + "/server.log");
    auto ready = process_->WaitForLine(
        [](const std::string& l) { return l.find("Flotilla API server ready at") != l.npos; }, 60s);
    if (!ready) return false;
    std::smatch m;
    if (!std::regex_search(*ready, m, std::regex(R"(https://[^:]+:(\d+))"))) return false;
    port_ = std::stoi(m[1]);
    return true;
  }
  // SIGTERM; the exit code.
  int Stop() {
    process_->Signal(SIGTERM);
    return process_->Wait();
  }
  int port() const { return port_; }
  std::string kubeconfig() const { return dir_ + "/kubeconfig"; }

  e2e::CommandResult Kubectl(const std::string& args) const {
    const char* kubectl = std::getenv("KUBECTL");
    // HOME and the cache in the data dir: nothing cached from other servers.
    return e2e::Run("env -u KUBECONFIG HOME=" + dir_ + " " +
                    (kubectl ? kubectl : "/usr/bin/kubectl") + " --kubeconfig " + kubeconfig() +
                    " --cache-dir " + dir_ + "/kubectl-cache " + args);
  }

  std::unique_ptr<client::Client> NewClient() const {
    client::KubeconfigLoadOptions load;
    load.explicit_path = kubeconfig();
    auto config = client::LoadRestConfig(load);
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    client::RestOptions opts;
    opts.max_retries = 1;
    auto made = client::NewRestClient(*config, opts);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? std::move(made).value() : nullptr;
  }

 private:
  std::string dir_;
  int port_ = 0;
  std::unique_ptr<Process> process_;
};

// Forwards to a real client, except that Close() ends the current watch as
// the server's timeout would (`done` with OK) and holds back new watches
// until Open(): the informer then resumes from a resourceVersion that may
// be long gone.
class GatedClient : public testing::ForwardingClient {
 public:
  using ForwardingClient::ForwardingClient;
  ~GatedClient() override { Open(); }

  StatusOr<std::unique_ptr<client::Watch>> StartWatch(const client::ResourceRef& r,
                                                      const std::string& ns,
                                                      const client::WatchOptions& o,
                                                      client::WatchCallback on_event,
                                                      client::WatchDone on_done) override {
    auto once = std::make_shared<OnceDone>(std::move(on_done));
    {
      MutexLock lock(mu_);
      cv_.Wait(lock, [&]() REQUIRES(mu_) { return !gated_; });
      current_ = once;
      ++watches_;
    }
    return ForwardingClient::StartWatch(r, ns, o, std::move(on_event),
                                        [once](const Status& s) { once->Call(s); });
  }
  void Close() {
    std::shared_ptr<OnceDone> current;
    {
      MutexLock lock(mu_);
      gated_ = true;
      current = current_;
    }
    if (current) current->Call(Status::Ok());
  }
  void Open() {
    MutexLock lock(mu_);
    gated_ = false;
    cv_.NotifyAll();
  }
  int watches() {
    MutexLock lock(mu_);
    return watches_;
  }

 private:
  // Calls `done` once, whoever comes first: Close() or the real stream.
  class OnceDone {
   public:
    explicit OnceDone(client::WatchDone done) : done_(std::move(done)) {}
    void Call(const Status& s) {
      if (!called_.exchange(true) && done_) done_(s);
    }

   private:
    client::WatchDone done_;
    std::atomic<bool> called_ = false;
  };

  Mutex mu_;
  CondVar cv_;
  bool gated_ GUARDED_BY(mu_) = false;
  int watches_ GUARDED_BY(mu_) = 0;
  std::shared_ptr<OnceDone> current_ GUARDED_BY(mu_);
};

// What the handlers were told, checked as it arrives: an add only for an
// unknown key, an update only from the version last delivered to a newer
// one, a delete only of a known key. Anything else is a duplicate or a gap.
class Model {
 public:
  EventHandler Handler() {
    return {[this](const ObjectPtr& o) { Add(*o); },
            [this](const ObjectPtr& o, const ObjectPtr& n) { Update(*o, *n); },
            [this](const ObjectPtr& o) { Delete(*o); }};
  }
  std::map<std::string, std::string> State() {
    MutexLock lock(mu_);
    return state_;
  }
  std::vector<std::string> Errors() {
    MutexLock lock(mu_);
    return errors_;
  }

 private:
  void Add(const json::object& obj) {
    MutexLock lock(mu_);
    std::string key = ObjectKey(obj);
    if (state_.count(key)) errors_.push_back("add of known " + key);
    state_[key] = ResourceVersionOf(obj);
  }
  void Update(const json::object& old_obj, const json::object& obj) {
    MutexLock lock(mu_);
    std::string key = ObjectKey(obj);
    auto it = state_.find(key);
    if (it == state_.end() || it->second != ResourceVersionOf(old_obj)) {
      errors_.push_back("update of " + key + " from a version not delivered");
    }
    if (std::stoll(ResourceVersionOf(obj)) <= std::stoll(ResourceVersionOf(old_obj))) {
      errors_.push_back("update of " + key + " to an older version");
    }
    state_[key] = ResourceVersionOf(obj);
  }
  void Delete(const json::object& obj) {
    MutexLock lock(mu_);
    std::string key = ObjectKey(obj);
    if (state_.erase(key) == 0) errors_.push_back("delete of unknown " + key);
  }

  Mutex mu_;
  std::map<std::string, std::string> state_ GUARDED_BY(mu_);  // key -> resourceVersion
  std::vector<std::string> errors_ GUARDED_BY(mu_);
};

// key -> resourceVersion of the ConfigMaps in `ns`, as kubectl lists them.
std::map<std::string, std::string> KubectlState(const Server& server, const std::string& ns) {
  std::map<std::string, std::string> out;
  auto got = server.Kubectl("get configmaps -n " + ns + " -o json");
  EXPECT_EQ(got.code, 0);
  auto list = ParseJsonObject(got.out);
  if (!list.ok()) return out;
  for (const auto& item : *GetArray(*list, "items")) {
    out[ObjectKey(item.as_object())] = ResourceVersionOf(item.as_object());
  }
  return out;
}

std::map<std::string, std::string> CacheState(const Informer& informer) {
  std::map<std::string, std::string> out;
  for (const auto& obj : informer.cache().List()) out[ObjectKey(*obj)] = ResourceVersionOf(*obj);
  return out;
}

// A v1 List of `n` ConfigMaps named prefix000.. for `kubectl apply -f`.
json::object ConfigMapList(const std::string& prefix, int n) {
  json::array items;
  for (int i = 0; i < n; ++i) {
    char name[64];
    std::snprintf(name, sizeof(name), "%s%03d", prefix.c_str(), i);
    items.push_back(json::object{{"apiVersion", "v1"},
                                 {"kind", "ConfigMap"},
                                 {"metadata", {{"name", name}}},
                                 {"data", {{"i", std::to_string(i)}}}});
  }
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
}

class RuntimeE2eTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.Start()) << "see " << dir_.path() << "/server.log"; }
  void TearDown() override {
    if (HasFailure()) {
      std::printf("server log:\n%s\n",
                  e2e::Run("tail -n 50 " + dir_.path() + "/server.log").out.c_str());
    }
  }
  void MustKubectl(const std::string& args) {
    auto r = server_.Kubectl(args + " 2>&1");
    ASSERT_EQ(r.code, 0) << "kubectl " << args << ": " << r.out;
  }
  // `kubectl apply -f` of a JSON document, so that every object carries
  // exactly the fields the test gives it.
  void MustApply(const json::object& doc, const std::string& ns = "") {
    std::string file = dir_.path() + "/apply.json";
    std::FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    // A List goes as a YAML stream of its items: kubectl's validation of a
    // v1 List asks the server for what it does not serve.
    std::string text;
    const json::array* items = GetArray(doc, "items");
    if (items == nullptr) text = ToJson(doc);
    for (size_t i = 0; items != nullptr && i < items->size(); ++i) {
      text += "---\n" + ToJson((*items)[i]) + "\n";
    }
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    MustKubectl("apply -f " + file + (ns.empty() ? "" : " -n " + ns));
  }

  e2e::TempDir dir_;
  Server server_{dir_.path()};
};

TEST_F(RuntimeE2eTest, InformerSeesEveryKubectlChangeAcrossWatchExpiryAndRestart) {
  const std::string ns = "informer-e2e";
  MustApply({{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
  MustApply(ConfigMapList("a", 5), ns);
  auto rest = server_.NewClient();
  ASSERT_NE(rest, nullptr);
  GatedClient gated(*rest);
  InformerOptions options;
  options.ns = ns;
  options.backoff_initial = 100ms;
  options.backoff_max = 1s;
  Informer informer(gated, kConfigMaps, RealClock(), options);
  Model model;
  informer.AddEventHandler(model.Handler());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync());
  auto converged = [&] {
    return Eventually([&] {
      auto want = KubectlState(server_, ns);
      return model.State() == want && CacheState(informer) == want;
    });
  };
  EXPECT_TRUE(converged());
  EXPECT_EQ(model.State().size(), 5u);

  // Changes while watching.
  MustApply(ConfigMapList("a", 6), ns);  // creates a005
  MustKubectl("label configmap a000 -n " + ns + " tier=web");
  MustKubectl("patch configmap a000 -n " + ns + " --type merge -p '{\"data\":{\"k\":\"w\"}}'");
  MustKubectl("delete configmap a001 -n " + ns);
  EXPECT_TRUE(converged());

  // The watch ends and stays away while 100+ writes push its
  // resourceVersion out of the server's 50-event history: resuming gets 410.
  ASSERT_TRUE(Eventually([&] { return gated.watches() >= 1; }));
  gated.Close();
  MustApply(ConfigMapList("b", 100), ns);
  MustKubectl("delete configmap a002 -n " + ns);
  MustKubectl("annotate configmap a003 -n " + ns + " note=changed");
  MustKubectl("delete configmap b007 b042 -n " + ns);
  InformerStats before = informer.Stats();
  gated.Open();
  EXPECT_TRUE(converged());
  InformerStats after = informer.Stats();
  EXPECT_GT(after.watch_failures, before.watch_failures) << "the resumed watch got 410";
  EXPECT_GT(after.lists, before.lists) << "and the informer listed again";
  EXPECT_EQ(model.State().size(), 4u + 98u);

  // A server restart on the same data dir and port.
  ASSERT_EQ(server_.Stop(), 0);
  ASSERT_TRUE(server_.Start(server_.port()));
  MustApply(ConfigMapList("c", 1), ns);
  MustKubectl("delete configmap a004 -n " + ns);
  MustKubectl("label configmap a005 -n " + ns + " after=restart");
  EXPECT_TRUE(converged());
  EXPECT_TRUE(model.Errors().empty()) << ::testing::PrintToString(model.Errors());
  informer.Stop();
}

json::object Lease(const Server& server) {
  auto got = server.Kubectl("get lease e2e-lease -n default -o json");
  auto lease =
      got.code == 0 ? ParseJsonObject(got.out) : StatusOr<json::object>(Status::NotFound(""));
  return lease.ok() ? *lease : json::object{};
}

std::string LeaseField(const json::object& lease, const std::string& field) {
  const json::value* v = Find(lease, "spec." + field);
  if (v == nullptr) return "";
  return v->is_string() ? std::string(v->as_string()) : json::serialize(*v);
}

TEST_F(RuntimeE2eTest, LeaderElectionBetweenProcessesSurvivesKillOfTheLeader) {
  auto candidate = [&](const std::string& id) {
    return std::make_unique<Process>(
        std::vector<std::string>{FLOTILLA_LEADER_CANDIDATE, "--kubeconfig", server_.kubeconfig(),
                                 "--identity", id, "--name", "e2e-lease", "--lease-duration-ms",
                                 "3000", "--renew-deadline-ms", "2000", "--retry-period-ms", "500"},
        dir_.path() + "/" + id + ".log");
  };
  auto is = [](const std::string& want) {
    return [want](const std::string& line) { return line == want; };
  };
  auto alpha = candidate("alpha");
  ASSERT_TRUE(alpha->WaitForLine(is("leading alpha"), 30s));
  auto beta = candidate("beta");
  ASSERT_TRUE(beta->WaitForLine(is("leader alpha"), 30s));
  // alpha keeps renewing for more than a lease duration; beta waits.
  TimePoint acquired, renewed;
  ASSERT_TRUE(Eventually([&] {
    json::object lease = Lease(server_);
    return ParseRfc3339(LeaseField(lease, "acquireTime"), &acquired) &&
           ParseRfc3339(LeaseField(lease, "renewTime"), &renewed) && renewed > acquired + 4s;
  }));
  EXPECT_FALSE(beta->WaitForLine(is("leading beta"), 0s)) << "two leaders at once";

  alpha->Signal(SIGKILL);
  alpha->Wait();
  auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(beta->WaitForLine(is("leading beta"), 30s));
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - killed);
  RecordProperty("takeover_ms", std::to_string(took.count()));
  std::printf("beta took over %lld ms after alpha was killed (lease duration 3000 ms)\n",
              static_cast<long long>(took.count()));
  json::object lease = Lease(server_);
  EXPECT_EQ(LeaseField(lease, "holderIdentity"), "beta");
  EXPECT_EQ(LeaseField(lease, "leaseTransitions"), "1");
  EXPECT_EQ(LeaseField(lease, "leaseDurationSeconds"), "3");

  beta->Signal(SIGTERM);
  EXPECT_TRUE(beta->WaitForLine(is("stopped beta"), 30s));
  EXPECT_EQ(beta->Wait(), 0);
  EXPECT_EQ(LeaseField(Lease(server_), "holderIdentity"), "") << "released on SIGTERM";
}

}  // namespace
}  // namespace flotilla::runtime
