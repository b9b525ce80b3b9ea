// dns_bench's failover phase (dns_bench.cc): the real `flotilla server
// --dns-address` with three members (one `flotilla member --clusters 3`),
// a federated ReplicaSet of 3 behind a LoadBalancer Service, and the time
// from member m-1's Endpoints losing their last address to the
// federation's DNS answering without m-1's address. The loss is made the
// way a user would: preferences that give m-1 no replica (its pods go);
// then its replica comes back, and again, --failovers times.
//
// Both sides are polled in one loop (a GET of m-1's Endpoints, a UDP query
// of the global name, back to back, about a millisecond a round): each
// figure is good to that round.
#include "bench/dns_failover.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "api/service_dns.h"
#include "bench/federation_bench.h"
#include "dns/knot.h"

namespace flotilla::bench {
namespace {

const client::ResourceRef kServices{"", "v1", "services", true};
const client::ResourceRef kEndpoints{"", "v1", "endpoints", true};

// The A records of `name` at 127.0.0.1:port ("" entries never; empty on
// no answer).
std::vector<std::string> QueryA(int port, const std::string& name) {
  std::vector<std::string> out;
  knot_pkt_t* q = knot_pkt_new(nullptr, 512, nullptr);
  knot_dname_storage_t wire;
  knot_dname_from_str(wire, (name + ".").c_str(), sizeof(wire));
  knot_wire_set_id(q->wire, 42);
  knot_pkt_put_question(q, wire, KNOT_CLASS_IN, KNOT_RRTYPE_A);
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  timeval tv{.tv_sec = 1, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sendto(fd, q->wire, q->size, 0, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  knot_pkt_free(q);
  std::vector<uint8_t> buf(4096);
  ssize_t n = recv(fd, buf.data(), buf.size(), 0);
  close(fd);
  if (n <= 0) return out;
  knot_pkt_t* r = knot_pkt_new(buf.data(), static_cast<uint16_t>(n), nullptr);
  if (knot_pkt_parse(r, 0) == KNOT_EOK) {
    const knot_pktsection_t* an = knot_pkt_section(r, KNOT_ANSWER);
    for (uint16_t i = 0; i < an->count; ++i) {
      const knot_rrset_t* rr = knot_pkt_rr(an, i);
      if (rr->type != KNOT_RRTYPE_A) continue;
      knot_rdata_t* rd = rr->rrs.rdata;
      for (uint16_t j = 0; j < rr->rrs.count; ++j, rd = knot_rdataset_next(rd)) {
        char text[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, rd->data, text, sizeof(text));
        out.emplace_back(text);
      }
    }
  }
  knot_pkt_free(r);
  return out;
}

bool HasAddress(client::Client& member, const std::string& ns, const std::string& name) {
  auto eps = member.Get(kEndpoints, ns, name);
  return eps.ok() && !api::ReadyAddresses(*eps).empty();
}

Status SetPreferences(client::Client& fed, const std::string& prefs) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    auto rs = fed.Get(kReplicaSets, "bench", "web");
    if (!rs.ok()) return rs.status();
    json::object obj = *rs;
    obj["metadata"]
        .as_object()["annotations"]
        .as_object()["federation.kubernetes.io/replica-set-preferences"] = prefs;
    auto updated = fed.Update(kReplicaSets, "bench", obj);
    if (updated.ok()) return Status::Ok();
    if (!updated.status().Is(Reason::kConflict)) return updated.status();
  }
  return Status::Conflict("the ReplicaSet kept changing");
}

}  // namespace

StatusOr<std::vector<double>> MeasureDnsFailover(const std::string& binary, const std::string& dir,
                                                 int dns_port, int failovers) {
  FLOTILLA_ASSIGN_OR_RETURN(
      Fleet fleet, StartFleet(binary, dir, 3,
                              {"--nodes", "1", "--node-cpu", "100", "--pod-startup", "100ms",
                               "--region", "eu", "--zones", "eu-a", "--lb-cidr", "172.20.1.0/24"},
                              120,
                              {"--dns-address", "127.0.0.1:" + std::to_string(dns_port),
                               "--member-change-delay", "100ms", "--recheck-delay", "1s"}));
  const std::string even = R"({"rebalance": true, "clusters": {"*": {"weight": 1}}})";
  const std::string without = R"({"rebalance": true, "clusters": {"*": {"weight": 1},
                                   "m-1": {"maxReplicas": 0}}})";
  FLOTILLA_RETURN_IF_ERROR(
      fleet.fed->Create(kReplicaSets, "bench", ReplicaSet("web", 3, even)).status());
  json::object svc{{"apiVersion", "v1"},
                   {"kind", "Service"},
                   {"metadata", json::object{{"name", "web"}}},
                   {"spec", json::object{{"type", "LoadBalancer"},
                                         {"selector", json::object{{"app", "web"}}},
                                         {"ports", json::array{json::object{{"port", 80}}}}}}};
  FLOTILLA_RETURN_IF_ERROR(fleet.fed->Create(kServices, "bench", svc).status());
  const std::string name = "web.bench.flotilla.svc.flotilla.local";
  client::Client& m1 = *fleet.member_clients[0];
  auto wait = [&](const std::function<bool()>& done) {
    auto deadline = Steady::now() + std::chrono::seconds(60);
    while (!done()) {
      if (Steady::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  };
  std::vector<double> out;
  for (int i = 0; i < failovers; ++i) {
    if (!wait([&] { return QueryA(dns_port, name).size() == 3; })) {
      return Status::Timeout("the global name never had three addresses");
    }
    auto m1_ip = m1.Get(kServices, "bench", "web");
    if (!m1_ip.ok()) return m1_ip.status();
    std::string ip =
        StringAt(Find(*m1_ip, "status.loadBalancer.ingress")->as_array()[0].as_object(), "ip");
    FLOTILLA_RETURN_IF_ERROR(SetPreferences(*fleet.fed, without));
    std::optional<Steady::time_point> lost, answered;
    auto deadline = Steady::now() + std::chrono::seconds(60);
    while ((!lost || !answered) && Steady::now() < deadline) {
      if (!lost && !HasAddress(m1, "bench", "web")) lost = Steady::now();
      if (!answered) {
        std::vector<std::string> a = QueryA(dns_port, name);
        if (a.size() == 2 && std::find(a.begin(), a.end(), ip) == a.end()) {
          answered = Steady::now();
        }
      }
    }
    if (!lost || !answered) return Status::Timeout("m-1 never left the answers");
    out.push_back(std::chrono::duration<double, std::milli>(*answered - *lost).count());
    FLOTILLA_RETURN_IF_ERROR(SetPreferences(*fleet.fed, even));
  }
  fleet.members.child->Stop();
  fleet.server.child->Stop();
  return out;
}

}  // namespace flotilla::bench
