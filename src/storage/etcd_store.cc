// The etcd backend (etcd_store.h). One gRPC channel to the etcd members
// (pick_first over their addresses: a request goes to one member and moves
// to the next when that one is unreachable), one watch stream feeding the
// cache, and a compactor thread.
#include "storage/etcd_store.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netdb.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <map>
#include <thread>
#include <utility>

#include "base/file.h"
#include "base/io.h"
#include "base/mutex.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"
#include "storage/state.h"

namespace flotilla::storage {
namespace {

namespace pb = etcdserverpb;

// The key coordinating compactions between servers (kube-apiserver's
// compact_rev_key), under the prefix: the cache's one watch sees it in
// revision order with everything else. It is never an object: Load, List and
// the cache leave it out.
constexpr std::string_view kCompactKey = "/compact_rev_key";
// A stored value starts with this header, the revision its mutation was
// given, and a newline.
constexpr std::string_view kHeader = "flotilla:";
constexpr int64_t kListPage = 10000;

// etcd's errors arrive as gRPC statuses whose message is etcd's own
// ("etcdserver: request timed out", "mvcc: required revision has been
// compacted").
Status FromGrpc(const grpc::Status& s, std::string_view what) {
  std::string msg = "etcd " + std::string(what) + ": " + s.error_message();
  const std::string& m = s.error_message();
  if (m.find("required revision has been compacted") != std::string::npos) {
    return Status::Expired(msg);
  }
  if (m.find("required revision is a future revision") != std::string::npos) {
    return Status::BadRequest(msg);
  }
  switch (s.error_code()) {
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return Status::Timeout(msg);
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::CANCELLED:
      return Status::Unavailable(msg);
    default:
      return Status::Internal(msg);
  }
}

// "http://127.0.0.1:2379" -> "127.0.0.1:2379", resolving a host name to its
// IPv4 address so that all members fit one "ipv4:" target.
StatusOr<std::string> Address(const std::string& endpoint, bool* tls, std::string* host_out) {
  std::string_view rest = endpoint;
  *tls = false;
  if (rest.starts_with("https://")) {
    *tls = true;
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  }
  while (rest.ends_with('/')) rest.remove_suffix(1);
  size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Status::BadRequest("etcd endpoint " + endpoint + " needs a host and a port");
  }
  std::string host(rest.substr(0, colon));
  std::string port(rest.substr(colon + 1));
  *host_out = host;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || res == nullptr) {
    return Status::BadRequest("etcd endpoint " + endpoint + ": cannot resolve " + host);
  }
  char buf[64];
  const auto* sin = reinterpret_cast<const sockaddr_in*>(res->ai_addr);
  std::string ip = inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf) ? buf : host;
  freeaddrinfo(res);
  return ip + ":" + port;
}

std::string Envelope(int64_t guess, std::string_view body) {
  std::string out;
  out.reserve(kHeader.size() + 21 + body.size());
  out.append(kHeader).append(std::to_string(guess)).push_back('\n');
  out.append(body);
  return out;
}

class EtcdStore final : public Store {
 public:
  explicit EtcdStore(EtcdOptions opts) : opts_(std::move(opts)), state_(opts_.history_events) {}

  ~EtcdStore() override {
    {
      MutexLock lock(mu_);
      stopping_ = true;
      if (watch_ctx_ != nullptr) watch_ctx_->TryCancel();
    }
    stop_cv_.NotifyAll();
    cache_cv_.NotifyAll();
    if (watcher_.joinable()) watcher_.join();
    if (compactor_.joinable()) compactor_.join();
  }

  Status Connect();
  Status Load();
  void Start() {
    watcher_ = std::thread([this] { WatchLoop(); });
    if (opts_.compaction_interval.count() > 0) {
      compactor_ = std::thread([this] { CompactLoop(); });
    }
  }

  StatusOr<KeyValue> Get(std::string_view key) override {
    pb::RangeRequest req;
    req.set_key(Full(key));
    FLOTILLA_ASSIGN_OR_RETURN(pb::RangeResponse resp, Range(req));
    if (resp.kvs_size() == 0) return Status::NotFound("key " + QuotedKey(key) + " not found");
    return FromEtcd(resp.mutable_kvs(0));
  }

