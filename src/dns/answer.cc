// Answering a query from a zone (answer.h).
#include "dns/answer.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace flotilla::dns {
namespace {

constexpr int kMaxChain = 8;

struct PktDeleter {
  void operator()(knot_pkt_t* p) const { knot_pkt_free(p); }
};
using Pkt = std::unique_ptr<knot_pkt_t, PktDeleter>;

// Puts `rr` in the current section; false when it did not fit (the
// packet's TC bit is set then).
bool Put(knot_pkt_t* r, const knot_rrset_t* rr) {
  return knot_pkt_put(r, KNOT_COMPR_HINT_NONE, rr, 0) == KNOT_EOK;
}

// An SRV rdata's target: after priority, weight and port.
const knot_dname_t* SrvTarget(const knot_rdata_t* rd) { return rd->data + 6; }

// The largest response `q` may get: `out`'s size, and over UDP 512 bytes
// or the query's EDNS payload (at most options.max_udp_payload).
uint16_t Limit(knot_pkt_t* q, std::span<uint8_t> out, Transport transport,
               const AnswerOptions& options) {
  uint16_t limit = static_cast<uint16_t>(std::min<size_t>(out.size(), KNOT_WIRE_MAX_PKTSIZE));
  if (transport != Transport::kUdp) return limit;
  uint16_t udp = KNOT_WIRE_MIN_PKTSIZE;
  if (knot_pkt_has_edns(q)) {
    udp = std::max<uint16_t>(udp,
                             std::min(knot_edns_get_payload(q->opt_rr), options.max_udp_payload));
  }
  return std::min(limit, udp);
}

// One response being written into `out` for the parsed query `q`, with the
// space for its OPT (when the query had one) kept until Finish writes it
// last.
class Response {
 public:
  Response(const Zone& zone, knot_pkt_t* q, std::span<uint8_t> out, uint16_t limit,
           const AnswerOptions& options)
      : zone_(zone),
        q_(q),
        out_(out),
        limit_(limit),
        options_(options),
        edns_(knot_pkt_has_edns(q)) {
    result_.qtype = knot_pkt_qtype(q);
  }
  ~Response() {
    // An OPT never put in the packet (a failed start) is freed here.
    if (opt_pending_) knot_rrset_clear(&opt_, &r_->mm);
  }

  // The response header for the query, AA clear, the OPT's space kept;
  // false when libknot could not start it.
  bool Start() {
    r_.reset(knot_pkt_new(out_.data(), limit_, nullptr));
    if (!r_ || knot_pkt_init_response(r_.get(), q_) != KNOT_EOK) return false;
    knot_wire_clear_ra(r_->wire);
    knot_wire_clear_ad(r_->wire);
    if (edns_) {
      knot_edns_init(&opt_, options_.max_udp_payload, 0, 0, &r_->mm);
      opt_pending_ = true;
      knot_pkt_reserve(r_.get(), static_cast<uint16_t>(knot_edns_wire_size(&opt_)));
    }
    return true;
  }

  // The whole answer: BADVERS for an EDNS version other than 0, REFUSED
  // outside the zone or class IN, else the records (CNAME chain, the
  // records of the type, SOA when negative, SRV targets' addresses).
  Answered Write() {
    if (edns_ && knot_edns_get_version(q_->opt_rr) != 0) {
      result_.rcode = KNOT_RCODE_BADVERS;
      return Finish();
    }
    uint16_t qclass = knot_pkt_qclass(q_);
    const knot_dname_t* qname = knot_pkt_qname(q_);  // lowercase
    if ((qclass != KNOT_CLASS_IN && qclass != KNOT_CLASS_ANY) ||
        knot_dname_in_bailiwick(qname, zone_.apex()) < 0) {
      result_.rcode = KNOT_RCODE_REFUSED;
      return Finish();
    }
    knot_wire_set_aa(r_->wire);
    knot_pkt_begin(r_.get(), KNOT_ANSWER);
    std::vector<const knot_rrset_t*> srv;
    std::optional<bool> negative = PutAnswer(qname, srv);
    if (!negative) return Truncated();
    if (*negative) {
      knot_pkt_begin(r_.get(), KNOT_AUTHORITY);
      if (!Put(r_.get(), &zone_.soa())) return Truncated();
    }
    PutSrvTargets(srv);
    return Finish();
  }

