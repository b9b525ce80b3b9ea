// The durable revision log under the sqlite store (docs/storage.md): one
// table with one row per revision, in kine's layout (with the time a TTL
// write expires in place of kine's lease), and a meta table that holds the
// compacted revision and the schema version. The database runs in WAL mode with
// synchronous=FULL, so a committed transaction is fsync'd before Commit
// returns, and in exclusive locking mode, so a second process cannot open it
// while this one has it.
//
// Thread safety: none; the sqlite store uses it from one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "storage/record.h"

struct sqlite3;
struct sqlite3_stmt;

namespace flotilla::storage {

class SqliteLog {
 public:
  // One row as read back; the views are valid only during the Scan callback.
  struct Row {
    int64_t id = 0;  // the revision
    std::string_view key;
    bool created = false;  // this row created the key
    bool deleted = false;  // this row deleted the key; value is the deleted value
    int64_t create_revision = 0;
    int64_t prev_revision = 0;  // the row this one supersedes; 0 for a create
    std::string_view value;
    TimePoint expires{};  // when the key expires (a TTL write); the epoch: never
  };

  // Opens or creates the database at `path`. Unavailable if another process
  // has it open; Internal on any other SQLite error.
  static StatusOr<std::unique_ptr<SqliteLog>> Open(const std::string& path);
  ~SqliteLog();

  SqliteLog(const SqliteLog&) = delete;
  SqliteLog& operator=(const SqliteLog&) = delete;

  // The compacted revision recorded in the database (0 when never compacted).
  int64_t compacted() const { return compacted_; }

  // Calls `fn` for every row in revision order.
  Status Scan(const std::function<void(const Row&)>& fn);

  // In one transaction: appends one row per entry and, when `compact_to` is
  // past compacted(), deletes the rows superseded at or below `compact_to`
  // (and its deletions) and records it as the compacted revision. Returns
  // once the transaction is on disk; on error nothing of it is.
  Status Commit(std::span<const HistoryEntry> entries, int64_t compact_to);

 private:
  class Stmt;

  explicit SqliteLog(sqlite3* db);
  Status Init(const std::string& path);
  Status Exec(const char* sql);
  Status Error(std::string_view what) const;
  Status Insert(const HistoryEntry& entry);
  Status CompactTo(int64_t revision);

  sqlite3* db_;
  int64_t compacted_ = 0;
  // Prepared once: a transaction's BEGIN and COMMIT too (sqlite3_exec
  // would compile them again for every commit).
  std::unique_ptr<Stmt> begin_;
  std::unique_ptr<Stmt> commit_;
  std::unique_ptr<Stmt> insert_;
  std::unique_ptr<Stmt> delete_superseded_;
  std::unique_ptr<Stmt> delete_tombstones_;
  std::unique_ptr<Stmt> set_compacted_;
};

}  // namespace flotilla::storage
