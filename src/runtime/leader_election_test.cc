#include "runtime/leader_election.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "base/mutex.h"
#include "runtime/fake_client.h"
#include "runtime/forwarding_client.h"
#include "runtime/test_util.h"

namespace flotilla::runtime {
namespace {

using namespace std::chrono_literals;
using client::ResourceRef;
using testing::Eventually;

// Fails the calls leader election makes (Get, Create, Update) after Cut(),
// as for a candidate cut off from the API server; after Hang() they block
// until Release(), then fail, as for a server (or its store) that does not
// answer.
class PartitionableClient : public testing::ForwardingClient {
 public:
  using ForwardingClient::ForwardingClient;
  void Cut() { cut_ = true; }
  void Hang() {
    MutexLock lock(mu_);
    hang_ = true;
  }
  void Release() {
    {
      MutexLock lock(mu_);
      hang_ = false;
      cut_ = true;
    }
    cv_.NotifyAll();
  }
  int blocked() {
    MutexLock lock(mu_);
    return blocked_;
  }

  StatusOr<json::object> Get(const ResourceRef& r, const std::string& ns,
                             const std::string& name) override {
    if (Unreachable()) return Down();
    return ForwardingClient::Get(r, ns, name);
  }
  StatusOr<json::object> Create(const ResourceRef& r, const std::string& ns,
                                const json::object& obj) override {
    if (Unreachable()) return Down();
    return ForwardingClient::Create(r, ns, obj);
  }
  StatusOr<json::object> Update(const ResourceRef& r, const std::string& ns,
                                const json::object& obj) override {
    if (Unreachable()) return Down();
    return ForwardingClient::Update(r, ns, obj);
  }

 private:
  static Status Down() { return Status::Unavailable("connection refused"); }
  bool Unreachable() {
    MutexLock lock(mu_);
    ++blocked_;
    cv_.Wait(lock, [&]() REQUIRES(mu_) { return !hang_; });
    --blocked_;
    return cut_;
  }
  Mutex mu_;
  CondVar cv_;
  bool hang_ GUARDED_BY(mu_) = false;
  int blocked_ GUARDED_BY(mu_) = 0;
  std::atomic<bool> cut_ = false;
};

struct Candidate {
  std::string id;
  std::unique_ptr<PartitionableClient> client;
  std::unique_ptr<LeaderElector> elector;
  std::atomic<int> started = 0, stopped = 0;
  std::vector<std::string> new_leaders;  // written on the elector's thread only
  TimePoint started_at, stopped_at;
};

class LeaderElectionTest : public ::testing::Test {
 protected:
  // Starts `n` candidates at the same instant and lets them settle.
  void StartCandidates(int n, bool release_on_stop = true) {
    for (int i = 0; i < n; ++i) {
      auto c = std::make_unique<Candidate>();
      c->id = "candidate-" + std::to_string(i);
      c->client = std::make_unique<PartitionableClient>(fake_);
      LeaderElectionConfig config{"flotilla-system", "flotilla-controllers", c->id};
      config.release_on_stop = release_on_stop;
      Candidate* raw = c.get();
      LeaderCallbacks callbacks{[this, raw] {
                                  raw->started_at = clock_.Now();
                                  ++raw->started;
                                  if (++leading_ > 1) ++overlaps_;
                                },
                                [this, raw] {
                                  raw->stopped_at = clock_.Now();
                                  ++raw->stopped;
                                  --leading_;
                                },
                                [raw](const std::string& id) { raw->new_leaders.push_back(id); }};
      auto elector = LeaderElector::Create(*c->client, clock_, config, callbacks);
      ASSERT_TRUE(elector.ok()) << elector.status().ToString();
      c->elector = std::move(elector).value();
      candidates_.push_back(std::move(c));
    }
    for (auto& c : candidates_) c->elector->Start();
    Settle();
  }

  // Waits until every running elector has done what is due at the current
  // time and sleeps towards a later deadline.
  // A candidate blocked in a call (Hang) counts as settled once its
  // watchdog has.
  void Settle() {
    ASSERT_TRUE(Eventually([&] {
      for (auto& c : candidates_) {
        if (c->elector == nullptr) continue;
        if (c->elector->WatchdogSleepingUntil() <= clock_.Now()) return false;
        if (c->client->blocked() == 0 && c->elector->SleepingUntil() <= clock_.Now()) {
          return false;
        }
      }
      return true;
    }));
  }

