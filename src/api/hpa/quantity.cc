#include "api/hpa/quantity.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace flotilla::api::hpa {
namespace {

using Int = __int128;
constexpr Int kMax = std::numeric_limits<int64_t>::max();

// The suffix's factor as 2^binary * 10^decimal; false for an unknown one.
bool Suffix(std::string_view s, int* binary, int* decimal) {
  *binary = 0;
  *decimal = 0;
  if (s.empty()) return true;
  if ((s[0] == 'e' || s[0] == 'E') && s.size() > 1) {
    std::string_view digits = s.substr(s[1] == '-' || s[1] == '+' ? 2 : 1);
    if (digits.empty() || digits.size() > 3) return false;
    int v = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    *decimal = s[1] == '-' ? -v : v;
    return true;
  }
  static constexpr std::string_view kDecimal[] = {"m", "", "k", "M", "G", "T", "P", "E"};
  for (int i = 0; i < 8; ++i) {
    if (s == kDecimal[i]) {
      *decimal = 3 * (i - 1);
      return true;
    }
  }
  static constexpr std::string_view kBinary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  for (int i = 0; i < 6; ++i) {
    if (s == kBinary[i]) {
      *binary = 10 * (i + 1);
      return true;
    }
  }
  return false;
}

// Saturating: |v| never grows past kMax once it reached it.
Int Mul(Int v, Int by) { return v > kMax / by ? kMax : v * by; }

}  // namespace

std::optional<int64_t> ParseMilli(std::string_view text) {
  bool negative = !text.empty() && text[0] == '-';
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.remove_prefix(1);
  Int mantissa = 0;
  int scale = 0, digits = 0;
  bool dot = false;
  size_t i = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    ++digits;
    mantissa = Mul(mantissa, 10) + (c - '0');
    if (dot) ++scale;
  }
  int binary = 0, decimal = 0;
  if (digits == 0 || !Suffix(text.substr(i), &binary, &decimal)) return std::nullopt;
  Int v = Mul(mantissa, Int(1) << binary);
  int exponent = decimal + 3 - scale;  // milli-units
  for (; exponent > 0; --exponent) v = Mul(v, 10);
  Int divisor = 1;
  for (; exponent < 0 && divisor < kMax; ++exponent) divisor *= 10;
  // MilliValue rounds away from zero.
  Int milli = v / divisor + (v % divisor != 0 ? 1 : 0);
  if (milli > kMax) milli = kMax;
  return negative ? -static_cast<int64_t>(milli) : static_cast<int64_t>(milli);
}

std::optional<int64_t> ParseMilli(const json::value& q) {
  if (q.is_int64()) return ParseMilli(std::to_string(q.get_int64()));
  if (q.is_uint64()) return ParseMilli(std::to_string(q.get_uint64()));
  if (q.is_double()) {
    double milli = std::ceil(q.get_double() * 1000);
    if (!std::isfinite(milli)) return std::nullopt;
    return static_cast<int64_t>(std::clamp(milli, -9.2e18, 9.2e18));
  }
  if (q.is_string()) return ParseMilli(std::string_view(q.get_string()));
  return std::nullopt;
}

std::string FormatMilli(int64_t milli) {
  if (milli == 0) return "0";
  static constexpr std::string_view kSuffix[] = {"m", "", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (i < 7 && milli % 1000 == 0) {
    milli /= 1000;
    ++i;
  }
  return std::to_string(milli) + std::string(kSuffix[i]);
}

}  // namespace flotilla::api::hpa
