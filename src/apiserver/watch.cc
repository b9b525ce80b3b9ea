// ServeWatch: a chunked stream of watch events for one resource, fed by a
// Store watch, filtered by selectors (objects leaving a selector are sent as
// DELETED, entering ones as ADDED), with bookmarks and timeouts.
#include <algorithm>
#include <atomic>

#include "api/fields.h"
#include "api/labels.h"
#include "apiserver/meta.h"
#include "apiserver/resource_handler.h"
#include "apiserver/responses.h"
#include "apiserver/table.h"
#include "base/due_time.h"
#include "base/mutex.h"
#include "base/timer.h"

namespace flotilla::apiserver {
namespace {

constexpr int kDefaultTimeoutSec = 1800;
// kube-apiserver's watch cache sends a watcher that asked for them a
// bookmark a minute (its defaultBookmarkFrequency). Each is a write to every
// open watch: 100,000 of them at 5,000 members a federation watches.
constexpr int kBookmarkEverySec = 60;

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
  Encoder(const ResourceContext& ctx, bool raw)
      : res_(ctx.res),
        clock_(ctx.objects.clock()),
        table_(WantsTable(ctx.req.Header("accept"))),
        include_(ParseIncludeObject(ctx.req.Query("includeObject"))),
        raw_(raw) {}

  bool table() const { return table_; }
  bool raw() const { return raw_; }

  std::string Line(std::string_view type, const json::object& obj) {
    json::value payload = obj;
    if (table_) {
      payload = ToTable(res_, {obj}, clock_.Now(), include_, first_);
      first_ = false;
    }
    return json::serialize(json::object{{"type", type}, {"object", std::move(payload)}}) + "\n";
  }

