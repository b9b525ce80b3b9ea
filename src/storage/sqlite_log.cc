#include "storage/sqlite_log.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <string>

namespace flotilla::storage {
namespace {

// Version 2 added `expires` (milliseconds since the epoch, 0 = never); a
// version 1 database is upgraded when opened.
constexpr int64_t kSchemaVersion = 2;

constexpr const char* kSchema = R"sql(
  CREATE TABLE IF NOT EXISTS log (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    created INTEGER NOT NULL,
    deleted INTEGER NOT NULL,
    create_revision INTEGER NOT NULL,
    prev_revision INTEGER NOT NULL,
    value BLOB NOT NULL,
    expires INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS meta (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
  ) WITHOUT ROWID;
  INSERT OR IGNORE INTO meta(name, value) VALUES ('schema_version', 2);
)sql";

constexpr const char* kUpgradeFrom1 = R"sql(
  ALTER TABLE log ADD COLUMN expires INTEGER NOT NULL DEFAULT 0;
  UPDATE meta SET value = 2 WHERE name = 'schema_version';
)sql";

// Rows superseded by a later row at or below ?2 (rows at or below ?1 were
// handled by the previous compaction), then deletions at or below ?2.
constexpr const char* kDeleteSuperseded =
    "DELETE FROM log WHERE id IN "
    "(SELECT prev_revision FROM log WHERE id > ?1 AND id <= ?2 AND prev_revision > 0)";
constexpr const char* kDeleteTombstones =
    "DELETE FROM log WHERE id > ?1 AND id <= ?2 AND deleted = 1";
constexpr const char* kSetCompacted =
    "INSERT INTO meta(name, value) VALUES ('compacted_revision', ?1) "
    "ON CONFLICT(name) DO UPDATE SET value = excluded.value";
constexpr const char* kInsert =
    "INSERT INTO log(id, key, created, deleted, create_revision, prev_revision, value, expires) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
constexpr const char* kScan =
    "SELECT id, key, created, deleted, create_revision, prev_revision, value, expires FROM log "
    "ORDER BY id";

int64_t ToMillis(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
TimePoint FromMillis(int64_t ms) {
  return TimePoint(std::chrono::duration_cast<Duration>(std::chrono::milliseconds(ms)));
}

std::string_view ColumnBytes(sqlite3_stmt* s, int col, const void* data) {
  if (data == nullptr) return {};
  return {static_cast<const char*>(data), static_cast<size_t>(sqlite3_column_bytes(s, col))};
}

}  // namespace

// An owned prepared statement.
class SqliteLog::Stmt {
 public:
  explicit Stmt(sqlite3_stmt* s) : s_(s) {}
  ~Stmt() { sqlite3_finalize(s_); }
  sqlite3_stmt* get() const { return s_; }

 private:
  sqlite3_stmt* s_;
};

namespace {

// Runs a bound statement that returns no rows, then resets it.
Status Step(sqlite3* db, sqlite3_stmt* s, std::string_view what) {
  int rc = sqlite3_step(s);
  Status status;
  if (rc != SQLITE_DONE) {
    status = Status::Internal("sqlite: " + std::string(what) + ": " + sqlite3_errmsg(db));
  }
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  return status;
}

}  // namespace

SqliteLog::SqliteLog(sqlite3* db) : db_(db) {}

SqliteLog::~SqliteLog() {
  begin_.reset();
  commit_.reset();
  insert_.reset();
  delete_superseded_.reset();
  delete_tombstones_.reset();
  set_compacted_.reset();
  sqlite3_close(db_);
}

StatusOr<std::unique_ptr<SqliteLog>> SqliteLog::Open(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<SqliteLog> log(new SqliteLog(db));
  if (rc != SQLITE_OK) return log->Error("open " + path);
  FLOTILLA_RETURN_IF_ERROR(log->Init(path));
  return log;
}

Status SqliteLog::Error(std::string_view what) const {
  int code = db_ == nullptr ? SQLITE_NOMEM : sqlite3_errcode(db_);
  std::string message = "sqlite: " + std::string(what) + ": " +
                        (db_ == nullptr ? "out of memory" : sqlite3_errmsg(db_));
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED) {
    return Status::Unavailable(message + " (is another process using the database?)");
  }
  return Status::Internal(message);
}

Status SqliteLog::Exec(const char* sql) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return Error(sql);
  return Status::Ok();
}

