// What only the sqlite backend promises: persistence across reopen, durable
// compaction, a revision that never goes backwards, exclusive use of the
// file, and acknowledged writes that survive kill -9.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "storage/store.h"
#include "storage/test_util.h"

namespace flotilla::storage {
namespace {

using testing::EventLog;
using testing::SetValue;
using testing::TempDir;

class SqliteStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<Store> Open(const StoreOptions& opts = {}) {
    auto store = OpenSqliteStore(path_, opts);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  // Rows in the revision log. REQUIRES: the store is closed.
  int64_t CountRows() {
    sqlite3* db = nullptr;
    int64_t n = -1;
    if (sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_exec(
          db, "SELECT COUNT(*) FROM log",
          [](void* out, int, char** v, char**) {
            *static_cast<int64_t*>(out) = std::strtoll(v[0], nullptr, 10);
            return 0;
          },
          &n, nullptr);
    }
    sqlite3_close(db);
    return n;
  }

  TempDir dir_;
  std::string path_ = dir_.path() + "/state.db";
};

TEST_F(SqliteStoreTest, ReopenLoadsLatestStateAndHistory) {
  {
    auto store = Open();
    ASSERT_TRUE(store->Create("/k/a", SetValue("a1")).ok());
    ASSERT_TRUE(store->Create("/k/b", SetValue("b1")).ok());
    ASSERT_TRUE(store->Update("/k/a", 1, SetValue("a2")).ok());
    ASSERT_TRUE(store->Delete("/k/b", 0).ok());
    ASSERT_TRUE(store->Create("/k/c", SetValue("")).ok());
  }
  auto store = Open();
  EXPECT_EQ(store->CurrentRevision(), 5);
  auto a = store->Get("/k/a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->value, "a2");
  EXPECT_EQ(a->create_revision, 1);
  EXPECT_EQ(a->mod_revision, 3);
  EXPECT_TRUE(store->Get("/k/b").status().Is(Reason::kNotFound));
  EXPECT_EQ(store->Get("/k/c")->value, "");

  EventLog log;  // a watch resumes across the restart
  auto watcher = store->Watch("/k/", 2, log.Callback());
  ASSERT_TRUE(watcher.ok());
  std::vector<Event> events = log.WaitFor(3);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kv.value, "a2");
  ASSERT_TRUE(events[0].prev.has_value());
  EXPECT_EQ(events[0].prev->value, "a1");
  EXPECT_EQ(events[1].type, Event::Type::kDelete);
  EXPECT_EQ(events[1].kv.value, "b1");
  EXPECT_EQ(events[1].kv.mod_revision, 4);
  EXPECT_FALSE(events[2].prev.has_value());

  EXPECT_EQ(store->Create("/k/d", SetValue("d"))->mod_revision, 6);
}

TEST_F(SqliteStoreTest, CompactionIsDurableAndKeepsLatestRows) {
  {
    auto store = Open();
    ASSERT_TRUE(store->Create("/k/a", SetValue("0")).ok());
    for (int i = 1; i < 10; ++i)
      ASSERT_TRUE(store->Update("/k/a", 0, SetValue(std::to_string(i))).ok());
    ASSERT_TRUE(store->Create("/k/gone", SetValue("x")).ok());
    ASSERT_TRUE(store->Delete("/k/gone", 0).ok());  // revision 12
    ASSERT_TRUE(store->Create("/k/b", SetValue("b")).ok());
    ASSERT_TRUE(store->Compact(12).ok());
    ASSERT_TRUE(store->Update("/k/b", 0, SetValue("b2")).ok());  // revision 14
  }
  EXPECT_EQ(CountRows(), 3);  // a's latest row, b's create (superseded after 12) and update

  auto store = Open();
  EXPECT_EQ(store->CompactedRevision(), 12);
  EXPECT_EQ(store->CurrentRevision(), 14);
  EXPECT_EQ(store->Get("/k/a")->value, "9");
  EXPECT_EQ(store->Get("/k/a")->mod_revision, 10);
  EXPECT_EQ(store->Get("/k/b")->value, "b2");
  EXPECT_TRUE(store->Get("/k/gone").status().Is(Reason::kNotFound));
  EXPECT_TRUE(
      store->Watch("/k/", 11, [](const std::vector<Event>&) {}).status().Is(Reason::kExpired));
  EventLog log;
  auto watcher = store->Watch("/k/", 12, log.Callback());
  ASSERT_TRUE(watcher.ok());
  std::vector<Event> events = log.WaitFor(2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kv.key, "/k/b");
  EXPECT_EQ(events[1].kv.value, "b2");
  ASSERT_TRUE(events[1].prev.has_value());
  EXPECT_EQ(events[1].prev->value, "b");
}

TEST_F(SqliteStoreTest, RevisionNeverGoesBackwards) {
  {
    auto store = Open();
    ASSERT_TRUE(store->Create("/k/a", SetValue("a")).ok());
    ASSERT_TRUE(store->Delete("/k/a", 0).ok());
    ASSERT_TRUE(store->Compact(2).ok());  // removes every row
  }
  EXPECT_EQ(CountRows(), 0);
  auto store = Open();
  EXPECT_EQ(store->CurrentRevision(), 2);
  EXPECT_EQ(store->Create("/k/a", SetValue("a"))->mod_revision, 3);
}

TEST_F(SqliteStoreTest, AutomaticCompactionBoundsTheLog) {
  {
    auto store = Open({.history_events = 10});
    ASSERT_TRUE(store->Create("/k/a", SetValue("0")).ok());
    for (int i = 1; i < 3000; ++i) ASSERT_TRUE(store->Update("/k/a", 0, SetValue("v")).ok());
    EXPECT_EQ(store->CompactedRevision(), 2990);
  }
  int64_t rows = CountRows();
  EXPECT_GT(rows, 0);
  EXPECT_LT(rows, 1100);  // history plus at most the compaction lag
  auto store = Open({.history_events = 10});
  EXPECT_EQ(store->CurrentRevision(), 3000);
  EXPECT_EQ(store->CompactedRevision(), 2990);
}

TEST_F(SqliteStoreTest, ADeadlineSurvivesARestart) {
  FakeClock clock;
  {
    auto store = Open({.clock = &clock});
    ASSERT_TRUE(store->Create("/ev/a", SetValue("a"), std::chrono::seconds(10)).ok());
    ASSERT_TRUE(store->Create("/ev/b", SetValue("b"), std::chrono::seconds(30)).ok());
    ASSERT_TRUE(store->Create("/ev/kept", SetValue("k")).ok());
  }
  // Down past a's deadline: it goes as soon as the store is open again.
  clock.Advance(std::chrono::seconds(20));
  auto store = Open({.clock = &clock});
  EventLog log;
  auto watcher = store->Watch("/ev/", 3, log.Callback());
  ASSERT_TRUE(watcher.ok());
  std::vector<Event> events = log.WaitFor(1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, Event::Type::kDelete);
  EXPECT_EQ(events[0].kv.key, "/ev/a");
  EXPECT_TRUE(store->Get("/ev/b").ok());
  clock.Advance(std::chrono::seconds(10));
  events = log.WaitFor(2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].kv.key, "/ev/b");
  EXPECT_TRUE(store->Get("/ev/kept").ok());
}

TEST_F(SqliteStoreTest, ClosingWhileKeysExpireLosesNothingElse) {
  FakeClock clock;
  {
    auto store = Open({.clock = &clock});
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE(
          store->Create("/ev/" + std::to_string(i), SetValue("v"), std::chrono::seconds(1)).ok());
    }
    ASSERT_TRUE(store->Create("/k/kept", SetValue("k")).ok());
    clock.Advance(std::chrono::seconds(1));
  }  // closed at once: the expiry either committed or is done on the next open
  auto store = Open({.clock = &clock});
  auto list = store->List("/ev/", {});
  ASSERT_TRUE(list.ok());
  EventLog log;  // from the list on: a delete for each key still there
  auto watcher = store->Watch("/ev/", list->revision, log.Callback());
  ASSERT_TRUE(watcher.ok());
  std::vector<Event> events = log.WaitFor(list->items.size());
  EXPECT_EQ(events.size(), list->items.size());
  for (const Event& e : events) EXPECT_EQ(e.type, Event::Type::kDelete);
  EXPECT_EQ(store->Get("/k/kept")->value, "k");
}