 private:
  const api::Resource& res_;
  Clock& clock_;
  bool table_;
  IncludeObject include_;
  bool raw_;
  bool first_ = true;
};

// The object stored as `bytes`, as served: a copy of `object` (the store
// event's, when its writer shared it) or `bytes` parsed.
json::object DecodeStored(Objects& objects, const api::Resource& res, const std::string& bytes,
                          const json::object* object = nullptr) {
  json::object stored;
  if (object != nullptr) {
    stored = *object;
  } else {
    auto parsed = ParseJsonObject(bytes);
    if (!parsed.ok()) return json::object();
    stored = std::move(*parsed);
  }
  auto converted = objects.FromStorage(res, std::move(stored));
  return converted.ok() ? std::move(*converted) : json::object();
}

// The common case needs no decoding: no selector, no conversion, no table;
// the stored bytes (which carry their resourceVersion) are the object.
bool RawPassthrough(const ResourceContext& ctx, const Filter& filter, bool table) {
  return filter.labels.Empty() && filter.fields.Empty() && !table && ctx.res.StoredAsServed();
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

std::string ErrorLine(const Status& s) {
  return json::serialize(json::object{{"type", "ERROR"}, {"object", StatusObject(s)}}) + "\n";
}

std::string BookmarkLine(const api::Resource& res, int64_t rev) {
  json::object obj{{"kind", res.kind},
                   {"apiVersion", res.ApiVersion()},
                   {"metadata", {{"resourceVersion", std::to_string(rev)}}}};
  return json::serialize(json::object{{"type", "BOOKMARK"}, {"object", std::move(obj)}}) + "\n";
}

// One open watch: the store's events, translated, go to the client's
// stream; owned by the watcher's callback and the stream's end, not by a
// thread.
class WatchSession : public std::enable_shared_from_this<WatchSession> {
 public:
  WatchSession(const ResourceContext& ctx, Filter filter, bool raw)
      : keep_(ctx.keep),
        res_(ctx.res),
        objects_(ctx.objects),
        metrics_(ctx.metrics),
        clock_(ctx.objects.clock()),
        ns_(ctx.info.ns),
        filter_(std::move(filter)),
        enc_(ctx, raw) {}

  Encoder& encoder() { return enc_; }
  const Filter& filter() const { return filter_; }

  // Starts delivering events after `start` to `stream`, `initial` first.
  // On failure, the stream carries the error and ends.
  void Start(std::shared_ptr<ChunkStream> stream, int64_t start, std::string initial,
             const std::string& rv_param, std::chrono::seconds timeout, bool bookmarks) {
    stream_ = std::move(stream);
    takes_objects_ = stream_->TakesObjects();
    latest_ = start;
    auto self = shared_from_this();
    storage::WatchCallback deliver = [self](const std::vector<storage::Event>& batch) {
      self->Deliver(batch);
    };
    // A reader that takes objects asks the writers for them.
    const std::string prefix = Objects::Prefix(res_, ns_);
    auto watcher = takes_objects_
                       ? objects_.store().WatchWithObjects(prefix, start, std::move(deliver))
                       : objects_.store().Watch(prefix, start, std::move(deliver));
    if (!watcher.ok()) {
      Status s = watcher.status();
      if (s.Is(Reason::kExpired) || s.Is(Reason::kGone)) {
        s = Status::Expired("too old resource version: " + rv_param + " (" +
                            std::to_string(objects_.store().CompactedRevision()) + ")");
      }
      stream_->Write(ErrorLine(s));
      stream_->End();
      return;
    }
    metrics_.WatchStarted();
    {
      // Events that came before the initial lines were written wait for them.
      MutexLock lock(mu_);
      watcher_ = std::move(*watcher);
      if (!initial.empty()) stream_->Write(std::move(initial));
      if (!held_.empty()) stream_->Write(std::move(held_));
      open_ = true;
    }
    deadline_ = clock_.Now() + timeout;
    bookmarks_ = bookmarks;
    // The timer holds the session weakly: the stream's end owns it.
    timer_ = std::make_unique<Timer>(clock_, [weak = weak_from_this()] {
      if (auto self = weak.lock()) self->Tick();
    });
    ArmTimer();
    stream_->OnEnd([self] { self->Stop(); });
  }

 private:
  // On a delivery thread of the store's watch hub.
  void Deliver(const std::vector<storage::Event>& batch) {
    std::string lines;
    size_t count = 0;
    // Each line's object, when a raw line's store event shared it (empty
    // while none did): a reader in this process takes it as it is.
    std::vector<std::shared_ptr<const json::object>> objects;
    for (const auto& ev : batch) {
      latest_.store(ev.kv.mod_revision);
      std::optional<std::string> line = Translate(ev);
      if (!line) continue;
      lines += *line;
      bool raw = enc_.raw() && ev.type == storage::Event::Type::kPut;
      if (takes_objects_ && raw && ev.object != nullptr) {
        objects.resize(count);
        objects.push_back(ev.object);
      } else if (!objects.empty()) {
        objects.push_back(nullptr);
      }
      ++count;
    }
    if (lines.empty()) return;
    MutexLock lock(mu_);
    if (!open_) {
      held_ += lines;  // their objects are dropped: the reader parses these
    } else if (!stream_->WriteWatchLines(std::move(lines), std::move(objects)) && watcher_) {
      watcher_->Stop();  // from the callback: returns at once, no batch follows
    }
  }

  // Turns one store event into zero or one watch lines.
  std::optional<std::string> Translate(const storage::Event& ev) {
    if (enc_.raw() && ev.type == storage::Event::Type::kPut) {
      return RawLine(ev.prev ? "MODIFIED" : "ADDED", ev.kv.value);
    }
    json::object cur = DecodeStored(objects_, res_, ev.kv.value, ev.object.get());
    bool prev_match = ev.prev && filter_.Matches(DecodeStored(objects_, res_, ev.prev->value));
    if (ev.type == storage::Event::Type::kDelete) {
      if (!filter_.Matches(cur)) return std::nullopt;
      MetaOf(cur)["resourceVersion"] = std::to_string(ev.kv.mod_revision);
      return enc_.Line("DELETED", cur);
    }
    bool match = filter_.Matches(cur);
    if (match) return enc_.Line(ev.prev && prev_match ? "MODIFIED" : "ADDED", cur);
    if (prev_match) return enc_.Line("DELETED", cur);
    return std::nullopt;
  }

  // The next bookmark or the end of the watch, whichever is sooner, on the
  // server's clock. Bookmarks fall on whole seconds: those of every watch
  // of the process due in one second go out after one wake-up.
  void ArmTimer() {
    TimePoint at = deadline_;
    if (bookmarks_) {
      at = std::min(at, DueOnWholeSecond(clock_.Now(), std::chrono::seconds(kBookmarkEverySec)));
    }
    timer_->ArmAt(at);
  }

  // On the clock's timer thread, shared by every timer: quick.
  void Tick() {
    if (clock_.Now() >= deadline_) return stream_->End();
    if (bookmarks_ && !stream_->Write(BookmarkLine(res_, latest_.load()))) return;
    ArmTimer();
  }

  // Once the stream has ended.
  void Stop() {
    std::unique_ptr<storage::Watcher> watcher;
    {
      MutexLock lock(mu_);
      watcher = std::move(watcher_);
      open_ = false;
    }
    if (watcher) watcher->Stop();
    timer_->Cancel();
    metrics_.WatchEnded();
  }

  const std::shared_ptr<const api::Resource> keep_;  // res_ of a custom kind
  const api::Resource& res_;
  Objects& objects_;
  Metrics& metrics_;
  Clock& clock_;
  const std::string ns_;
  const Filter filter_;
  Encoder enc_;  // used by one delivery at a time
  std::shared_ptr<ChunkStream> stream_;
  bool takes_objects_ = false;  // stream_->TakesObjects(), set with it
  std::atomic<int64_t> latest_{0};
  // Set by Start before the stream can end.
  TimePoint deadline_;
  bool bookmarks_ = false;
  std::unique_ptr<Timer> timer_;
  Mutex mu_;
  std::unique_ptr<storage::Watcher> watcher_ GUARDED_BY(mu_);
  bool open_ GUARDED_BY(mu_) = false;
  std::string held_ GUARDED_BY(mu_);
};

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
  bool raw = RawPassthrough(ctx, filter, WantsTable(ctx.req.Header("accept")));
  auto session = std::make_shared<WatchSession>(ctx, std::move(filter), raw);
  std::string initial;
  std::string rv_param = ctx.req.Query("resourceVersion");
  int64_t start = 0;
  if (rv_param.empty() || rv_param == "0") {
    auto page = ctx.objects.List(ctx.res, ctx.info.ns, {});
    if (!page.ok()) return RespondStatus(ctx.resp, page.status());
    for (const auto& item : page->items) {
      if (session->filter().Matches(item)) initial += session->encoder().Line("ADDED", item);
    }
    start = page->revision;
  } else {
    char* end = nullptr;
    start = std::strtoll(rv_param.c_str(), &end, 10);
    if (end == nullptr || *end != '\0' || start < 0) {
      return RespondStatus(ctx.resp, Status::BadRequest("invalid resource version: " + rv_param));
    }
  }
  std::string timeout_param = ctx.req.Query("timeoutSeconds");
  // As in Kubernetes, an absent or zero timeout is the server's default.
  int timeout = std::atoi(timeout_param.c_str());
  if (timeout <= 0) timeout = kDefaultTimeoutSec;
  Headers headers{{"Content-Type", "application/json"}, {"Cache-Control", "no-cache, private"}};
  auto stream = ctx.resp.StartAsyncStream(200, headers);
  if (!stream) return;
  session->Start(std::move(stream), start, std::move(initial), rv_param,
                 std::chrono::seconds(timeout), ctx.req.QueryBool("allowWatchBookmarks"));
}

}  // namespace flotilla::apiserver
