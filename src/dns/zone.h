// One DNS zone held in memory, ready to answer from: the records of every
// name under an apex, in libknot's wire-ready RRsets (docs/dns.md).
//
// A ZoneBuilder collects records by name in presentation form (any case,
// with or without the final dot); Build() makes the immutable Zone with the
// apex's SOA and NS, and every ancestor of a name between it and the apex
// as an empty node (an empty non-terminal answers NODATA, not NXDOMAIN).
// A name that is no valid DNS name, or is not under the apex, is skipped
// and counted. A name whose first label is `*` is a wildcard (RFC 4592):
// it answers the names under its parent that the zone does not have.
//
// A Zone is immutable: answering threads share it through a shared_ptr
// while the next one is built.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dns/knot.h"

namespace flotilla::dns {

// The TTL of answers unless configured (--dns-ttl): the federation's and
// each member's cluster DNS.
inline constexpr uint32_t kDefaultTtlSeconds = 30;

struct ZoneOptions {
  std::string apex = "flotilla.local";
  uint32_t ttl = kDefaultTtlSeconds;
  // The SOA serial; the builder of successive zones increases it.
  uint32_t serial = 1;
  // An address for the nameserver name ns.<apex> (its A or AAAA record);
  // empty: the NS record names it without an address.
  std::string nameserver_address;
};

struct SrvRecord {
  uint16_t priority = 0;
  uint16_t weight = 0;
  uint16_t port = 0;
  std::string target;
};

class Zone {
 public:
  // The RRsets of one name; empty for an empty non-terminal.
  struct Node {
    std::vector<knot_rrset_t*> rrsets;
    const knot_rrset_t* Of(uint16_t type) const {
      for (const knot_rrset_t* r : rrsets) {
        if (r->type == type) return r;
      }
      return nullptr;
    }
  };

  ~Zone();
  Zone(const Zone&) = delete;
  Zone& operator=(const Zone&) = delete;

  // The node of `name` (lowercase wire format); null when there is none.
  const Node* Find(const knot_dname_t* name) const;
  // The node that answers `name` (under the apex): its own, else the
  // wildcard `*.<closest encloser>` as RFC 4592 defines it (the closest
  // encloser is the longest existing ancestor, empty non-terminals
  // included, so a wildcard never covers a name that exists or one below
  // an existing name it is not the parent of); null when neither.
  // `*wildcard` tells which (the answer's records then take `name` as
  // their owner).
  const Node* Match(const knot_dname_t* name, bool* wildcard) const;
  const knot_dname_t* apex() const { return apex_.data(); }
  const knot_rrset_t& soa() const { return *soa_; }
  uint32_t ttl() const { return ttl_; }
  size_t names() const { return nodes_.size(); }
  size_t records() const { return records_; }
  // Names the builder skipped (invalid, or outside the apex).
  size_t skipped() const { return skipped_; }

 private:
  friend class ZoneBuilder;
  Zone() = default;

  std::vector<uint8_t> apex_;
  uint32_t ttl_ = 0;
  knot_rrset_t* soa_ = nullptr;
  std::unordered_map<std::string, Node> nodes_;  // key: lowercase wire name
  size_t records_ = 0;
  size_t skipped_ = 0;
};

class ZoneBuilder {
 public:
  explicit ZoneBuilder(ZoneOptions options);

  // An A record, or AAAA when `ip` is an IPv6 address; false (and nothing
  // added) when `ip` is neither.
  bool AddAddress(std::string_view name, std::string_view ip);
  // A CNAME: the name's only record (the other types added are dropped).
  void AddCname(std::string_view name, std::string_view target);
  void AddSrv(std::string_view name, const SrvRecord& srv);
  // `name` exists, with or without records (NODATA rather than NXDOMAIN).
  void AddName(std::string_view name);

  std::shared_ptr<const Zone> Build() const;

 private:
  struct Entry {
    std::vector<std::string> a, aaaa;  // wire rdata
    std::string cname;
    std::vector<SrvRecord> srv;
  };
  static std::string Key(std::string_view name);

  ZoneOptions options_;
  std::map<std::string, Entry> entries_;
};

// `name` in presentation form, lowercase, without the final dot ("" for
// the root); "" when it is not a valid name.
std::string ToText(const knot_dname_t* name);

}  // namespace flotilla::dns
