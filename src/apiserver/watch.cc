// ServeWatch: a chunked stream of watch events for one resource, fed by a
// Store watch, filtered by selectors (objects leaving a selector are sent as
// DELETED, entering ones as ADDED), with bookmarks and timeouts.
#include <condition_variable>
#include <deque>
#include <mutex>

#include "api/fields.h"
#include "api/labels.h"
#include "apiserver/meta.h"
#include "apiserver/resource_handler.h"
#include "apiserver/responses.h"
#include "apiserver/table.h"

namespace flotilla::apiserver {
namespace {

constexpr size_t kMaxQueuedEvents = 10000;
constexpr int kDefaultTimeoutSec = 1800;
constexpr int kBookmarkEverySec = 30;

class EventQueue {
 public:
  // Returns false when the queue overflowed (the watch is then ended).
  bool Push(std::vector<std::string> lines) {
    std::lock_guard lock(mu_);
    if (queue_.size() + lines.size() > kMaxQueuedEvents) {
      overflow_ = true;
    } else {
      for (auto& l : lines) queue_.push_back(std::move(l));
    }
    cv_.notify_all();
    return !overflow_;
  }
  // Ends the current or next Take's wait (the client is gone).
  void Wake() {
    std::lock_guard lock(mu_);
    woken_ = true;
    cv_.notify_all();
  }
  // Waits up to `millis` for events; returns them (possibly none).
  std::deque<std::string> Take(int millis, bool* overflow) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(millis),
                 [&] { return !queue_.empty() || overflow_ || woken_; });
    *overflow = overflow_;
    std::deque<std::string> out;
    out.swap(queue_);
    return out;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;  // GUARDED_BY(mu_)
  bool overflow_ = false;          // GUARDED_BY(mu_)
  bool woken_ = false;             // GUARDED_BY(mu_)
};

struct Filter {
  api::LabelSelector labels;
  api::FieldSelector fields;
  bool Matches(const json::object& obj) const {
    const json::object* meta = FindMeta(obj);
    if (!labels.Matches(meta ? GetObject(*meta, "labels") : nullptr)) return false;
    return fields.Matches([&](std::string_view f) -> std::optional<std::string> {
      const json::value* v = Find(obj, f);
      if (v == nullptr) return std::string();
      if (v->is_string()) return std::string(v->get_string());
      return json::serialize(*v);
    });
  }
};

class Encoder {
 public:
  Encoder(ResourceContext& ctx, bool raw)
      : ctx_(ctx),
        table_(WantsTable(ctx.req.Header("accept"))),
        include_(ParseIncludeObject(ctx.req.Query("includeObject"))),
        raw_(raw) {}

  bool table() const { return table_; }
  bool raw() const { return raw_; }

  std::string Line(std::string_view type, const json::object& obj) {
    json::value payload = obj;
    if (table_) {
      payload = ToTable(ctx_.res, {obj}, ctx_.objects.clock().Now(), include_, first_);
      first_ = false;
    }
    return json::serialize(json::object{{"type", type}, {"object", std::move(payload)}}) + "\n";
  }

 private:
  ResourceContext& ctx_;
  bool table_;
  IncludeObject include_;
  bool raw_;
  bool first_ = true;
};

json::object DecodeStored(ResourceContext& ctx, const std::string& bytes) {
  auto parsed = ParseJsonObject(bytes);
  if (!parsed.ok()) return json::object();
  auto converted = ctx.objects.FromStorage(ctx.res, std::move(*parsed));
  return converted.ok() ? std::move(*converted) : json::object();
}

// The common case needs no decoding: no selector, no conversion, no table;
// the stored bytes (which carry their resourceVersion) are the object.
bool RawPassthrough(const ResourceContext& ctx, const Filter& filter, bool table) {
  return filter.labels.Empty() && filter.fields.Empty() && !table &&
         ctx.res.StorageVersion() == ctx.res.version;
}

std::string RawLine(std::string_view type, const std::string& object_bytes) {
  std::string line;
  line.reserve(object_bytes.size() + 32);
  line += "{\"type\":\"";
  line += type;
  line += "\",\"object\":";
  line += object_bytes;
  line += "}\n";
  return line;
}

// Turns one store event into zero or one watch lines.
std::optional<std::string> Translate(ResourceContext& ctx, const Filter& filter, Encoder& enc,
                                     const storage::Event& ev) {
  if (enc.raw() && ev.type == storage::Event::Type::kPut) {
    return RawLine(ev.prev ? "MODIFIED" : "ADDED", ev.kv.value);
  }
  json::object cur = DecodeStored(ctx, ev.kv.value);
  bool prev_match = ev.prev && filter.Matches(DecodeStored(ctx, ev.prev->value));
  if (ev.type == storage::Event::Type::kDelete) {
    if (!filter.Matches(cur)) return std::nullopt;
    MetaOf(cur)["resourceVersion"] = std::to_string(ev.kv.mod_revision);
    return enc.Line("DELETED", cur);
  }
  bool match = filter.Matches(cur);
  if (match) return enc.Line(ev.prev && prev_match ? "MODIFIED" : "ADDED", cur);
  if (prev_match) return enc.Line("DELETED", cur);
  return std::nullopt;
}

std::string ErrorLine(const Status& s) {
  return json::serialize(json::object{{"type", "ERROR"}, {"object", StatusObject(s)}}) + "\n";
}

std::string BookmarkLine(const api::Resource& res, int64_t rev) {
  json::object obj{{"kind", res.kind},
                   {"apiVersion", res.ApiVersion()},
                   {"metadata", {{"resourceVersion", std::to_string(rev)}}}};
  return json::serialize(json::object{{"type", "BOOKMARK"}, {"object", std::move(obj)}}) + "\n";
}

}  // namespace

