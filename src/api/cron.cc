#include "api/cron.h"

#include <absl/time/civil_time.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

namespace flotilla::api::cron {
namespace {

struct Bounds {
  int min, max;
  const std::map<std::string, int>* names;
};

const std::map<std::string, int> kMonths = {{"jan", 1}, {"feb", 2},  {"mar", 3},  {"apr", 4},
                                            {"may", 5}, {"jun", 6},  {"jul", 7},  {"aug", 8},
                                            {"sep", 9}, {"oct", 10}, {"nov", 11}, {"dec", 12}};
const std::map<std::string, int> kDays = {{"sun", 0}, {"mon", 1}, {"tue", 2}, {"wed", 3},
                                          {"thu", 4}, {"fri", 5}, {"sat", 6}};

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.emplace_back(s.substr(start, at == std::string_view::npos ? s.npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

Status Invalid(std::string message) { return Status(Reason::kInvalid, std::move(message)); }

StatusOr<int> ParseInt(const std::string& text) {
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return Invalid("failed to parse int from " + text + ": strconv.Atoi: parsing \"" + text +
                   "\": invalid syntax");
  }
  return std::stoi(text);
}

StatusOr<int> ParseIntOrName(const std::string& text, const Bounds& b) {
  if (b.names != nullptr) {
    std::string lower = text;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto it = b.names->find(lower);
    if (it != b.names->end()) return it->second;
  }
  return ParseInt(text);
}

// One comma-separated part of a field, into `bits`; `star` when it is `*`
// or `?` without a step.
template <size_t N>
Status ParseRange(const std::string& expr, const Bounds& b, std::bitset<N>& bits, bool& star) {
  std::vector<std::string> step_parts = Split(expr, '/');
  std::vector<std::string> range = Split(step_parts[0], '-');
  if (range.size() > 2) return Invalid("too many hyphens: " + expr);
  int start = 0, end = 0;
  bool extra_star = false;
  if (range[0] == "*" || range[0] == "?") {
    start = b.min;
    end = b.max;
    extra_star = true;
  } else {
    FLOTILLA_ASSIGN_OR_RETURN(start, ParseIntOrName(range[0], b));
    if (range.size() == 1) {
      end = start;
    } else {
      FLOTILLA_ASSIGN_OR_RETURN(end, ParseIntOrName(range[1], b));
    }
  }
  int step = 1;
  if (step_parts.size() > 2) return Invalid("too many slashes: " + expr);
  if (step_parts.size() == 2) {
    FLOTILLA_ASSIGN_OR_RETURN(step, ParseInt(step_parts[1]));
    // N/step means N through the maximum.
    if (range.size() == 1 && !extra_star) end = b.max;
    if (step > 1) extra_star = false;
  }
  if (start < b.min) {
    return Invalid("beginning of range (" + std::to_string(start) + ") below minimum (" +
                   std::to_string(b.min) + "): " + expr);
  }
  if (end > b.max) {
    return Invalid("end of range (" + std::to_string(end) + ") above maximum (" +
                   std::to_string(b.max) + "): " + expr);
  }
  if (start > end) {
    return Invalid("beginning of range (" + std::to_string(start) + ") beyond end of range (" +
                   std::to_string(end) + "): " + expr);
  }
  if (step == 0) return Invalid("step of range should be a positive number: " + expr);
  for (int i = start; i <= end; i += step) bits.set(static_cast<size_t>(i));
  star = star || extra_star;
  return Status::Ok();
}

template <size_t N>
Status ParseField(const std::string& field, const Bounds& b, std::bitset<N>& bits, bool& star) {
  for (const std::string& part : Split(field, ',')) {
    FLOTILLA_RETURN_IF_ERROR(ParseRange(part, b, bits, star));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Schedule> Schedule::Parse(std::string_view spec) {
  std::string text(spec);
  // Leading and trailing blanks do not count, as strings.Fields.
  std::vector<std::string> fields;
  {
    std::string current;
    for (char c : text) {
      if (std::isspace(static_cast<unsigned char>(c))) {
        if (!current.empty()) fields.push_back(std::move(current));
        current.clear();
      } else {
        current += c;
      }
    }
    if (!current.empty()) fields.push_back(std::move(current));
  }
  if (fields.empty()) return Invalid("empty spec string");
  Schedule s;
  if (fields[0].starts_with("@")) {
    std::string d = fields[0];
    std::string rest = text.substr(text.find(d) + d.size());
    rest.erase(0, rest.find_first_not_of(" \t"));
    rest.erase(rest.find_last_not_of(" \t\n") + 1);
    if (d == "@every") {
      std::optional<Duration> every = ParseGoDuration(rest);
      if (!every) {
        return Invalid("failed to parse duration " + text + ": time: invalid duration \"" + rest +
                       "\"");
      }
      // Rounded down to a second, at least one.
      s.every_ = std::max<Duration>(std::chrono::seconds(1),
                                    std::chrono::floor<std::chrono::seconds>(*every));
      return s;
    }
    std::string standard = d == "@yearly" || d == "@annually"  ? "0 0 1 1 *"
                           : d == "@monthly"                   ? "0 0 1 * *"
                           : d == "@weekly"                    ? "0 0 * * 0"
                           : d == "@daily" || d == "@midnight" ? "0 0 * * *"
                           : d == "@hourly"                    ? "0 * * * *"
                                                               : "";
    if (standard.empty()) return Invalid("unrecognized descriptor: " + d);
    return Parse(standard);
  }
  if (fields.size() != 5) {
    std::string listed;
    for (const std::string& f : fields) listed += (listed.empty() ? "" : " ") + f;
    return Invalid("expected exactly 5 fields, found " + std::to_string(fields.size()) + ": [" +
                   listed + "]");
  }
  bool ignored = false;
  FLOTILLA_RETURN_IF_ERROR(ParseField(fields[0], {0, 59, nullptr}, s.minute_, ignored));
  FLOTILLA_RETURN_IF_ERROR(ParseField(fields[1], {0, 23, nullptr}, s.hour_, ignored));
  FLOTILLA_RETURN_IF_ERROR(ParseField(fields[2], {1, 31, nullptr}, s.dom_, s.dom_star_));
  FLOTILLA_RETURN_IF_ERROR(ParseField(fields[3], {1, 12, &kMonths}, s.month_, ignored));
  FLOTILLA_RETURN_IF_ERROR(ParseField(fields[4], {0, 6, &kDays}, s.dow_, s.dow_star_));
  return s;
}

std::optional<TimePoint> Schedule::Next(TimePoint t, const absl::TimeZone& zone) const {
  if (every_ > Duration::zero()) {
    return std::chrono::floor<std::chrono::seconds>(t) + every_;
  }
  absl::CivilMinute m = absl::ToCivilMinute(absl::FromChrono(t), zone) + 1;
  const absl::CivilYear limit = absl::CivilYear(m) + 5;
  auto day_matches = [&](const absl::CivilMinute& c) {
    bool dom = dom_.test(static_cast<size_t>(c.day()));
    int weekday = (static_cast<int>(absl::GetWeekday(absl::CivilDay(c))) + 1) % 7;  // Sunday 0
    bool dow = dow_.test(static_cast<size_t>(weekday));
    return dom_star_ || dow_star_ ? dom && dow : dom || dow;
  };
  while (absl::CivilYear(m) < limit) {
    if (!month_.test(static_cast<size_t>(m.month()))) {
      m = absl::CivilMinute(absl::CivilMonth(m) + 1);
    } else if (!day_matches(m)) {
      m = absl::CivilMinute(absl::CivilDay(m) + 1);
    } else if (!hour_.test(static_cast<size_t>(m.hour()))) {
      m = absl::CivilMinute(absl::CivilHour(m) + 1);
    } else if (!minute_.test(static_cast<size_t>(m.minute()))) {
      m += 1;
    } else {
      return absl::ToChronoTime(absl::FromCivil(m, zone));
    }
  }
  return std::nullopt;
}

StatusOr<absl::TimeZone> LoadZone(std::string_view name) {
  absl::TimeZone zone = absl::UTCTimeZone();
  if (name.empty() || name == "UTC") return zone;
  if (name == "Local" || !absl::LoadTimeZone(std::string(name), &zone)) {
    return Invalid("unknown time zone " + std::string(name));
  }
  return zone;
}

}  // namespace flotilla::api::cron