 private:
  // The answer section: the records of `qname` of the query's type,
  // following CNAMEs in the zone. Whether the answer is negative (NXDOMAIN
  // or NODATA; the rcode is set); nullopt when a record did not fit.
  std::optional<bool> PutAnswer(const knot_dname_t* qname, std::vector<const knot_rrset_t*>& srv) {
    uint16_t qtype = result_.qtype;
    const knot_dname_t* name = qname;
    bool wildcard = false;
    const Zone::Node* node = zone_.Match(name, &wildcard);
    // `rr` as the answer carries it: a wildcard's records with the name
    // asked as owner (synthesized, RFC 4592 §3.4.1).
    auto put = [&](const knot_rrset_t* rr) {
      if (!wildcard) return Put(r_.get(), rr);
      knot_rrset_t synthesized = *rr;
      synthesized.owner = const_cast<knot_dname_t*>(name);
      return Put(r_.get(), &synthesized);
    };
    for (int link = 0; link < kMaxChain; ++link) {
      if (node == nullptr) {
        // The first name: NXDOMAIN; a CNAME's target: its rcode too
        // (RFC 6604).
        result_.rcode = KNOT_RCODE_NXDOMAIN;
        return true;
      }
      const knot_rrset_t* cname = node->Of(KNOT_RRTYPE_CNAME);
      if (cname != nullptr && qtype != KNOT_RRTYPE_CNAME && qtype != KNOT_RRTYPE_ANY) {
        if (!put(cname)) return std::nullopt;
        name = knot_cname_name(cname->rrs.rdata);
        if (knot_dname_in_bailiwick(name, zone_.apex()) < 0)
          return false;  // the client resolves it
        node = zone_.Match(name, &wildcard);
        continue;
      }
      bool any = false;
      for (const knot_rrset_t* rr : node->rrsets) {
        if (qtype != KNOT_RRTYPE_ANY && rr->type != qtype) continue;
        if (!put(rr)) return std::nullopt;
        if (rr->type == KNOT_RRTYPE_SRV) srv.push_back(rr);
        any = true;
      }
      return !any;
    }
    return false;
  }

  // Additional data: the addresses of SRV targets, as far as they fit.
  void PutSrvTargets(const std::vector<const knot_rrset_t*>& srv) {
    if (srv.empty()) return;
    knot_pkt_begin(r_.get(), KNOT_ADDITIONAL);
    for (const knot_rrset_t* rr : srv) {
      knot_rdata_t* rd = rr->rrs.rdata;
      for (uint16_t i = 0; i < rr->rrs.count; ++i, rd = knot_rdataset_next(rd)) {
        const Zone::Node* target = zone_.Find(SrvTarget(rd));
        if (target == nullptr) continue;
        for (uint16_t type : {KNOT_RRTYPE_A, KNOT_RRTYPE_AAAA}) {
          const knot_rrset_t* addr = target->Of(type);
          if (addr != nullptr && knot_pkt_put(r_.get(), KNOT_COMPR_HINT_NONE, addr,
                                              KNOT_PF_NOTRUNC | KNOT_PF_CHECKDUP) != KNOT_EOK) {
            return;  // no more room
          }
        }
      }
    }
  }

  // A response that does not fit over UDP goes with TC and no records.
  Answered Truncated() {
    if (opt_pending_) knot_rrset_clear(&opt_, &r_->mm);
    opt_pending_ = false;
    Start();  // anew, over the same buffer
    knot_wire_set_aa(r_->wire);
    knot_wire_set_tc(r_->wire);
    result_.rcode = KNOT_RCODE_NOERROR;
    return Finish();
  }

