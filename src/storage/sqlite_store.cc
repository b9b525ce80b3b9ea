// The sqlite backend: the shared State in front of a durable SqliteLog.
//
// Group commit without a commit thread: writers queue their requests; the
// first that finds no commit running leads one. It takes everything queued
// (its own request and whatever came meanwhile), prepares it in order
// against the state plus the batch's own earlier writes (assigning
// revisions and running mutations), writes the batch in one transaction
// (one fsync), only then applies it to the State, which makes it visible to
// reads and watchers, and wakes the batch's writers; the writer of the
// oldest request still queued leads the next. More concurrent writers mean
// bigger batches, not more fsyncs, and a lone writer commits on its own
// thread, with no hand-off to another and back.
//
// Writers are woken by name, each on a futex of its own (Waiter), not all
// at once on a condition variable: a commit's end wakes its batch's
// writers, which return without taking the store's mutex again, and the
// next leader; nobody else. (A broadcast woke every waiting writer to
// contend for the mutex and mostly sleep again: about two context switches
// per create, docs/benchmarks.md.)
#include <linux/futex.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <span>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/io.h"
#include "base/mutex.h"
#include "storage/expiry.h"
#include "storage/sqlite_log.h"
#include "storage/state.h"
#include "storage/store.h"

namespace flotilla::storage {
namespace {

// A futex of one's own: sleeps while `word` is `expected` (it may return
// early: callers look again); wakes one sleeper on `word`. (Not
// std::atomic::wait, which first spins with sched_yield: on 2 cores a
// context switch of its own for every writer that waits.)
void FutexWait(uint32_t* word, uint32_t expected) {
  syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void FutexWake(uint32_t* word) {
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

// How far the database's compaction may lag behind the in-memory history's,
// in revisions, before a commit carries a compaction with it.
constexpr int64_t kCompactLag = 1024;

class SqliteStore final : public Store {
 public:
  SqliteStore(std::unique_ptr<SqliteLog> log, const StoreOptions& opts)
      : clock_(opts.clock ? *opts.clock : RealClock()),
        log_(std::move(log)),
        state_(opts.history_events, opts.history_window, &clock_),
        expiry_(std::make_unique<Expiry>(
            clock_, [this](const std::vector<Expiry::Due>& due) { DeleteExpired(due); })) {}

  ~SqliteStore() override {
    {
      MutexLock lock(mu_);
      closing_ = true;
      WakeAllLocked();
    }
    done_cv_.NotifyAll();
    // The expiry thread's deletes queued before closing are committed; later ones
    // are refused, and before Start (a failed Load) none waits.
    expiry_->Stop();  // a commit in flight may still call its Note
    // Writes queued before closing are committed before the log goes.
    MutexLock lock(mu_);
    done_cv_.Wait(lock, [this]() REQUIRES(mu_) { return !leading_ && queue_.empty(); });
  }

  // Rebuilds the state from the log. REQUIRES: before Start.
  Status Load();
  // From here on, writes commit.
  void Start() {
    MutexLock lock(mu_);
    started_ = true;
    WakeAllLocked();
  }

  StatusOr<KeyValue> Get(std::string_view key) override { return state_.Get(key); }

  StatusOr<ListResult> List(std::string_view prefix, const ListOptions& opts) override {
    return state_.List(prefix, opts);
  }

  StatusOr<int64_t> Count(std::string_view prefix) override { return state_.Count(prefix); }
  bool SharesObjects(std::string_view key) override { return state_.SharesObjects(key); }

  using Store::Create;
  StatusOr<KeyValue> Create(std::string_view key, const Mutation& mutation, Duration ttl) override {
    Request req{{WriteKind::kCreate, key, 0, &mutation, Deadline(clock_, ttl)}};
    return Submit(req);
  }

  using Store::Update;
  StatusOr<KeyValue> Update(std::string_view key, int64_t expected_mod_revision,
                            const Mutation& mutation, Duration ttl) override {
    Request req{{WriteKind::kUpdate, key, expected_mod_revision, &mutation, Deadline(clock_, ttl)}};
    return Submit(req);
  }

  StatusOr<KeyValue> Delete(std::string_view key, int64_t expected_mod_revision) override {
    Request req{{WriteKind::kDelete, key, expected_mod_revision, nullptr}};
    return Submit(req);
  }

  StatusOr<std::unique_ptr<Watcher>> Watch(std::string_view prefix, int64_t after_revision,
                                           WatchCallback callback) override {
    return state_.Watch(prefix, after_revision, std::move(callback));
  }
  StatusOr<std::unique_ptr<Watcher>> WatchWithObjects(std::string_view prefix,
                                                      int64_t after_revision,
                                                      WatchCallback callback) override {
    return state_.Watch(prefix, after_revision, std::move(callback), true);
  }

  int64_t CurrentRevision() override { return state_.revision(); }
  int64_t CompactedRevision() override { return state_.compacted(); }

  // Compacts the memory history at once, then records the compaction in the
  // database before returning.
  Status Compact(int64_t revision) override {
    FLOTILLA_RETURN_IF_ERROR(state_.Compact(revision));
    Request req{{}, /*compact=*/true};
    return Submit(req).status();
  }

 private:
  // A queued write (or, with `compact`, a request to persist the state's
  // compacted revision). Lives on the writer's stack until `done`.
  // A writer in SubmitAll, asleep on `wake` while another leads.
  struct Waiter {
    // Its requests not yet done, under the store's mu_ (the analysis
    // cannot name it here).
    size_t pending = 0;
    // kAsleep; kDone once every request is done (it returns without the
    // mutex); kLook to look again (lead, the store started or closing).
    // Read and written through std::atomic_ref; a futex word.
    alignas(std::atomic_ref<uint32_t>::required_alignment) uint32_t wake = 0;
  };
  static constexpr uint32_t kAsleep = 0, kDone = 1, kLook = 2;
  struct Request {
    WriteOp op;
    bool compact = false;
    StatusOr<KeyValue> result = Status::Internal("write was not processed");
    Waiter* waiter = nullptr;
  };

  StatusOr<KeyValue> Submit(Request& req);
  // Queues every request of `reqs` at once (one commit for all, as a rule)
  // and returns once each is done, leading the commits while no other
  // writer does. Closing: each gets Unavailable.
  void SubmitAll(std::span<Request> reqs);
  void DeleteExpired(const std::vector<Expiry::Due>& due);
  void CommitBatch(const std::vector<Request*>& batch);
  std::vector<HistoryEntry> PrepareBatch(const std::vector<Request*>& batch);
  void LoadRow(const SqliteLog::Row& row, int64_t base);
  // Wakes `w` with `why` (kDone: it has left waiting_). The store's mutex
  // is held, so a writer woken kLook cannot be gone before it is told.
  static void Wake(Waiter* w, uint32_t why) {
    std::atomic_ref(w->wake).store(why, std::memory_order_release);
    // (A kDone writer may return, and its Waiter go, between these two:
    // the kernel only wakes whoever sleeps on the address, and a later
    // sleeper there looks at its own word again.)
    FutexWake(&w->wake);
  }
  void WakeAllLocked() REQUIRES(mu_) {
    for (Waiter* w : waiting_) Wake(w, kLook);
  }

  Clock& clock_;
  std::unique_ptr<SqliteLog> log_;  // used by the leading writer only once started
  State state_;
  std::unique_ptr<Expiry> expiry_;
  Mutex mu_;
  // Writers wait for their requests, or for the commit running to end.
  CondVar done_cv_;
  std::vector<Request*> queue_ GUARDED_BY(mu_);   // not yet in a commit
  std::vector<Waiter*> waiting_ GUARDED_BY(mu_);  // writers asleep
  bool closing_ GUARDED_BY(mu_) = false;
  bool started_ GUARDED_BY(mu_) = false;
  bool leading_ GUARDED_BY(mu_) = false;  // a writer is committing a batch
};

StatusOr<KeyValue> SqliteStore::Submit(Request& req) {
  SubmitAll(std::span(&req, 1));
  return std::move(req.result);
}

void SqliteStore::SubmitAll(std::span<Request> reqs) {
  Waiter me;
  MutexLock lock(mu_);
  if (closing_) {
    for (Request& r : reqs) r.result = Status::Unavailable("storage is shutting down");
    return;
  }
  me.pending = reqs.size();
  for (Request& r : reqs) {
    r.waiter = &me;
    queue_.push_back(&r);
  }
  while (me.pending > 0) {
    if (closing_ && !started_) {
      // Never started (a failed Load): nothing will commit them.
      std::erase_if(queue_, [&](const Request* r) { return r->waiter == &me; });
      for (Request& r : reqs) r.result = Status::Unavailable("storage is shutting down");
      done_cv_.NotifyAll();
      return;
    }
    if (leading_ || !started_) {
      std::atomic_ref wake(me.wake);
      wake.store(kAsleep, std::memory_order_relaxed);
      waiting_.push_back(&me);
      lock.Unlock();
      {
        ScopedBlocking blocking;  // the wait for another writer's commit
        while (wake.load(std::memory_order_acquire) == kAsleep) FutexWait(&me.wake, kAsleep);
      }
      // Done: the leader has taken it out of waiting_ and set the results.
      if (wake.load(std::memory_order_acquire) == kDone) return;
      lock.Lock();
      std::erase(waiting_, &me);
      continue;
    }
    leading_ = true;
    std::vector<Request*> batch;
    batch.swap(queue_);
    lock.Unlock();
    CommitBatch(batch);
    lock.Lock();
    leading_ = false;
    for (Request* r : batch) {
      Waiter* w = r->waiter;
      if (--w->pending > 0 || w == &me) continue;
      if (auto it = std::find(waiting_.begin(), waiting_.end(), w); it != waiting_.end()) {
        waiting_.erase(it);
        Wake(w, kDone);
      }
      // Else it is awake already, on its way to the mutex, and sees it.
    }
    // The writer of the oldest request queued meanwhile leads the next.
    if (!queue_.empty() && queue_.front()->waiter != &me) Wake(queue_.front()->waiter, kLook);
    done_cv_.NotifyAll();  // the destructor's wait for the last commit
  }
}

// Expired keys are deleted like any other: a tombstone row each, one commit.
void SqliteStore::DeleteExpired(const std::vector<Expiry::Due>& due) {
  std::vector<Request> reqs;
  reqs.reserve(due.size());
  for (const Expiry::Due& d : due) reqs.push_back({{WriteKind::kDelete, d.key, d.mod_revision}});
  SubmitAll(reqs);
}

void SqliteStore::CommitBatch(const std::vector<Request*>& batch) {
  std::vector<HistoryEntry> entries = PrepareBatch(batch);
  bool forced = false;
  for (const Request* r : batch) forced |= r->compact;
  int64_t compact_to = state_.compacted();
  if (!forced && compact_to - log_->compacted() < kCompactLag) compact_to = 0;
  Status status;
  {
    // Only the fsync is declared a wait: the watch deliveries that applying
    // the batch schedules below are deferred to the end of this thread's
    // task (BlockingPool::TryDefer) rather than handed to another thread.
    ScopedBlocking blocking;
    status = log_->Commit(entries, compact_to);
  }
  if (!status.ok()) {
    spdlog::error("storage: commit of {} writes failed: {}", entries.size(), status.ToString());
    for (Request* r : batch) {
      if (r->result.ok() || r->compact) r->result = status;
    }
    return;
  }
  if (forced) {
    for (Request* r : batch) {
      if (r->compact) r->result = KeyValue{};
    }
  }
  expiry_->Note(entries);
  state_.Apply(std::move(entries));
}

std::vector<HistoryEntry> SqliteStore::PrepareBatch(const std::vector<Request*>& batch) {
  // Each key's value after this batch's earlier writes (null: deleted).
  absl::flat_hash_map<std::string_view, RecordPtr> pending;
  int64_t revision = state_.revision();
  std::vector<HistoryEntry> entries;
  entries.reserve(batch.size());
  for (Request* r : batch) {
    if (r->compact) continue;
    auto it = pending.find(r->op.key);
    RecordPtr current = it != pending.end() ? it->second : state_.Find(r->op.key);
    StatusOr<HistoryEntry> entry = PrepareWrite(r->op, revision + 1, current);
    if (!entry.ok()) {
      r->result = entry.status();
      continue;
    }
    ++revision;
    r->result = ResultOf(*entry);
    pending[r->op.key] = entry->kv;
    entries.push_back(std::move(entry).value());
  }
  return entries;
}

Status SqliteStore::Load() {
  const int64_t base = log_->compacted();
  state_.Start(base);
  return log_->Scan([&](const SqliteLog::Row& row) { LoadRow(row, base); });
}

// Rows at or below `base` (the compacted revision) are the state at `base`;
// rows after it are replayed as events so that watches can resume from them.
void SqliteStore::LoadRow(const SqliteLog::Row& row, int64_t base) {
  auto record = [&row](int64_t mod_revision) {
    return std::make_shared<const KeyValue>(
        KeyValue{std::string(row.key), std::string(row.value), row.create_revision, mod_revision});
  };
  expiry_->Note(row.key, row.id, row.expires, row.deleted);
  if (row.id <= base) {
    state_.Seed(row.key, row.deleted ? nullptr : record(row.id));
    return;
  }
  HistoryEntry entry{row.id, nullptr, row.created ? nullptr : state_.Find(row.key), row.expires};
  if (!row.deleted) {
    entry.kv = record(row.id);
  } else if (!entry.prev) {
    entry.prev = record(row.prev_revision);  // the row carries the deleted value
  }
  state_.Apply({std::move(entry)});
}

}  // namespace

StatusOr<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path,
                                                 const StoreOptions& opts) {
  FLOTILLA_ASSIGN_OR_RETURN(std::unique_ptr<SqliteLog> log, SqliteLog::Open(path));
  auto store = std::make_unique<SqliteStore>(std::move(log), opts);
  FLOTILLA_RETURN_IF_ERROR(store->Load());
  store->Start();
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace flotilla::storage