Status SqliteLog::Init(const std::string& path) {
  // Exclusive locking before the first WAL access: no shared-memory index,
  // and the lock taken by BEGIN IMMEDIATE below is held until close.
  FLOTILLA_RETURN_IF_ERROR(Exec("PRAGMA locking_mode=EXCLUSIVE"));
  FLOTILLA_RETURN_IF_ERROR(Exec("PRAGMA synchronous=FULL"));
  int64_t wal = 0;
  auto is_wal = [](void* out, int, char** values, char**) {
    *static_cast<int64_t*>(out) = values[0] != nullptr && std::string_view(values[0]) == "wal";
    return 0;
  };
  if (sqlite3_exec(db_, "PRAGMA journal_mode=WAL", is_wal, &wal, nullptr) != SQLITE_OK) {
    return Error("enable WAL on " + path);
  }
  if (!wal) return Status::Internal("sqlite: cannot put " + path + " in WAL mode");
  FLOTILLA_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  FLOTILLA_RETURN_IF_ERROR(Exec(kSchema));
  int64_t version = 0;
  auto read_int = [](void* out, int, char** values, char**) {
    *static_cast<int64_t*>(out) = values[0] ? std::strtoll(values[0], nullptr, 10) : 0;
    return 0;
  };
  if (sqlite3_exec(db_, "SELECT value FROM meta WHERE name = 'schema_version'", read_int, &version,
                   nullptr) != SQLITE_OK ||
      sqlite3_exec(db_, "SELECT value FROM meta WHERE name = 'compacted_revision'", read_int,
                   &compacted_, nullptr) != SQLITE_OK) {
    return Error("read meta of " + path);
  }
  if (version == 1) {
    FLOTILLA_RETURN_IF_ERROR(Exec(kUpgradeFrom1));
    version = 2;
  }
  FLOTILLA_RETURN_IF_ERROR(Exec("COMMIT"));
  if (version != kSchemaVersion) {
    return Status::Internal("sqlite: " + path + " has schema version " + std::to_string(version) +
                            ", this build reads version " + std::to_string(kSchemaVersion));
  }
  for (auto [sql, stmt] : {std::pair{"BEGIN", &begin_},
                           {"COMMIT", &commit_},
                           {kInsert, &insert_},
                           {kDeleteSuperseded, &delete_superseded_},
                           {kDeleteTombstones, &delete_tombstones_},
                           {kSetCompacted, &set_compacted_}}) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK) {
      return Error(std::string("prepare ") + sql);
    }
    *stmt = std::make_unique<Stmt>(s);
  }
  return Status::Ok();
}

Status SqliteLog::Scan(const std::function<void(const Row&)>& fn) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_, kScan, -1, &raw, nullptr) != SQLITE_OK) return Error("prepare scan");
  Stmt scan(raw);
  int rc;
  while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
    Row row;
    row.id = sqlite3_column_int64(raw, 0);
    row.key = ColumnBytes(raw, 1, sqlite3_column_text(raw, 1));
    row.created = sqlite3_column_int(raw, 2) != 0;
    row.deleted = sqlite3_column_int(raw, 3) != 0;
    row.create_revision = sqlite3_column_int64(raw, 4);
    row.prev_revision = sqlite3_column_int64(raw, 5);
    row.value = ColumnBytes(raw, 6, sqlite3_column_blob(raw, 6));
    if (int64_t ms = sqlite3_column_int64(raw, 7); ms != 0) row.expires = FromMillis(ms);
    fn(row);
  }
  if (rc != SQLITE_DONE) return Error("scan");
  return Status::Ok();
}

Status SqliteLog::Commit(std::span<const HistoryEntry> entries, int64_t compact_to) {
  const bool compact = compact_to > compacted_;
  if (entries.empty() && !compact) return Status::Ok();
  FLOTILLA_RETURN_IF_ERROR(Step(db_, begin_->get(), "BEGIN"));
  Status status;
  for (const HistoryEntry& e : entries) {
    status = Insert(e);
    if (!status.ok()) break;
  }
  if (status.ok() && compact) status = CompactTo(compact_to);
  if (status.ok()) status = Step(db_, commit_->get(), "COMMIT");
  if (!status.ok()) {
    if (!sqlite3_get_autocommit(db_)) Exec("ROLLBACK").IgnoreError();
    return status;
  }
  if (compact) compacted_ = compact_to;
  return Status::Ok();
}

Status SqliteLog::Insert(const HistoryEntry& e) {
  sqlite3_stmt* s = insert_->get();
  const KeyValue& kv = e.is_delete() ? *e.prev : *e.kv;
  sqlite3_bind_int64(s, 1, e.revision);
  sqlite3_bind_text(s, 2, kv.key.data(), static_cast<int>(kv.key.size()), SQLITE_STATIC);
  sqlite3_bind_int(s, 3, !e.is_delete() && !e.prev);
  sqlite3_bind_int(s, 4, e.is_delete());
  sqlite3_bind_int64(s, 5, kv.create_revision);
  sqlite3_bind_int64(s, 6, e.prev ? e.prev->mod_revision : 0);
  // data() is never null, so an empty value binds as an empty blob, not NULL.
  sqlite3_bind_blob(s, 7, kv.value.data(), static_cast<int>(kv.value.size()), SQLITE_STATIC);
  sqlite3_bind_int64(s, 8, e.is_delete() || e.expires == TimePoint{} ? 0 : ToMillis(e.expires));
  return Step(db_, s, "insert");
}

Status SqliteLog::CompactTo(int64_t revision) {
  for (const auto* stmt : {delete_superseded_.get(), delete_tombstones_.get()}) {
    sqlite3_bind_int64(stmt->get(), 1, compacted_);
    sqlite3_bind_int64(stmt->get(), 2, revision);
    FLOTILLA_RETURN_IF_ERROR(Step(db_, stmt->get(), "compact"));
  }
  sqlite3_bind_int64(set_compacted_->get(), 1, revision);
  return Step(db_, set_compacted_->get(), "record compacted revision");
}

}  // namespace flotilla::storage
