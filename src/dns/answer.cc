// Answering a query from a zone (answer.h).
#include "dns/answer.h"

#include <cstring>
#include <memory>
#include <string>

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
  uint16_t limit = static_cast<uint16_t>(std::min<size_t>(out.size(), KNOT_WIRE_MAX_PKTSIZE));
  if (transport == Transport::kUdp) {
    uint16_t udp = KNOT_WIRE_MIN_PKTSIZE;
    if (knot_pkt_has_edns(q.get())) {
      udp = std::max<uint16_t>(udp,
                               std::min(knot_edns_get_payload(q->opt_rr), options.max_udp_payload));
    }
    limit = std::min(limit, udp);
  }
  Pkt r(knot_pkt_new(out.data(), limit, nullptr));
  if (!r || knot_pkt_init_response(r.get(), q.get()) != KNOT_EOK) {
    return ErrorAnswer(query, out, KNOT_RCODE_SERVFAIL);
  }
  knot_wire_clear_ra(r->wire);
  knot_wire_clear_ad(r->wire);
  Answered result{.qtype = knot_pkt_qtype(q.get())};
  // The OPT of the answer, written last in the space kept for it.
  knot_rrset_t opt;
  bool edns = knot_pkt_has_edns(q.get());
  if (edns) {
    uint8_t version = knot_edns_get_version(q->opt_rr);
    knot_edns_init(&opt, options.max_udp_payload, 0, 0, &r->mm);
    if (version != 0) result.rcode = KNOT_RCODE_BADVERS;
    knot_pkt_reserve(r.get(), static_cast<uint16_t>(knot_edns_wire_size(&opt)));
  }
  auto finish = [&]() -> Answered {
    knot_wire_set_rcode(r->wire, static_cast<short>(KNOT_EDNS_RCODE_LO(result.rcode)));
    if (edns) {
      knot_edns_set_ext_rcode(&opt, static_cast<uint8_t>(result.rcode >> 4));
      knot_pkt_reclaim(r.get(), static_cast<uint16_t>(knot_edns_wire_size(&opt)));
      knot_pkt_begin(r.get(), KNOT_ADDITIONAL);
      knot_pkt_put(r.get(), KNOT_COMPR_HINT_NONE, &opt, KNOT_PF_FREE);
    }
    result.size = r->size;
    result.truncated = knot_wire_get_tc(r->wire);
    return result;
  };
  if (result.rcode == KNOT_RCODE_BADVERS) return finish();
  uint16_t qclass = knot_pkt_qclass(q.get());
  const knot_dname_t* qname = knot_pkt_qname(q.get());  // lowercase
  if ((qclass != KNOT_CLASS_IN && qclass != KNOT_CLASS_ANY) ||
      knot_dname_in_bailiwick(qname, zone.apex()) < 0) {
    result.rcode = KNOT_RCODE_REFUSED;
    return finish();
  }
  knot_wire_set_aa(r->wire);
  uint16_t qtype = result.qtype;
  // A response that does not fit over UDP goes with TC and no records.
  auto truncated = [&]() -> Answered {
    Pkt clean(knot_pkt_new(out.data(), limit, nullptr));
    knot_pkt_init_response(clean.get(), q.get());
    knot_wire_clear_ra(clean->wire);
    knot_wire_clear_ad(clean->wire);
    knot_wire_set_aa(clean->wire);
    knot_wire_set_tc(clean->wire);
    // The OPT was never put in the packet that goes: free it here.
    if (edns) knot_rrset_clear(&opt, &r->mm);
    r = std::move(clean);
    if (edns) {
      knot_edns_init(&opt, options.max_udp_payload, 0, 0, &r->mm);
      knot_pkt_reserve(r.get(), static_cast<uint16_t>(knot_edns_wire_size(&opt)));
    }
    result.rcode = KNOT_RCODE_NOERROR;
    return finish();
  };
  knot_pkt_begin(r.get(), KNOT_ANSWER);
  const knot_dname_t* name = qname;
  const Zone::Node* node = zone.Find(name);
  bool negative = false;
  std::vector<const knot_rrset_t*> srv;
  for (int link = 0; link < kMaxChain; ++link) {
    if (node == nullptr) {
      // The first name: NXDOMAIN; a CNAME's target: its rcode too
      // (RFC 6604).
      result.rcode = KNOT_RCODE_NXDOMAIN;
      negative = true;
      break;
    }
    const knot_rrset_t* cname = node->Of(KNOT_RRTYPE_CNAME);
    if (cname != nullptr && qtype != KNOT_RRTYPE_CNAME && qtype != KNOT_RRTYPE_ANY) {
      if (!Put(r.get(), cname)) return truncated();
      name = knot_cname_name(cname->rrs.rdata);
      if (knot_dname_in_bailiwick(name, zone.apex()) < 0) break;  // the client resolves it
      node = zone.Find(name);
      continue;
    }
    bool any = false;
    for (const knot_rrset_t* rr : node->rrsets) {
      if (qtype != KNOT_RRTYPE_ANY && rr->type != qtype) continue;
      if (!Put(r.get(), rr)) return truncated();
      if (rr->type == KNOT_RRTYPE_SRV) srv.push_back(rr);
      any = true;
    }
    negative = !any;
    break;
  }
  if (negative) {
    knot_pkt_begin(r.get(), KNOT_AUTHORITY);
    if (!Put(r.get(), &zone.soa())) return truncated();
  }
  // Additional data: the addresses of SRV targets, as far as they fit.
  if (!srv.empty()) {
    knot_pkt_begin(r.get(), KNOT_ADDITIONAL);
    bool room = true;
    for (const knot_rrset_t* rr : srv) {
      knot_rdata_t* rd = rr->rrs.rdata;
      for (uint16_t i = 0; room && i < rr->rrs.count; ++i, rd = knot_rdataset_next(rd)) {
        const Zone::Node* target = zone.Find(SrvTarget(rd));
        if (target == nullptr) continue;
        for (uint16_t type : {KNOT_RRTYPE_A, KNOT_RRTYPE_AAAA}) {
          const knot_rrset_t* addr = target->Of(type);
          if (addr != nullptr && knot_pkt_put(r.get(), KNOT_COMPR_HINT_NONE, addr,
                                              KNOT_PF_NOTRUNC | KNOT_PF_CHECKDUP) != KNOT_EOK) {
            room = false;
            break;
          }
        }
      }
    }
  }
  return finish();
}

}  // namespace flotilla::dns
