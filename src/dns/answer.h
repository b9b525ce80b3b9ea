// Answers one DNS query from a Zone (docs/dns.md): authoritative for the
// zone's apex and refusing everything else, as an authoritative-only
// server does.
//
// - A name with records of the type asked: them (AA). A CNAME is followed
//   within the zone (at most 8 links), each link in the answer.
// - A name without the type (or an empty non-terminal): NODATA, the SOA in
//   the authority section; no name: NXDOMAIN with the SOA.
// - SRV answers carry their targets' addresses in the additional section.
// - Outside the apex: REFUSED. An opcode other than QUERY: NOTIMP. A class
//   other than IN (or ANY): REFUSED. More or fewer than one question, or a
//   packet that does not parse past its header: FORMERR (header only). A
//   packet shorter than a header, or a response: dropped.
// - EDNS0: an OPT in the query gets one in the answer (version 0, our
//   payload size); a version other than 0 gets BADVERS. Over UDP an answer
//   is limited to 512 bytes, or to the query's EDNS payload (at most
//   `max_udp_payload`); one that does not fit has the TC bit and no
//   records, for the client to ask again over TCP.
//
// Pure: no I/O; thread-safe over a shared Zone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "dns/zone.h"

namespace flotilla::dns {

enum class Transport { kUdp, kTcp };

struct AnswerOptions {
  uint16_t max_udp_payload = 1232;
};

struct Answered {
  size_t size = 0;  // bytes of the response in `out`; 0: dropped
  uint16_t qtype = 0;
  uint16_t rcode = 0;  // extended (BADVERS = 16)
  bool truncated = false;
};

// Writes the response to `query` into `out` (at least 512 bytes; 65535
// for every answer to fit over TCP).
Answered Answer(const Zone& zone, std::span<const uint8_t> query, std::span<uint8_t> out,
                Transport transport, const AnswerOptions& options = {});

// A header-only response to `query` (at least a header long) with `rcode`.
Answered ErrorAnswer(std::span<const uint8_t> query, std::span<uint8_t> out, uint16_t rcode);

// "A", "SRV", ... or the number.
std::string TypeName(uint16_t type);
// "NOERROR", "NXDOMAIN", ... or the number.
std::string RcodeName(uint16_t rcode);

}  // namespace flotilla::dns