void ServeWatch(ResourceContext& ctx) {
  auto labels = api::LabelSelector::Parse(ctx.req.Query("labelSelector"));
  if (!labels.ok()) return RespondStatus(ctx.resp, labels.status());
  auto fields = api::FieldSelector::Parse(ctx.req.Query("fieldSelector"));
  if (!fields.ok()) return RespondStatus(ctx.resp, fields.status());
  Filter filter{std::move(*labels), std::move(*fields)};
  if (!ctx.info.name.empty()) {
    auto by_name = api::FieldSelector::Parse("metadata.name=" + ctx.info.name);
    if (by_name.ok()) filter.fields = std::move(*by_name);
  }
  Encoder enc(ctx, RawPassthrough(ctx, filter, WantsTable(ctx.req.Header("accept"))));
  std::vector<std::string> initial;
  std::string rv_param = ctx.req.Query("resourceVersion");
  int64_t start = 0;
  if (rv_param.empty() || rv_param == "0") {
    auto page = ctx.objects.List(ctx.res, ctx.info.ns, {});
    if (!page.ok()) return RespondStatus(ctx.resp, page.status());
    for (const auto& item : page->items) {
      if (filter.Matches(item)) initial.push_back(enc.Line("ADDED", item));
    }
    start = page->revision;
  } else {
    char* end = nullptr;
    start = std::strtoll(rv_param.c_str(), &end, 10);
    if (end == nullptr || *end != '\0' || start < 0) {
      return RespondStatus(ctx.resp, Status::BadRequest("invalid resource version: " + rv_param));
    }
  }
  auto queue = std::make_shared<EventQueue>();
  auto latest = std::make_shared<std::atomic<int64_t>>(start);
  auto watcher = ctx.objects.store().Watch(
      Objects::Prefix(ctx.res, ctx.info.ns), start,
      [&ctx, &filter, &enc, queue, latest](const std::vector<storage::Event>& batch) {
        std::vector<std::string> lines;
        for (const auto& ev : batch) {
          if (auto line = Translate(ctx, filter, enc, ev)) lines.push_back(std::move(*line));
          latest->store(ev.kv.mod_revision);
        }
        if (!lines.empty()) queue->Push(std::move(lines));
      });
  Headers headers{{"Content-Type", "application/json"}, {"Cache-Control", "no-cache, private"}};
  if (!ctx.resp.StartStream(200, headers)) {
    if (watcher.ok()) (*watcher)->Stop();
    return;
  }
  if (!watcher.ok()) {
    Status s = watcher.status();
    if (s.Is(Reason::kExpired) || s.Is(Reason::kGone)) {
      s = Status::Expired("too old resource version: " + rv_param + " (" +
                          std::to_string(ctx.objects.store().CompactedRevision()) + ")");
    }
    ctx.resp.WriteChunk(ErrorLine(s));
    return;
  }
  ctx.metrics.WatchStarted();
  for (const auto& line : initial) ctx.resp.WriteChunk(line);
  std::string timeout_param = ctx.req.Query("timeoutSeconds");
  int timeout = timeout_param.empty() ? kDefaultTimeoutSec : std::atoi(timeout_param.c_str());
  bool bookmarks = ctx.req.QueryBool("allowWatchBookmarks");
  Clock& clock = ctx.objects.clock();
  TimePoint deadline = clock.Now() + std::chrono::seconds(timeout);
  TimePoint next_bookmark = clock.Now() + std::chrono::seconds(kBookmarkEverySec);
  ctx.resp.NotifyWhenGone([queue] { queue->Wake(); });
  while (clock.Now() < deadline) {
    bool overflow = false;
    for (auto& line : queue->Take(1000, &overflow)) {
      if (!ctx.resp.WriteChunk(line)) overflow = true;
    }
    if (overflow || ctx.resp.ClientGone()) break;
    if (bookmarks && clock.Now() >= next_bookmark) {
      if (!ctx.resp.WriteChunk(BookmarkLine(ctx.res, latest->load()))) break;
      next_bookmark = clock.Now() + std::chrono::seconds(kBookmarkEverySec);
    }
  }
  ctx.resp.NotifyWhenGone(nullptr);
  (*watcher)->Stop();
  ctx.metrics.WatchEnded();
}

}  // namespace flotilla::apiserver
