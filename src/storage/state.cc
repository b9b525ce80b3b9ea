#include "storage/state.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "base/mutex.h"

namespace flotilla::storage {

TimePoint Deadline(Clock& clock, Duration ttl) {
  return ttl > Duration::zero() ? clock.Now() + ttl : TimePoint{};
}

Status CheckPrecondition(const WriteOp& op, const RecordPtr& current) {
  if (op.kind == WriteKind::kCreate) {
    if (current) return Status::AlreadyExists("key " + QuotedKey(op.key) + " already exists");
    return Status::Ok();
  }
  if (!current) return Status::NotFound("key " + QuotedKey(op.key) + " not found");
  if (op.expected_mod_revision != 0 && op.expected_mod_revision != current->mod_revision) {
    return Status::Conflict("key " + QuotedKey(op.key) + " has been modified: expected revision " +
                            std::to_string(op.expected_mod_revision) + ", found " +
                            std::to_string(current->mod_revision));
  }
  return Status::Ok();
}

// Mutations are our own code and return errors as values; one that throws
// anyway must not take down the sqlite store's commit thread.
StatusOr<Encoded> RunMutation(const Mutation& mutation, std::string_view key, int64_t revision,
                              const std::optional<KeyValue>& before) {
  try {
    StatusOr<Encoded> encoded = mutation(revision, before);
    // The stored value lives as long as the object and its history do:
    // without the spare capacity a growing serializer leaves (up to half
    // of the allocation).
    if (encoded.ok()) encoded->value.shrink_to_fit();
    return encoded;
  } catch (const std::exception& e) {
    return Status::Internal("write to key " + QuotedKey(key) + " failed: " + e.what());
  }
}

Event ToEvent(const HistoryEntry& entry) {
  Event event;
  if (entry.is_delete()) {
    event.type = Event::Type::kDelete;
    event.kv = *entry.prev;
    event.kv.mod_revision = entry.revision;
  } else {
    event.kv = *entry.kv;
    event.object = entry.object;
  }
  if (entry.prev) event.prev = *entry.prev;
  return event;
}

KeyValue ResultOf(const HistoryEntry& entry) {
  if (!entry.is_delete()) return *entry.kv;
  KeyValue kv = *entry.prev;
  kv.mod_revision = entry.revision;
  return kv;
}

StatusOr<HistoryEntry> PrepareWrite(const WriteOp& op, int64_t revision, const RecordPtr& current) {
  FLOTILLA_RETURN_IF_ERROR(CheckPrecondition(op, current));
  HistoryEntry entry{revision, nullptr, current};
  if (op.kind == WriteKind::kDelete) return entry;
  if (op.mutation == nullptr || !*op.mutation) {
    return Status::Internal("write to key " + QuotedKey(op.key) + " has no mutation");
  }
  std::optional<KeyValue> before;
  if (current) before = *current;
  FLOTILLA_ASSIGN_OR_RETURN(Encoded encoded, RunMutation(*op.mutation, op.key, revision, before));
  entry.kv = std::make_shared<const KeyValue>(
      KeyValue{std::string(op.key), std::move(encoded.value),
               current ? current->create_revision : revision, revision});
  entry.object = std::move(encoded.object);
  entry.expires = op.expires;
  return entry;
}

State::State(int64_t history_limit, Duration history_window, Clock* clock)
    : history_limit_(static_cast<size_t>(std::max<int64_t>(history_limit, 1))),
      history_window_(history_window),
      clock_(clock) {}

RecordPtr State::Find(std::string_view key) const {
  ReaderLock lock(mu_);
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : it->kv;
}

StatusOr<KeyValue> State::Get(std::string_view key) const {
  RecordPtr kv = Find(key);
  if (!kv) return Status::NotFound("key " + QuotedKey(key) + " not found");
  return *kv;
}

ListResult State::List(std::string_view prefix, const ListOptions& opts) const {
  ListResult out;
  ReaderLock lock(mu_);
  out.revision = revision_;
  std::string_view after = opts.start_after;
  auto it =
      after.empty() || after < prefix ? index_.lower_bound(prefix) : index_.upper_bound(after);
  for (size_t n = 0; it != index_.end() && it->kv->key.starts_with(prefix); ++it, ++n) {
    if (opts.limit > 0 && static_cast<int64_t>(n) == opts.limit) {
      out.more = true;
      for (; it != index_.end() && it->kv->key.starts_with(prefix); ++it) ++out.remaining;
      break;
    }
    if (opts.shared) {
      out.shared_items.push_back(it->kv);
    } else {
      out.items.push_back(*it->kv);
    }
  }
  return out;
}

int64_t State::Count(std::string_view prefix) const {
  ReaderLock lock(mu_);
  int64_t n = 0;
  for (auto it = index_.lower_bound(prefix); it != index_.end() && it->kv->key.starts_with(prefix);
       ++it) {
    ++n;
  }
  return n;
}

int64_t State::revision() const {
  ReaderLock lock(mu_);
  return revision_;
}

int64_t State::compacted() const {
  ReaderLock lock(mu_);
  return compacted_;
}

void State::Apply(std::vector<HistoryEntry> entries) {
  if (entries.empty()) return;
  const bool timed = clock_ != nullptr && history_window_ > Duration::zero();
  const TimePoint now = timed ? clock_->Now() : TimePoint{};
  WriterLock lock(mu_);
  for (HistoryEntry& e : entries) {
    e.applied = now;
    SetLocked(e.key(), e.kv);
    revision_ = e.revision;
    // Without the object: a replay parses; only the delivery shares it.
    std::shared_ptr<const json::object> object = std::move(e.object);
    history_.push_back(e);
    e.object = std::move(object);
  }
  if (history_.size() > history_limit_) {
    TrimHistoryLocked(history_[history_.size() - history_limit_ - 1].revision);
  }
  if (timed && history_.front().applied < now - history_window_) {
    // The newest entry older than the window and everything before it.
    auto newer = std::partition_point(history_.begin(), history_.end(), [&](const HistoryEntry& e) {
      return e.applied < now - history_window_;
    });
    TrimHistoryLocked(std::prev(newer)->revision);
  }
  hub_.Publish(entries);
}

Status State::Compact(int64_t revision) {
  WriterLock lock(mu_);
  if (revision <= compacted_) return Status::Ok();
  if (revision > revision_) {
    return Status::BadRequest("cannot compact to revision " + std::to_string(revision) +
                              ": the store is at revision " + std::to_string(revision_));
  }
  TrimHistoryLocked(revision);
  return Status::Ok();
}

StatusOr<std::unique_ptr<Watcher>> State::Watch(std::string_view prefix, int64_t after_revision,
                                                WatchCallback callback, bool objects) {
  ReaderLock lock(mu_);
  if (after_revision != 0 && after_revision < compacted_) {
    return Status::Expired("too old resource version: " + std::to_string(after_revision) + " (" +
                           std::to_string(compacted_) + ")");
  }
  int64_t from = after_revision == 0 ? revision_ : after_revision;
  auto it = std::upper_bound(history_.begin(), history_.end(), from,
                             [](int64_t r, const HistoryEntry& e) { return r < e.revision; });
  std::vector<HistoryEntry> backlog;
  for (; it != history_.end(); ++it) {
    if (it->key().starts_with(prefix)) backlog.push_back(*it);
  }
  return hub_.Add(std::string(prefix), from, std::move(callback), std::move(backlog), objects);
}

void State::Start(int64_t revision) {
  WriterLock lock(mu_);
  revision_ = revision;
  compacted_ = revision;
}

void State::Seed(std::string_view key, RecordPtr kv) {
  WriterLock lock(mu_);
  SetLocked(key, std::move(kv));
}

void State::SetLocked(std::string_view key, RecordPtr kv) {
  auto it = index_.find(key);
  if (!kv) {
    if (it != index_.end()) index_.erase(it);
  } else if (it != index_.end()) {
    it->kv = std::move(kv);
  } else {
    index_.insert(Slot{std::move(kv)});
  }
}

void State::TrimHistoryLocked(int64_t upto) {
  while (!history_.empty() && history_.front().revision <= upto) history_.pop_front();
  compacted_ = std::max(compacted_, upto);
}

}  // namespace flotilla::storage