  StatusOr<ListResult> List(std::string_view prefix, const ListOptions& opts) override {
    // A first page comes from the cache once it has caught up with etcd (a
    // consistent read from the cache, as kube-apiserver makes them): 2,000
    // objects from etcd cost the server ten times the CPU.
    if (opts.revision == 0) {
      FLOTILLA_ASSIGN_OR_RETURN(bool fresh, CacheIsCurrent());
      if (fresh) return state_.List(prefix, opts);
    }
    pb::RangeRequest req;
    std::string full_prefix = Full(prefix);
    std::string after = Full(opts.start_after) + '\0';
    req.set_key(opts.start_after.empty() ? full_prefix : std::max(full_prefix, after));
    req.set_range_end(PrefixRangeEnd(full_prefix));
    req.set_revision(opts.revision);
    if (opts.limit > 0) req.set_limit(opts.limit);
    FLOTILLA_ASSIGN_OR_RETURN(pb::RangeResponse resp, Range(req));
    ListResult out;
    out.revision = opts.revision > 0 ? opts.revision : resp.header().revision();
    out.more = resp.more();
    // etcd counts the whole range; the compaction key is never in a list.
    if (out.more) out.remaining = std::max<int64_t>(0, resp.count() - resp.kvs_size());
    for (mvccpb::KeyValue& kv : *resp.mutable_kvs()) {
      if (IsCompactKey(kv.key())) continue;
      if (opts.shared) {
        out.shared_items.push_back(std::make_shared<const KeyValue>(FromEtcd(&kv)));
      } else {
        out.items.push_back(FromEtcd(&kv));
      }
    }
    return out;
  }

  // From the cache: a gauge needs no read of etcd (kube-apiserver counts
  // once a minute for the same reason).
  StatusOr<int64_t> Count(std::string_view prefix) override { return state_.Count(prefix); }

  using Store::Create;
  StatusOr<KeyValue> Create(std::string_view key, const Mutation& mutation, Duration ttl) override {
    FLOTILLA_ASSIGN_OR_RETURN(int64_t lease, LeaseFor(ttl));
    const int64_t guess = Guess();
    FLOTILLA_ASSIGN_OR_RETURN(Encoded encoded, RunMutation(mutation, key, guess, std::nullopt));
    std::string body = std::move(encoded.value);
    pb::TxnRequest txn;
    pb::Compare* cmp = txn.add_compare();
    cmp->set_key(Full(key));
    cmp->set_target(pb::Compare::CREATE);
    cmp->set_result(pb::Compare::EQUAL);
    cmp->set_create_revision(0);
    pb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key(Full(key));
    put->set_value(Envelope(guess, body));
    put->set_lease(lease);
    FLOTILLA_ASSIGN_OR_RETURN(pb::TxnResponse resp, Txn(txn));
    if (!resp.succeeded())
      return Status::AlreadyExists("key " + QuotedKey(key) + " already exists");
    const int64_t rev = resp.header().revision();
    AwaitCache(rev);
    return KeyValue{std::string(key), WithRevision(std::move(body), guess, rev), rev, rev};
  }

  using Store::Update;
  StatusOr<KeyValue> Update(std::string_view key, int64_t expected_mod_revision,
                            const Mutation& mutation, Duration ttl) override {
    FLOTILLA_ASSIGN_OR_RETURN(int64_t lease, LeaseFor(ttl));
    for (;;) {
      pb::RangeRequest get;
      get.set_key(Full(key));
      FLOTILLA_ASSIGN_OR_RETURN(pb::RangeResponse current, Range(get));
      if (current.kvs_size() == 0) return Status::NotFound("key " + QuotedKey(key) + " not found");
      KeyValue before = FromEtcd(current.mutable_kvs(0));
      if (expected_mod_revision != 0 && expected_mod_revision != before.mod_revision) {
        return ModifiedError(key, expected_mod_revision, before.mod_revision);
      }
      const int64_t guess = current.header().revision() + 1;
      FLOTILLA_ASSIGN_OR_RETURN(Encoded encoded, RunMutation(mutation, key, guess, before));
      std::string body = std::move(encoded.value);
      pb::TxnRequest txn;
      pb::Compare* cmp = txn.add_compare();
      cmp->set_key(Full(key));
      cmp->set_target(pb::Compare::MOD);
      cmp->set_result(pb::Compare::EQUAL);
      cmp->set_mod_revision(before.mod_revision);
      pb::PutRequest* put = txn.add_success()->mutable_request_put();
      put->set_key(Full(key));
      put->set_value(Envelope(guess, body));
      put->set_lease(lease);
      txn.add_failure()->mutable_request_range()->set_key(Full(key));
      FLOTILLA_ASSIGN_OR_RETURN(pb::TxnResponse resp, Txn(txn));
      if (resp.succeeded()) {
        const int64_t rev = resp.header().revision();
        AwaitCache(rev);
        return KeyValue{std::string(key), WithRevision(std::move(body), guess, rev),
                        before.create_revision, rev};
      }
      const auto& now = resp.responses(0).response_range();
      if (now.kvs_size() == 0) return Status::NotFound("key " + QuotedKey(key) + " not found");
      // Written in between: with a precondition that is a conflict, without
      // one the mutation runs again on the newer value.
      if (expected_mod_revision != 0) {
        return ModifiedError(key, expected_mod_revision, now.kvs(0).mod_revision());
      }
    }
  }