TEST_F(SqliteStoreTest, AVersionOneDatabaseIsUpgraded) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, R"sql(
    CREATE TABLE log (id INTEGER PRIMARY KEY, key TEXT NOT NULL, created INTEGER NOT NULL,
      deleted INTEGER NOT NULL, create_revision INTEGER NOT NULL,
      prev_revision INTEGER NOT NULL, value BLOB NOT NULL);
    CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO meta VALUES ('schema_version', 1);
    INSERT INTO log VALUES (1, '/k/a', 1, 0, 1, 0, 'a1');
  )sql",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  FakeClock clock;
  {
    auto store = Open({.clock = &clock});
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->Get("/k/a")->value, "a1");
    ASSERT_TRUE(store->Create("/k/b", SetValue("b"), std::chrono::seconds(5)).ok());
  }
  clock.Advance(std::chrono::seconds(5));
  auto store = Open({.clock = &clock});
  EventLog log;
  auto watcher = store->Watch("/k/", 1, log.Callback());
  ASSERT_TRUE(watcher.ok());
  std::vector<Event> events = log.WaitFor(2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].type, Event::Type::kDelete);
  EXPECT_EQ(events[1].kv.key, "/k/b");
  EXPECT_TRUE(store->Get("/k/a").ok());
}

TEST_F(SqliteStoreTest, SecondOpenOfTheSameFileIsUnavailable) {
  auto store = Open();
  auto second = OpenSqliteStore(path_);
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(second.status().Is(Reason::kServiceUnavailable)) << second.status().ToString();
}