  void Step(Duration d) {
    clock_.Advance(d);
    Settle();
  }

  // Steps the clock a second at a time (at most 30) until a candidate other
  // than `old` leads, checking that never two lead at once.
  Candidate* StepUntilAnotherLeads(Candidate* old) {
    for (int i = 0; i < 30; ++i) {
      Step(1s);
      std::vector<Candidate*> leaders = Leaders();
      EXPECT_LE(leaders.size(), 1u);
      if (leaders.size() == 1 && leaders[0] != old) return leaders[0];
    }
    ADD_FAILURE() << "nobody took over from " << old->id;
    return nullptr;
  }

  std::vector<Candidate*> Leaders() {
    std::vector<Candidate*> out;
    for (auto& c : candidates_) {
      if (c->elector != nullptr && c->elector->IsLeading()) out.push_back(c.get());
    }
    return out;
  }

  LeaderElectionRecord Stored() {
    auto lease = fake_.Get(kLeases, "flotilla-system", "flotilla-controllers");
    EXPECT_TRUE(lease.ok());
    return LeaderElectionRecord::FromLeaseSpec(lease.ok() ? GetObject(*lease, "spec") : nullptr);
  }

  FakeClock clock_;
  FakeClient fake_{clock_};
  std::vector<std::unique_ptr<Candidate>> candidates_;
  std::atomic<int> leading_ = 0, overlaps_ = 0;
};

TEST_F(LeaderElectionTest, ExactlyOneLeaderWhileItKeepsRenewing) {
  StartCandidates(3);
  std::vector<Candidate*> leaders = Leaders();
  ASSERT_EQ(leaders.size(), 1u);
  Candidate* leader = leaders[0];
  LeaderElectionRecord record = Stored();
  EXPECT_EQ(record.holder_identity, leader->id);
  EXPECT_EQ(record.lease_duration_seconds, 15);
  EXPECT_EQ(record.leader_transitions, 0);
  EXPECT_EQ(record.acquire_time, FormatRfc3339Micro(clock_.Now()));
  for (int i = 0; i < 60; ++i) {
    Step(1s);
    ASSERT_EQ(Leaders(), std::vector<Candidate*>{leader}) << "at step " << i;
  }
  record = Stored();
  EXPECT_EQ(record.holder_identity, leader->id);
  EXPECT_EQ(record.renew_time, FormatRfc3339Micro(clock_.Now()));
  EXPECT_EQ(record.leader_transitions, 0);
  for (auto& c : candidates_) {
    EXPECT_EQ(c->new_leaders, std::vector<std::string>{leader->id}) << c->id;
  }
  EXPECT_EQ(overlaps_, 0);
}

TEST_F(LeaderElectionTest, AnotherTakesOverAfterTheLeaseDurationWhenTheLeaderStopsRenewing) {
  StartCandidates(3);
  ASSERT_EQ(Leaders().size(), 1u);
  Candidate* old_leader = Leaders()[0];
  Step(2s);  // one renewal
  LeaderElectionRecord last = Stored();
  TimePoint last_renew = clock_.Now();
  ASSERT_EQ(last.renew_time, FormatRfc3339Micro(last_renew));
  old_leader->client->Cut();

  Candidate* new_leader = StepUntilAnotherLeads(old_leader);
  ASSERT_NE(new_leader, nullptr);
  // The cut-off leader gave up after its renew deadline, before the lease
  // could expire for anyone else.
  EXPECT_EQ(old_leader->stopped, 1);
  EXPECT_LE(old_leader->stopped_at, last_renew + 2s + 10s);
  EXPECT_LT(old_leader->stopped_at, new_leader->started_at);
  // The others waited for a full lease duration of an unchanged record,
  // timed from when they saw it (up to one retry after it was written), and
  // tried again the moment it ran out.
  EXPECT_GE(new_leader->started_at, last_renew + 15s);
  EXPECT_LE(new_leader->started_at, last_renew + 15s + 2s);
  LeaderElectionRecord now = Stored();
  EXPECT_EQ(now.holder_identity, new_leader->id);
  EXPECT_EQ(now.leader_transitions, 1);
  EXPECT_EQ(overlaps_, 0);
  for (int i = 0; i < 30; ++i) {
    Step(1s);
    ASSERT_EQ(Leaders(), std::vector<Candidate*>{new_leader});
  }
}

// A renewal stuck in a call that does not return (its API server or store
// not answering) does not keep the leader leading: the watchdog ends its
// term at the renew deadline, before anyone else can take over.
TEST_F(LeaderElectionTest, RenewalBlockedInACallStillEndsTheTermAtTheDeadline) {
  StartCandidates(2);
  ASSERT_EQ(Leaders().size(), 1u);
  Candidate* old_leader = Leaders()[0];
  Step(2s);  // one renewal
  TimePoint last_renew = clock_.Now();
  ASSERT_EQ(Stored().renew_time, FormatRfc3339Micro(last_renew));
  old_leader->client->Hang();

  Candidate* new_leader = StepUntilAnotherLeads(old_leader);
  ASSERT_NE(new_leader, nullptr);
  EXPECT_EQ(old_leader->client->blocked(), 1);  // still stuck in its renewal
  EXPECT_EQ(old_leader->stopped, 1);
  EXPECT_LE(old_leader->stopped_at, last_renew + 2s + 10s);
  EXPECT_LT(old_leader->stopped_at, new_leader->started_at);
  EXPECT_EQ(overlaps_, 0);

  // Its call returns (failing); it is a candidate again and the new leader
  // keeps the lease.
  old_leader->client->Release();
  for (int i = 0; i < 20; ++i) {
    Step(1s);
    ASSERT_EQ(Leaders(), std::vector<Candidate*>{new_leader});
  }
  EXPECT_EQ(old_leader->started, 1);
  EXPECT_EQ(old_leader->stopped, 1);
}

TEST_F(LeaderElectionTest, KilledLeaderIsReplacedAfterTheLeaseDuration) {
  StartCandidates(2, /*release_on_stop=*/false);
  Candidate* old_leader = Leaders()[0];
  TimePoint killed_at = clock_.Now();
  old_leader->elector->Stop();  // like kill -9: the lease is left as it was
  old_leader->elector.reset();
  Candidate* other =
      candidates_[0].get() == old_leader ? candidates_[1].get() : candidates_[0].get();
  while (!other->elector->IsLeading()) {
    ASSERT_LT(clock_.Now(), killed_at + 30s);
    Step(1s);
  }
  // It first saw the record at most one retry (2 s) after the leader wrote
  // it, and tried again exactly when the lease ran out from then, not at its
  // next retry tick after that.
  EXPECT_GE(other->started_at, killed_at + 15s);
  EXPECT_LE(other->started_at, killed_at + 15s + 2s);
  EXPECT_EQ(Stored().holder_identity, other->id);
}

TEST_F(LeaderElectionTest, ReleasedLeaseIsTakenAtTheNextTry) {
  StartCandidates(2);
  Candidate* old_leader = Leaders()[0];
  TimePoint stopped_at = clock_.Now();
  old_leader->elector->Stop();
  EXPECT_EQ(old_leader->stopped, 1);
  EXPECT_EQ(Stored().holder_identity, "");
  old_leader->elector.reset();
  Candidate* other =
      candidates_[0].get() == old_leader ? candidates_[1].get() : candidates_[0].get();
  Step(2s);
  EXPECT_TRUE(other->elector->IsLeading());
  EXPECT_EQ(other->started_at, stopped_at + 2s);
  EXPECT_EQ(Stored().leader_transitions, 1);
}

TEST_F(LeaderElectionTest, RejectsInconsistentDurations) {
  LeaderElectionConfig config{"ns", "lease", "me"};
  config.renew_deadline = 20s;
  EXPECT_TRUE(LeaderElector::Create(fake_, clock_, config, {}).status().Is(Reason::kBadRequest));
  config = {"ns", "lease", "me"};
  config.retry_period = 9s;
  EXPECT_TRUE(LeaderElector::Create(fake_, clock_, config, {}).status().Is(Reason::kBadRequest));
  config = {"ns", "lease", ""};
  EXPECT_TRUE(LeaderElector::Create(fake_, clock_, config, {}).status().Is(Reason::kBadRequest));
}

}  // namespace
}  // namespace flotilla::runtime