  StatusOr<KeyValue> Delete(std::string_view key, int64_t expected_mod_revision) override {
    pb::TxnRequest txn;
    pb::Compare* cmp = txn.add_compare();
    cmp->set_key(Full(key));
    if (expected_mod_revision != 0) {
      cmp->set_target(pb::Compare::MOD);
      cmp->set_result(pb::Compare::EQUAL);
      cmp->set_mod_revision(expected_mod_revision);
    } else {
      cmp->set_target(pb::Compare::CREATE);
      cmp->set_result(pb::Compare::GREATER);
      cmp->set_create_revision(0);
    }
    pb::DeleteRangeRequest* del = txn.add_success()->mutable_request_delete_range();
    del->set_key(Full(key));
    del->set_prev_kv(true);
    txn.add_failure()->mutable_request_range()->set_key(Full(key));
    FLOTILLA_ASSIGN_OR_RETURN(pb::TxnResponse resp, Txn(txn));
    if (!resp.succeeded()) {
      const auto& now = resp.responses(0).response_range();
      if (now.kvs_size() == 0) return Status::NotFound("key " + QuotedKey(key) + " not found");
      return ModifiedError(key, expected_mod_revision, now.kvs(0).mod_revision());
    }
    const auto& deleted = resp.responses(0).response_delete_range();
    if (deleted.prev_kvs_size() == 0)
      return Status::NotFound("key " + QuotedKey(key) + " not found");
    KeyValue kv =
        FromEtcd(resp.mutable_responses(0)->mutable_response_delete_range()->mutable_prev_kvs(0));
    kv.mod_revision = resp.header().revision();
    AwaitCache(kv.mod_revision);
    return kv;
  }

  StatusOr<std::unique_ptr<Watcher>> Watch(std::string_view prefix, int64_t after_revision,
                                           WatchCallback callback) override {
    // "From now": after every revision this store has seen, its own writes
    // included, which the cache may not have applied yet.
    if (after_revision == 0) after_revision = std::max(latest_.load(), state_.revision());
    return state_.Watch(prefix, after_revision, std::move(callback));
  }

  int64_t CurrentRevision() override {
    pb::RangeRequest req;
    req.set_key(opts_.prefix);
    req.set_range_end(PrefixRangeEnd(opts_.prefix));
    req.set_count_only(true);
    auto resp = Range(req);
    return resp.ok() ? resp->header().revision() : latest_.load();
  }

  Status Compact(int64_t revision) override {
    pb::CompactionRequest req;
    req.set_revision(revision);
    auto done = Call<pb::CompactionResponse>(&pb::KV::Stub::Compact, req, "compaction");
    // At or below etcd's compacted revision: already done.
    if (!done.ok() && !done.status().Is(Reason::kExpired)) return done.status();
    return CompactCache(revision);
  }

  int64_t CompactedRevision() override { return state_.compacted(); }

 private:
  std::string Full(std::string_view key) const { return opts_.prefix + std::string(key); }
  bool IsCompactKey(std::string_view full) const {
    return full.size() == opts_.prefix.size() + kCompactKey.size() &&
           full.starts_with(opts_.prefix) && full.ends_with(kCompactKey);
  }

  void Prepare(grpc::ClientContext& ctx) const {
    ctx.set_deadline(std::chrono::system_clock::now() + opts_.request_timeout);
    ctx.set_wait_for_ready(true);
  }