TEST_F(SqliteStoreTest, GarbageFileIsAnError) {
  std::ofstream(path_) << std::string(8192, 'x');
  auto store = OpenSqliteStore(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(store.status().Is(Reason::kInternalError)) << store.status().ToString();
}

// Crash durability: a child process writes from several threads and reports
// every acknowledged write on a pipe; the parent kills it with SIGKILL
// mid-stream, reopens the database and finds every acknowledged write.
constexpr int kWriterThreads = 4;

void Report(int fd, const std::string& line) {
  // One write() per line below PIPE_BUF: lines never interleave.
  if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(3);
}

[[noreturn]] void RunWriter(const std::string& path, int fd, int round) {
  auto store = OpenSqliteStore(path);
  if (!store.ok()) {
    Report(fd, "ERR " + store.status().ToString() + "\n");
    _exit(1);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriterThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0;; ++i) {
        std::string key =
            "/crash/" + std::to_string(round) + "/" + std::to_string(t) + "/" + std::to_string(i);
        auto kv = (*store)->Create(key, SetValue("value of " + key));
        if (!kv.ok()) _exit(2);
        Report(fd, std::to_string(kv->mod_revision) + " " + key + "\n");
      }
    });
  }
  for (auto& t : threads) t.join();
  _exit(0);
}

