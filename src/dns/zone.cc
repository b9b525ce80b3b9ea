// The in-memory zone (zone.h).
#include "dns/zone.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

namespace flotilla::dns {
namespace {

// The owned wire form of `text`; empty when it is no valid name.
std::vector<uint8_t> WireName(const std::string& text) {
  knot_dname_storage_t buf;
  std::string absolute = text.empty() || text.back() != '.' ? text + "." : text;
  if (knot_dname_from_str(buf, absolute.c_str(), sizeof(buf)) == nullptr) return {};
  knot_dname_to_lower(buf);
  return std::vector<uint8_t>(buf, buf + knot_dname_size(buf));
}

std::string KeyOf(const knot_dname_t* name) {
  return std::string(reinterpret_cast<const char*>(name), knot_dname_size(name));
}

void Put16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xff));
}

void Put32(std::string& out, uint32_t v) {
  Put16(out, static_cast<uint16_t>(v >> 16));
  Put16(out, static_cast<uint16_t>(v & 0xffff));
}

void AppendName(std::string& out, const std::vector<uint8_t>& name) {
  out.append(reinterpret_cast<const char*>(name.data()), name.size());
}

}  // namespace

std::string ToText(const knot_dname_t* name) {
  char buf[KNOT_DNAME_TXT_MAXLEN + 1];
  if (knot_dname_to_str(buf, name, sizeof(buf)) == nullptr) return "";
  std::string out(buf);
  if (!out.empty() && out.back() == '.') out.pop_back();
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

Zone::~Zone() {
  for (auto& [key, node] : nodes_) {
    for (knot_rrset_t* r : node.rrsets) knot_rrset_free(r, nullptr);
  }
}

const Zone::Node* Zone::Find(const knot_dname_t* name) const {
  auto it = nodes_.find(KeyOf(name));
  return it == nodes_.end() ? nullptr : &it->second;
}

const Zone::Node* Zone::Match(const knot_dname_t* name, bool* wildcard) const {
  *wildcard = false;
  if (const Node* node = Find(name)) return node;
  // The closest encloser: the first ancestor the zone has (the apex at
  // the latest).
  const knot_dname_t* encloser = name;
  do {
    if (*encloser == 0 || knot_dname_in_bailiwick(encloser, apex()) <= 0) return nullptr;
    encloser += *encloser + 1;
  } while (Find(encloser) == nullptr);
  std::string key = "\x01*" + KeyOf(encloser);
  auto it = nodes_.find(key);
  if (it == nodes_.end()) return nullptr;
  *wildcard = true;
  return &it->second;
}

ZoneBuilder::ZoneBuilder(ZoneOptions options) : options_(std::move(options)) {}

std::string ZoneBuilder::Key(std::string_view name) {
  std::string out(name);
  while (!out.empty() && out.back() == '.') out.pop_back();
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool ZoneBuilder::AddAddress(std::string_view name, std::string_view ip) {
  std::string text(ip);
  in_addr v4;
  in6_addr v6;
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    entries_[Key(name)].a.emplace_back(reinterpret_cast<const char*>(&v4), sizeof(v4));
    return true;
  }
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    entries_[Key(name)].aaaa.emplace_back(reinterpret_cast<const char*>(&v6), sizeof(v6));
    return true;
  }
  return false;
}

void ZoneBuilder::AddCname(std::string_view name, std::string_view target) {
  entries_[Key(name)].cname = Key(target);
}

void ZoneBuilder::AddSrv(std::string_view name, const SrvRecord& srv) {
  SrvRecord r = srv;
  r.target = Key(srv.target);
  entries_[Key(name)].srv.push_back(std::move(r));
}

void ZoneBuilder::AddName(std::string_view name) { entries_[Key(name)]; }

std::shared_ptr<const Zone> ZoneBuilder::Build() const {
  std::shared_ptr<Zone> zone(new Zone());
  zone->ttl_ = options_.ttl;
  zone->apex_ = WireName(Key(options_.apex));
  const knot_dname_t* apex = zone->apex_.data();
  // One RRset of `type` at `owner` with `rdatas`, in the owner's node.
  auto add = [&](const std::vector<uint8_t>& owner, uint16_t type,
                 const std::vector<std::string>& rdatas) -> knot_rrset_t* {
    if (rdatas.empty()) return nullptr;
    knot_rrset_t* rr = knot_rrset_new(owner.data(), type, KNOT_CLASS_IN, options_.ttl, nullptr);
    for (const std::string& d : rdatas) {
      knot_rrset_add_rdata(rr, reinterpret_cast<const uint8_t*>(d.data()),
                           static_cast<uint16_t>(d.size()), nullptr);
    }
    zone->nodes_[KeyOf(owner.data())].rrsets.push_back(rr);
    zone->records_ += rdatas.size();
    return rr;
  };
  // Every ancestor up to the apex exists (as an empty non-terminal).
  auto ancestors = [&](const std::vector<uint8_t>& owner) {
    const knot_dname_t* n = owner.data();
    while (*n != 0 && knot_dname_in_bailiwick(n, apex) > 0) {
      n += *n + 1;
      zone->nodes_.try_emplace(KeyOf(n));
    }
  };

  std::vector<uint8_t> ns = WireName("ns." + Key(options_.apex));
  std::string hostmaster;
  AppendName(hostmaster, WireName("hostmaster." + Key(options_.apex)));
  std::string soa;
  AppendName(soa, ns);
  soa += hostmaster;
  Put32(soa, options_.serial);
  Put32(soa, 3600);          // refresh
  Put32(soa, 600);           // retry
  Put32(soa, 86400);         // expire
  Put32(soa, options_.ttl);  // negative answers' TTL
  zone->soa_ = add(zone->apex_, KNOT_RRTYPE_SOA, {soa});
  std::string ns_rdata;
  AppendName(ns_rdata, ns);
  add(zone->apex_, KNOT_RRTYPE_NS, {ns_rdata});

  std::map<std::string, Entry> entries = entries_;
  if (!options_.nameserver_address.empty()) {
    ZoneBuilder ns_only(options_);
    ns_only.AddAddress(ToText(ns.data()), options_.nameserver_address);
    for (auto& [k, e] : ns_only.entries_) entries[k] = e;
  }
  for (const auto& [name, e] : entries) {
    std::vector<uint8_t> owner = WireName(name);
    if (owner.empty() || knot_dname_in_bailiwick(owner.data(), apex) <= 0) {
      ++zone->skipped_;
      continue;
    }
    ancestors(owner);
    zone->nodes_.try_emplace(KeyOf(owner.data()));
    if (!e.cname.empty()) {
      std::vector<uint8_t> target = WireName(e.cname);
      if (target.empty()) {
        ++zone->skipped_;
        continue;
      }
      std::string rdata;
      AppendName(rdata, target);
      add(owner, KNOT_RRTYPE_CNAME, {rdata});
      continue;
    }
    add(owner, KNOT_RRTYPE_A, e.a);
    add(owner, KNOT_RRTYPE_AAAA, e.aaaa);
    std::vector<std::string> srvs;
    for (const SrvRecord& s : e.srv) {
      std::vector<uint8_t> target = WireName(s.target);
      if (target.empty()) continue;
      std::string rdata;
      Put16(rdata, s.priority);
      Put16(rdata, s.weight);
      Put16(rdata, s.port);
      AppendName(rdata, target);
      srvs.push_back(std::move(rdata));
    }
    add(owner, KNOT_RRTYPE_SRV, srvs);
  }
  return zone;
}

}  // namespace flotilla::dns