  // The highest revision seen in any response.
  void Note(int64_t revision) {
    int64_t seen = latest_.load();
    while (revision > seen && !latest_.compare_exchange_weak(seen, revision)) {
    }
  }

  // A write is acknowledged once the cache has it, so that a watch started
  // after the acknowledgement does not need it replayed, as with the other
  // backends. Bounded: with the watch stream broken the write is still
  // durable and acknowledged.
  void AwaitCache(int64_t revision) {
    ScopedBlocking blocking;
    MutexLock lock(mu_);
    cache_cv_.WaitFor(lock, opts_.request_timeout,
                      [&]() REQUIRES(mu_) { return stopping_ || watched_.load() >= revision; });
  }

  // Whether the cache has every write etcd had when this was asked (one
  // small read for etcd's revision; a short wait for events in flight).
  // False when the latest revision is not under the prefix (another user of
  // the same etcd wrote last): the caller reads etcd instead.
  StatusOr<bool> CacheIsCurrent() {
    pb::RangeRequest req;
    req.set_key(Full(kCompactKey));
    req.set_keys_only(true);
    FLOTILLA_ASSIGN_OR_RETURN(pb::RangeResponse resp, Range(req));
    const int64_t revision = resp.header().revision();
    ScopedBlocking blocking;
    MutexLock lock(mu_);
    return cache_cv_.WaitFor(lock, std::chrono::milliseconds(50), [&]() REQUIRES(mu_) {
      return stopping_ || watched_.load() >= revision;
    }) && !stopping_;
  }

  int64_t Guess() const { return std::max(latest_.load(), state_.revision()) + 1; }

  // The lease a write with `ttl` attaches its key to (0: none), as
  // kube-apiserver's lease manager hands them out: writes within a short
  // window share one lease, granted for the TTL plus that window (5% of
  // the TTL, at least a second, etcd's unit, and at most a minute), so a
  // busy event stream costs a lease per window rather than per write, and
  // a key lives at most the window longer than asked. (Without the second,
  // short TTLs got a lease per write, and etcd revokes leases one by one:
  // 200 keys of a 1 s TTL took up to a minute to go on a loaded machine.)
  StatusOr<int64_t> LeaseFor(Duration ttl) {
    if (ttl <= Duration::zero()) return int64_t{0};
    const auto ttl_s = std::max<int64_t>(1, std::chrono::ceil<std::chrono::seconds>(ttl).count());
    const int64_t window_s = std::clamp<int64_t>(ttl_s / 20, 1, 60);
    const auto now = std::chrono::steady_clock::now();
    MutexLock lock(lease_mu_);
    auto& cached = leases_[ttl_s];
    if (cached.id != 0 && cached.expires > now + std::chrono::seconds(ttl_s) &&
        cached.expires <= now + std::chrono::seconds(ttl_s + window_s)) {
      return cached.id;
    }
    pb::LeaseGrantRequest req;
    req.set_ttl(ttl_s + window_s);
    pb::LeaseGrantResponse resp;
    ScopedBlocking blocking;
    grpc::ClientContext ctx;
    Prepare(ctx);
    grpc::Status s = lease_->LeaseGrant(&ctx, req, &resp);
    if (!s.ok()) return FromGrpc(s, "lease grant");
    if (!resp.error().empty()) return Status::Internal("etcd lease grant: " + resp.error());
    cached = {resp.id(), now + std::chrono::seconds(resp.ttl())};
    return cached.id;
  }

  // One unary call to etcd with the request deadline; notes the revision
  // its response carries.
  template <typename Response, typename Request, typename Method>
  StatusOr<Response> Call(Method method, const Request& req, std::string_view what) {
    Response resp;
    ScopedBlocking blocking;
    grpc::ClientContext ctx;
    Prepare(ctx);
    grpc::Status s = (kv_.get()->*method)(&ctx, req, &resp);
    if (!s.ok()) return FromGrpc(s, what);
    Note(resp.header().revision());
    return resp;
  }
  StatusOr<pb::RangeResponse> Range(const pb::RangeRequest& req) {
    return Call<pb::RangeResponse>(&pb::KV::Stub::Range, req, "read");
  }
  StatusOr<pb::TxnResponse> Txn(const pb::TxnRequest& req) {
    return Call<pb::TxnResponse>(&pb::KV::Stub::Txn, req, "write");
  }