  // The rcode, then the OPT (with the rcode's upper bits) last.
  Answered Finish() {
    knot_wire_set_rcode(r_->wire, static_cast<short>(KNOT_EDNS_RCODE_LO(result_.rcode)));
    if (opt_pending_) {
      knot_edns_set_ext_rcode(&opt_, static_cast<uint8_t>(result_.rcode >> 4));
      knot_pkt_reclaim(r_.get(), static_cast<uint16_t>(knot_edns_wire_size(&opt_)));
      knot_pkt_begin(r_.get(), KNOT_ADDITIONAL);
      knot_pkt_put(r_.get(), KNOT_COMPR_HINT_NONE, &opt_, KNOT_PF_FREE);
      opt_pending_ = false;
    }
    result_.size = r_->size;
    result_.truncated = knot_wire_get_tc(r_->wire);
    return result_;
  }

  const Zone& zone_;
  knot_pkt_t* const q_;
  const std::span<uint8_t> out_;
  const uint16_t limit_;
  const AnswerOptions& options_;
  const bool edns_;
  Pkt r_;
  knot_rrset_t opt_;
  bool opt_pending_ = false;  // opt_ holds memory of r_ not yet in the packet
  Answered result_;
};

}  // namespace

Answered ErrorAnswer(std::span<const uint8_t> query, std::span<uint8_t> out, uint16_t rcode) {
  std::memcpy(out.data(), query.data(), KNOT_WIRE_HEADER_SIZE);
  uint8_t* w = out.data();
  knot_wire_set_qr(w);
  knot_wire_clear_aa(w);
  knot_wire_clear_tc(w);
  knot_wire_clear_ra(w);
  knot_wire_clear_ad(w);
  knot_wire_set_rcode(w, static_cast<short>(rcode));
  knot_wire_set_qdcount(w, 0);
  knot_wire_set_ancount(w, 0);
  knot_wire_set_nscount(w, 0);
  knot_wire_set_arcount(w, 0);
  return Answered{.size = KNOT_WIRE_HEADER_SIZE, .rcode = rcode};
}

std::string TypeName(uint16_t type) {
  char buf[32];
  if (knot_rrtype_to_string(type, buf, sizeof(buf)) > 0) return buf;
  return std::to_string(type);
}

std::string RcodeName(uint16_t rcode) {
  const knot_lookup_t* item = knot_lookup_by_id(knot_rcode_names, rcode);
  if (item != nullptr) return item->name;
  return std::to_string(rcode);
}

Answered Answer(const Zone& zone, std::span<const uint8_t> query, std::span<uint8_t> out,
                Transport transport, const AnswerOptions& options) {
  if (query.size() < KNOT_WIRE_HEADER_SIZE || out.size() < KNOT_WIRE_MIN_PKTSIZE) return {};
  if (knot_wire_get_qr(query.data())) return {};  // a response: never answered
  if (knot_wire_get_opcode(query.data()) != KNOT_OPCODE_QUERY) {
    return ErrorAnswer(query, out, KNOT_RCODE_NOTIMPL);
  }
  if (knot_wire_get_qdcount(query.data()) != 1) return ErrorAnswer(query, out, KNOT_RCODE_FORMERR);
  Pkt q(knot_pkt_new(const_cast<uint8_t*>(query.data()), static_cast<uint16_t>(query.size()),
                     nullptr));
  if (!q || knot_pkt_parse(q.get(), 0) != KNOT_EOK) {
    return ErrorAnswer(query, out, KNOT_RCODE_FORMERR);
  }
  Response r(zone, q.get(), out, Limit(q.get(), out, transport, options), options);
  if (!r.Start()) return ErrorAnswer(query, out, KNOT_RCODE_SERVFAIL);
  return r.Write();
}

}  // namespace flotilla::dns
