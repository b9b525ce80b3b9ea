// Test helpers for DNS answers: queries made and responses read with
// libknot, as a resolver would, records as "owner TYPE rdata" lines.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "dns/answer.h"

namespace flotilla::dns::testing {

struct PktDeleter {
  void operator()(knot_pkt_t* p) const { knot_pkt_free(p); }
};
using Pkt = std::unique_ptr<knot_pkt_t, PktDeleter>;

struct Query {
  std::string name;
  uint16_t type = KNOT_RRTYPE_A;
  uint16_t qclass = KNOT_CLASS_IN;
  int edns_payload = -1;  // -1: no OPT
  uint8_t edns_version = 0;
};

inline std::vector<uint8_t> Wire(const Query& q) {
  Pkt p(knot_pkt_new(nullptr, KNOT_WIRE_MAX_PKTSIZE, nullptr));
  knot_wire_set_id(p->wire, 0x1234);
  knot_dname_storage_t name;
  EXPECT_NE(knot_dname_from_str(name, (q.name + ".").c_str(), sizeof(name)), nullptr);
  EXPECT_EQ(knot_pkt_put_question(p.get(), name, q.qclass, q.type), KNOT_EOK);
  if (q.edns_payload >= 0) {
    knot_rrset_t opt;
    knot_edns_init(&opt, static_cast<uint16_t>(q.edns_payload), 0, q.edns_version, &p->mm);
    knot_pkt_begin(p.get(), KNOT_ADDITIONAL);
    EXPECT_EQ(knot_pkt_put(p.get(), KNOT_COMPR_HINT_NONE, &opt, KNOT_PF_FREE), KNOT_EOK);
  }
  return std::vector<uint8_t>(p->wire, p->wire + p->size);
}

// A response read back: rcode, flags and each section's records as text.
struct Response {
  size_t size = 0;
  uint16_t rcode = 0;
  bool aa = false, tc = false, edns = false;
  uint16_t id = 0;
  std::vector<std::string> answer, authority, additional;
};

inline std::vector<std::string> Section(const knot_pkt_t* p, knot_section_t s) {
  std::vector<std::string> out;
  const knot_pktsection_t* sec = knot_pkt_section(p, s);
  for (uint16_t i = 0; i < sec->count; ++i) {
    const knot_rrset_t* rr = knot_pkt_rr(sec, i);
    if (rr->type == KNOT_RRTYPE_OPT) continue;
    knot_dump_style_t style = KNOT_DUMP_STYLE_DEFAULT;
    for (uint16_t j = 0; j < rr->rrs.count; ++j) {
      char line[1024];
      if (knot_rrset_txt_dump_data(rr, j, line, sizeof(line), &style) < 0) continue;
      out.push_back(ToText(rr->owner) + " " + TypeName(rr->type) + " " + line);
    }
  }
  return out;
}

// Answers `query` from `zone` and reads the response back.
inline Response Read(const Zone& zone, const std::vector<uint8_t>& query,
                     Transport t = Transport::kUdp) {
  std::vector<uint8_t> out(KNOT_WIRE_MAX_PKTSIZE);
  Answered a = Answer(zone, query, out, t);
  Response r{.size = a.size};
  if (a.size == 0) return r;
  Pkt p(knot_pkt_new(out.data(), static_cast<uint16_t>(a.size), nullptr));
  EXPECT_EQ(knot_pkt_parse(p.get(), 0), KNOT_EOK);
  r.id = knot_wire_get_id(p->wire);
  r.aa = knot_wire_get_aa(p->wire);
  r.tc = knot_wire_get_tc(p->wire);
  r.edns = knot_pkt_has_edns(p.get());
  r.rcode = knot_pkt_ext_rcode(p.get());
  EXPECT_EQ(r.rcode, a.rcode);
  EXPECT_EQ(r.tc, a.truncated);
  r.answer = Section(p.get(), KNOT_ANSWER);
  r.authority = Section(p.get(), KNOT_AUTHORITY);
  r.additional = Section(p.get(), KNOT_ADDITIONAL);
  return r;
}

inline Response Ask(const Zone& zone, const Query& q, Transport t = Transport::kUdp) {
  return Read(zone, Wire(q), t);
}

}  // namespace flotilla::dns::testing