  static Status ModifiedError(std::string_view key, int64_t expected, int64_t found) {
    return Status::Conflict("key " + QuotedKey(key) + " has been modified: expected revision " +
                            std::to_string(expected) + ", found " + std::to_string(found));
  }

  // The value a write stored under `guess`, as read at `revision`.
  std::string WithRevision(std::string body, int64_t guess, int64_t revision) const {
    if (guess == revision || !opts_.set_revision) return body;
    auto fixed = opts_.set_revision(body, revision);
    if (!fixed.ok()) {
      spdlog::warn("etcd: cannot set revision {} in a stored value: {}", revision,
                   fixed.status().ToString());
      return body;
    }
    return std::move(fixed).value();
  }

  // Strips the header; a value without one (not written by Flotilla) gets
  // its revision set.
  std::string Value(std::string stored, int64_t revision) const {
    std::string_view v = stored;
    int64_t guess = 0;
    if (v.starts_with(kHeader)) {
      size_t nl = v.find('\n');
      const char* first = v.data() + kHeader.size();
      if (nl != std::string_view::npos &&
          std::from_chars(first, v.data() + nl, guess).ec == std::errc()) {
        stored.erase(0, nl + 1);
        return WithRevision(std::move(stored), guess, revision);
      }
    }
    return WithRevision(std::move(stored), 0, revision);
  }

  // Takes the key and value out of `kv` (moved, not copied: a list of 2,000
  // objects is 700 KB).
  KeyValue FromEtcd(mvccpb::KeyValue* kv) const {
    std::string key = std::move(*kv->mutable_key());
    key.erase(0, std::min(key.size(), opts_.prefix.size()));
    return KeyValue{std::move(key), Value(std::move(*kv->mutable_value()), kv->mod_revision()),
                    kv->create_revision(), kv->mod_revision()};
  }

  Status CompactCache(int64_t revision) {
    int64_t upto = std::min(revision, state_.revision());
    if (upto <= state_.compacted()) return Status::Ok();
    return state_.Compact(upto);
  }

  // Applies one watch response's events to the cache. False when the stream
  // must be given up (its watch was cancelled).
  void ApplyEvents(pb::WatchResponse& resp);
  void WatchLoop();
  void CompactLoop();
  // Waits `d` or until the store stops; false when it stops.
  bool Pause(std::chrono::milliseconds d) {
    MutexLock lock(mu_);
    return !stop_cv_.WaitFor(lock, d, [&]() REQUIRES(mu_) { return stopping_; });
  }

  const EtcdOptions opts_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::KV::Stub> kv_;
  std::unique_ptr<pb::Watch::Stub> watch_;
  std::unique_ptr<pb::Lease::Stub> lease_;
  State state_;
  // The lease of the current window per TTL in seconds.
  struct Lease {
    int64_t id = 0;
    std::chrono::steady_clock::time_point expires;
  };
  Mutex lease_mu_;
  std::map<int64_t, Lease> leases_ GUARDED_BY(lease_mu_);
  std::atomic<int64_t> latest_{0};
  // Every event up to this revision has been applied to the cache.
  std::atomic<int64_t> watched_{0};

  Mutex mu_;
  CondVar stop_cv_;
  CondVar cache_cv_;  // watched_ advanced
  bool stopping_ GUARDED_BY(mu_) = false;
  grpc::ClientContext* watch_ctx_ GUARDED_BY(mu_) = nullptr;
  std::thread watcher_;
  std::thread compactor_;
};

