// The fuzz target over the query path: any bytes as a query, over UDP and
// over TCP, against a zone with every kind of record the federation
// publishes. Besides the sanitizers' findings, it aborts when an answer
// breaks what answer.h promises: within its buffer and limit, a packet
// libknot parses back, the query's ID, QR set.
//
// Built as a libFuzzer binary by scripts/fuzz (clang); the unit suite
// drives the same function with mutated queries (answer_fuzz_test.cc).
#include <cstdlib>
#include <memory>
#include <vector>

#include "dns/answer.h"

namespace {

std::shared_ptr<const flotilla::dns::Zone> FuzzZone() {
  flotilla::dns::ZoneBuilder b(flotilla::dns::ZoneOptions{.nameserver_address = "127.0.0.1"});
  const char* global = "web.default.flotilla.svc.flotilla.local";
  for (int i = 0; i < 60; ++i) b.AddAddress(global, "10.0.0." + std::to_string(i + 1));
  b.AddAddress(global, "2001:db8::1");
  b.AddCname("web.default.flotilla.svc.eu.flotilla.local", global);
  b.AddCname("web.default.flotilla.svc.eu-a.eu.flotilla.local",
             "web.default.flotilla.svc.eu.flotilla.local");
  b.AddCname("loop1.flotilla.local", "loop2.flotilla.local");
  b.AddCname("loop2.flotilla.local", "loop1.flotilla.local");
  b.AddCname("away.flotilla.local", "lb.example.com");
  for (int i = 0; i < 20; ++i) {
    std::string pod = "store-c1-" + std::to_string(i) + ".etcd.default.flotilla.svc.flotilla.local";
    b.AddAddress(pod, "10.1.0." + std::to_string(i + 1));
    b.AddSrv("_store._tcp.etcd.default.flotilla.svc.flotilla.local",
             {.priority = 0, .weight = 10, .port = 80, .target = pod});
  }
  return b.Build();
}

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace flotilla::dns;
  static const std::shared_ptr<const Zone> zone = FuzzZone();
  if (size > KNOT_WIRE_MAX_PKTSIZE) return 0;
  std::vector<uint8_t> out(KNOT_WIRE_MAX_PKTSIZE);
  for (Transport t : {Transport::kUdp, Transport::kTcp}) {
    Answered a = Answer(*zone, std::span(data, size), out, t);
    if (a.size == 0) continue;
    Check(a.size <= out.size());
    Check(t == Transport::kTcp || a.size <= 1232);
    Check(a.size >= KNOT_WIRE_HEADER_SIZE && size >= KNOT_WIRE_HEADER_SIZE);
    Check(knot_wire_get_id(out.data()) == knot_wire_get_id(data));
    Check(knot_wire_get_qr(out.data()));
    knot_pkt_t* p = knot_pkt_new(out.data(), static_cast<uint16_t>(a.size), nullptr);
    Check(p != nullptr && knot_pkt_parse(p, 0) == KNOT_EOK);
    knot_pkt_free(p);
  }
  return 0;
}