// Runs a writer until it has acknowledged at least `acks` writes, kills it
// and returns every acknowledged (revision, key).
std::map<int64_t, std::string> WriteAndKill(const std::string& path, int round, size_t acks) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    RunWriter(path, fds[1], round);
  }
  close(fds[1]);
  std::map<int64_t, std::string> acked;
  std::string buffer;
  char chunk[4096];
  bool killed = false;
  ssize_t n;
  while ((n = read(fds[0], chunk, sizeof chunk)) > 0) {
    buffer.append(chunk, n);
    size_t eol;
    while ((eol = buffer.find('\n')) != std::string::npos) {
      std::istringstream line(buffer.substr(0, eol));
      buffer.erase(0, eol + 1);
      int64_t rev = 0;
      std::string key;
      line >> rev >> key;
      EXPECT_GT(rev, 0) << line.str();
      acked[rev] = key;
    }
    if (!killed && acked.size() >= acks) {
      kill(pid, SIGKILL);
      killed = true;
    }
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "writer exited early";
  return acked;
}

// Writers woken by name (a commit's end wakes its batch's writers and the
// next leader only): many writers at once each get their own write's
// result, every revision once, none left waiting; a reopen finds them all.
TEST_F(SqliteStoreTest, ManyWritersAtOnceEachGetTheirOwnResult) {
  constexpr int kWriters = 16, kEach = 150;
  std::vector<std::vector<std::pair<std::string, int64_t>>> got(kWriters);
  {
    auto store = Open();
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        for (int i = 0; i < kEach; ++i) {
          std::string key = "/w/" + std::to_string(w) + "/" + std::to_string(i);
          auto kv = i % 3 == 2
                        ? store->Update(key.substr(0, key.rfind('/') + 1) + std::to_string(i - 1),
                                        0, SetValue(key))
                        : store->Create(key, SetValue(key));
          ASSERT_TRUE(kv.ok()) << kv.status().ToString();
          got[w].emplace_back(std::string(kv->key), kv->mod_revision);
          EXPECT_EQ(kv->value, key);
        }
      });
    }
    for (auto& t : writers) t.join();
  }
  std::set<int64_t> revisions;
  for (int w = 0; w < kWriters; ++w) {
    ASSERT_EQ(got[w].size(), static_cast<size_t>(kEach));
    for (const auto& [key, rev] : got[w]) EXPECT_TRUE(revisions.insert(rev).second) << rev;
  }
  EXPECT_EQ(revisions.size(), static_cast<size_t>(kWriters * kEach));
  EXPECT_EQ(*revisions.rbegin() - *revisions.begin() + 1, kWriters * kEach);  // no gap
  auto store = Open();
  ASSERT_NE(store, nullptr);
  for (int w = 0; w < kWriters; ++w) {
    for (const auto& [key, rev] : got[w]) {
      auto kv = store->Get(key);
      ASSERT_TRUE(kv.ok()) << key;
      if (kv->mod_revision == rev) continue;
      // Created, then updated by the writer's next write.
      EXPECT_GT(kv->mod_revision, rev) << key;
    }
  }
}

TEST_F(SqliteStoreTest, AcknowledgedWritesSurviveKill9) {
  {
    auto store = Open();
    ASSERT_TRUE(store->Create("/before", SetValue("x")).ok());
  }
  int64_t last = 1;
  for (int round = 0; round < 2; ++round) {
    std::map<int64_t, std::string> acked = WriteAndKill(path_, round, 300);
    ASSERT_GE(acked.size(), 300u);
    EXPECT_GT(acked.begin()->first, last);  // the revision kept increasing

    auto store = Open();
    ASSERT_NE(store, nullptr);
    for (const auto& [rev, key] : acked) {
      auto kv = store->Get(key);
      ASSERT_TRUE(kv.ok()) << "acknowledged write lost: " << rev << " " << key;
      EXPECT_EQ(kv->mod_revision, rev);
      EXPECT_EQ(kv->value, "value of " + key);
    }
    EXPECT_GE(store->CurrentRevision(), acked.rbegin()->first);
    EXPECT_EQ(store->Get("/before")->value, "x");
    auto next = store->Create("/after/" + std::to_string(round), SetValue("y"));
    ASSERT_TRUE(next.ok());
    EXPECT_GT(next->mod_revision, acked.rbegin()->first);
    last = next->mod_revision;
  }
}

}  // namespace
}  // namespace flotilla::storage