Status EtcdStore::Connect() {
  if (opts_.endpoints.empty()) return Status::BadRequest("no etcd endpoints (--etcd-servers)");
  std::string target = "ipv4:";
  bool tls = false;
  std::string first_host;
  for (size_t i = 0; i < opts_.endpoints.size(); ++i) {
    bool this_tls = false;
    std::string host;
    FLOTILLA_ASSIGN_OR_RETURN(std::string addr, Address(opts_.endpoints[i], &this_tls, &host));
    if (i > 0) target += ",";
    target += addr;
    tls = tls || this_tls;
    if (i == 0) first_host = host;
  }
  std::shared_ptr<grpc::ChannelCredentials> creds;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  if (tls || !opts_.ca_file.empty()) {
    grpc::SslCredentialsOptions ssl;
    if (!opts_.ca_file.empty()) {
      FLOTILLA_ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadFile(opts_.ca_file));
    }
    if (!opts_.cert_file.empty()) {
      FLOTILLA_ASSIGN_OR_RETURN(ssl.pem_cert_chain, ReadFile(opts_.cert_file));
      FLOTILLA_ASSIGN_OR_RETURN(ssl.pem_private_key, ReadFile(opts_.key_file));
    }
    creds = grpc::SslCredentials(ssl);
    // The members are dialled by address; their certificates name the host.
    args.SetSslTargetNameOverride(first_host);
  } else {
    creds = grpc::InsecureChannelCredentials();
  }
  channel_ = grpc::CreateCustomChannel(target, creds, args);
  kv_ = pb::KV::NewStub(channel_);
  watch_ = pb::Watch::NewStub(channel_);
  lease_ = pb::Lease::NewStub(channel_);
  return Status::Ok();
}

// The cache starts as one consistent read of the prefix, page by page at the
// first page's revision.
Status EtcdStore::Load() {
  pb::RangeRequest req;
  req.set_key(opts_.prefix);
  req.set_range_end(PrefixRangeEnd(opts_.prefix));
  req.set_limit(kListPage);
  int64_t revision = 0;
  std::vector<KeyValue> kvs;
  for (;;) {
    auto resp = Range(req);
    if (!resp.ok()) {
      return Status::Unavailable("cannot read from etcd at " + opts_.endpoints.front() + ": " +
                                 resp.status().message());
    }
    if (revision == 0) revision = resp->header().revision();
    if (resp->kvs_size() > 0) req.set_key(resp->kvs(resp->kvs_size() - 1).key() + '\0');
    for (mvccpb::KeyValue& kv : *resp->mutable_kvs()) {
      if (!IsCompactKey(kv.key())) kvs.push_back(FromEtcd(&kv));
    }
    if (!resp->more() || resp->kvs_size() == 0) break;
    req.set_revision(revision);
  }
  state_.Start(revision);
  for (auto& kv : kvs) {
    std::string key = kv.key;
    state_.Seed(key, std::make_shared<const KeyValue>(std::move(kv)));
  }
  watched_ = revision;
  return Status::Ok();
}

void EtcdStore::ApplyEvents(pb::WatchResponse& resp) {
  std::vector<HistoryEntry> entries;
  const int64_t before = state_.revision();
  int64_t last = before;
  int64_t compacted_seen = 0;  // the compaction key's latest write here
  for (mvccpb::Event& ev : *resp.mutable_events()) {
    mvccpb::KeyValue& kv = *ev.mutable_kv();
    if (IsCompactKey(kv.key())) {
      // A server recorded a compaction: the cache forgets history up to it.
      int64_t rev = 0;
      const std::string& v = kv.value();
      if (ev.type() == mvccpb::Event::PUT &&
          std::from_chars(v.data(), v.data() + v.size(), rev).ec == std::errc()) {
        if (!entries.empty()) state_.Apply(std::exchange(entries, {}));
        Status st = CompactCache(rev);
        if (!st.ok()) spdlog::warn("etcd: compacting the watch cache: {}", st.ToString());
      }
      compacted_seen = std::max(compacted_seen, kv.mod_revision());
      continue;
    }
    // A transaction writing several keys of the prefix gives them one
    // revision: Flotilla writes one key per transaction, but etcd revoking
    // a lease deletes every key attached to it at once (the Events that
    // expire together). etcd never splits a revision's events between
    // responses, so only a revision cached before this response is old.
    if (kv.mod_revision() <= before || kv.mod_revision() < last) {
      spdlog::error("etcd watch: a write at revision {} (key {}) after revision {} is not cached",
                    kv.mod_revision(), kv.key(), last);
      continue;
    }
    last = kv.mod_revision();
    HistoryEntry entry;
    entry.revision = kv.mod_revision();
    std::string_view key = kv.key();
    key.remove_prefix(std::min(key.size(), opts_.prefix.size()));
    entry.prev = state_.Find(key);
    if (!entry.prev && ev.has_prev_kv()) {
      entry.prev = std::make_shared<const KeyValue>(FromEtcd(ev.mutable_prev_kv()));
    }
    if (ev.type() == mvccpb::Event::PUT) {
      entry.kv = std::make_shared<const KeyValue>(FromEtcd(&kv));
    } else if (!entry.prev) {
      continue;  // the deletion of a key the cache never had
    }
    entries.push_back(std::move(entry));
  }
  if (!entries.empty()) state_.Apply(std::move(entries));
  // A response without events (not the one confirming the watch) is a
  // progress notification: every event up to its revision was sent.
  int64_t progress = resp.events_size() == 0 && !resp.created() ? resp.header().revision() : 0;
  {
    MutexLock lock(mu_);
    watched_ = std::max({watched_.load(), last, progress, compacted_seen});
  }
  cache_cv_.NotifyAll();
}

