#include "api/protobuf_wire.h"

#include <cstdio>

namespace flotilla::api::protobuf {
namespace {

// Days since 1970-01-01 to a civil date (proleptic Gregorian).
void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

}  // namespace

bool Reader::Varint(uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (done()) return false;
    const auto byte = static_cast<uint8_t>(data_[pos_++]);
    if (shift == 63 && byte > 1) return false;  // more than 64 bits
    *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

bool Reader::Bytes(std::string_view* out) {
  uint64_t n = 0;
  if (!Varint(&n) || n > data_.size() - pos_) return false;
  *out = data_.substr(pos_, n);
  pos_ += n;
  return true;
}

std::optional<std::string> FormatTime(int64_t seconds) {
  // 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z, as Go's Time allows in JSON.
  if (seconds < -62135596800 || seconds > 253402300799) return std::nullopt;
  int64_t days = seconds / 86400;
  int64_t rem = seconds % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  int64_t y = 0;
  unsigned m = 0, d = 0;
  CivilFromDays(days, &y, &m, &d);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ",
                static_cast<long long>(y), m, d, static_cast<long long>(rem / 3600),
                static_cast<long long>(rem / 60 % 60), static_cast<long long>(rem % 60));
  return std::string(buf);
}

}  // namespace flotilla::api::protobuf