// One watch on the whole prefix. After a broken stream it resumes from the
// last revision seen.
void EtcdStore::WatchLoop() {
  std::chrono::milliseconds backoff(100);
  for (;;) {
    grpc::ClientContext ctx;
    ctx.set_wait_for_ready(true);
    {
      MutexLock lock(mu_);
      if (stopping_) return;
      watch_ctx_ = &ctx;
    }
    auto stream = watch_->Watch(&ctx);
    const int64_t from = watched_.load() + 1;
    pb::WatchRequest data;
    auto* c = data.mutable_create_request();
    c->set_key(opts_.prefix);
    c->set_range_end(PrefixRangeEnd(opts_.prefix));
    c->set_start_revision(from);
    c->set_prev_kv(true);
    c->set_progress_notify(true);
    bool ok = stream->Write(data);
    pb::WatchResponse resp;
    while (ok && stream->Read(&resp)) {
      backoff = std::chrono::milliseconds(100);
      if (resp.compact_revision() > 0) {
        // The cache missed events etcd no longer has: only a fresh start is
        // consistent (kube-apiserver's cache re-lists; ours is rebuilt when
        // the server restarts).
        spdlog::critical(
            "etcd compacted revision {} before the watch cache read past {}; the cache cannot "
            "be brought up to date, restarting the server is required",
            resp.compact_revision(), from - 1);
        std::abort();
      }
      if (resp.canceled()) break;
      Note(resp.header().revision());
      ApplyEvents(resp);
    }
    stream->WritesDone();
    grpc::Status s = stream->Finish();
    {
      MutexLock lock(mu_);
      watch_ctx_ = nullptr;
      if (stopping_) return;
    }
    spdlog::warn("etcd watch ended ({}); resuming after revision {}", s.error_message(),
                 watched_.load());
    if (!Pause(backoff)) return;
    backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
  }
}

// kube-apiserver's compactor: every interval, the server whose view of
// compact_rev_key's version is current records the revision it saw one
// interval ago and compacts etcd to it; the others learn the new version.
void EtcdStore::CompactLoop() {
  int64_t version = 0;
  int64_t revision = 0;
  while (Pause(opts_.compaction_interval)) {
    pb::TxnRequest txn;
    pb::Compare* cmp = txn.add_compare();
    cmp->set_key(Full(kCompactKey));
    cmp->set_target(pb::Compare::VERSION);
    cmp->set_result(pb::Compare::EQUAL);
    cmp->set_version(version);
    pb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key(Full(kCompactKey));
    put->set_value(std::to_string(revision));
    txn.add_failure()->mutable_request_range()->set_key(Full(kCompactKey));
    auto resp = Txn(txn);
    if (!resp.ok()) {
      spdlog::warn("etcd compaction: {}", resp.status().ToString());
      continue;
    }
    if (!resp->succeeded()) {
      const auto& kvs = resp->responses(0).response_range().kvs();
      version = kvs.empty() ? 0 : kvs[0].version();
      revision = resp->header().revision();
      continue;
    }
    ++version;
    if (revision > 0) {
      Status st = Compact(revision);
      if (!st.ok())
        spdlog::warn("etcd compaction to {}: {}", revision, st.ToString());
      else
        spdlog::info("etcd compacted to revision {}", revision);
    }
    revision = resp->header().revision();
  }
}

}  // namespace

std::string PrefixRangeEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xff) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

StatusOr<std::unique_ptr<Store>> OpenEtcdStore(const EtcdOptions& opts) {
  auto store = std::make_unique<EtcdStore>(opts);
  FLOTILLA_RETURN_IF_ERROR(store->Connect());
  FLOTILLA_RETURN_IF_ERROR(store->Load());
  store->Start();
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace flotilla::storage
