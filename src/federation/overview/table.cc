// Terminal tables (table.h).
#include "federation/overview/table.h"

#include <algorithm>
#include <set>

#include "api/resources.h"

namespace flotilla::federation::overview {
namespace {

constexpr int kGap = 3;

size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

const char* Escape(Tone tone) {
  switch (tone) {
    case Tone::kGood:
      return "\033[32m";
    case Tone::kWarn:
      return "\033[33m";
    case Tone::kBad:
      return "\033[31m";
    case Tone::kDim:
      return "\033[2m";
    case Tone::kPlain:
      break;
  }
  return "";
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return "";
  return " (" + std::to_string(part * 100 / whole) + "%)";
}

// "used/all (n%)" of a resource; "-" when unknown.
TableCell Usage(const std::optional<int64_t>& used, const std::optional<int64_t>& all,
                std::string (*format)(int64_t)) {
  if (!used || !all) return {"-", Tone::kDim};
  Tone tone = *all > 0 && *used * 10 >= *all * 9 ? Tone::kWarn : Tone::kPlain;
  return {format(*used) + "/" + format(*all) + Percent(*used, *all), tone};
}

std::string Count(int64_t n) { return std::to_string(n); }

TableCell WorkloadCell(const WorkloadInfo& w, const ClusterInfo& cluster) {
  auto it = w.cells.find(cluster.name);
  if (it == w.cells.end()) return {"-", Tone::kDim};
  const Cell& c = it->second;
  std::string text = std::to_string(c.ready) + "/" + std::to_string(c.planned);
  if (c.min_replicas || c.max_replicas) {
    text += " [" + (c.min_replicas ? std::to_string(*c.min_replicas) : "") + "-" +
            (c.max_replicas ? std::to_string(*c.max_replicas) : "") + "]";
  }
  bool down = !c.reachable || cluster.health != "Ready";
  if (c.rollout == "updating" || c.rollout == "failed") text += "*";
  if (down) text += "!";
  Tone tone = down                   ? Tone::kBad
              : c.planned == 0       ? Tone::kDim
              : c.ready >= c.planned ? Tone::kGood
                                     : Tone::kWarn;
  return {text, tone};
}

TableCell RolloutCell(const WorkloadInfo& w) {
  if (w.rollout.empty()) return {"-", Tone::kDim};
  if (w.rollout == "complete") return {"complete", Tone::kGood};
  std::vector<std::string> parts;
  if (!w.updating.empty()) parts.push_back("updating: " + Join(w.updating, ","));
  if (!w.done.empty()) parts.push_back("done: " + Join(w.done, ","));
  if (!w.waiting.empty()) parts.push_back("waiting: " + Join(w.waiting, ","));
  std::string text = w.rollout + (parts.empty() ? "" : " (" + Join(parts, "; ") + ")");
  return {text, w.rollout == "failed" ? Tone::kBad : Tone::kWarn};
}

std::string Kind(const std::string& kind) {
  std::string out = kind;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string RenderTable(const std::vector<std::vector<std::string>>& headers,
                        const std::vector<std::vector<TableCell>>& rows, bool colour) {
  std::vector<size_t> widths;
  auto fit = [&](size_t i, const std::string& text) {
    if (widths.size() <= i) widths.resize(i + 1, 0);
    widths[i] = std::max(widths[i], Width(text));
  };
  for (const auto& h : headers) {
    for (size_t i = 0; i < h.size(); ++i) fit(i, h[i]);
  }
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) fit(i, r[i].text);
  }
  std::string out;
  auto line = [&](const std::vector<TableCell>& cells) {
    std::string l;
    for (size_t i = 0; i < cells.size(); ++i) {
      const TableCell& c = cells[i];
      bool painted = colour && c.tone != Tone::kPlain;
      l += painted ? Escape(c.tone) + c.text + "\033[0m" : c.text;
      if (i + 1 < cells.size()) l += std::string(widths[i] - Width(c.text) + kGap, ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  for (const auto& h : headers) {
    std::vector<TableCell> cells;
    for (const std::string& t : h) cells.push_back({t});
    line(cells);
  }
  for (const auto& r : rows) line(r);
  return out;
}

std::string StatusTable(const std::vector<ClusterInfo>& clusters,
                        const std::vector<WorkloadInfo>& workloads, const TableOptions& opts) {
  std::vector<std::string> header, sub;
  if (opts.all_namespaces) header.push_back("NAMESPACE");
  header.insert(header.end(), {"NAME", "READY"});
  sub.resize(header.size());
  for (const ClusterInfo& c : clusters) {
    header.push_back(c.name);
    std::string where = c.region;
    if (!c.zones.empty()) where += (where.empty() ? "" : "/") + Join(c.zones, ",");
    sub.push_back(where.empty() ? "-" : where);
  }
  header.insert(header.end(), {"ROLLOUT", "HPA", "AFFINITY"});
  std::vector<std::vector<TableCell>> rows;
  bool updating = false, down = false;
  for (const WorkloadInfo& w : workloads) {
    std::vector<TableCell> row;
    if (opts.all_namespaces) row.push_back({w.ns});
    row.push_back({Kind(w.kind) + "/" + w.name});
    row.push_back({std::to_string(w.ready) + "/" + std::to_string(w.desired),
                   w.ready >= w.desired ? Tone::kGood : Tone::kWarn});
    for (const ClusterInfo& c : clusters) {
      row.push_back(WorkloadCell(w, c));
      updating = updating || row.back().text.find('*') != std::string::npos;
      down = down || row.back().text.find('!') != std::string::npos;
    }
    row.push_back(RolloutCell(w));
    std::string hpa = "-";
    if (!w.hpa.empty()) {
      hpa = w.hpa + " " + (w.hpa_min ? std::to_string(*w.hpa_min) : "") + "-" +
            (w.hpa_max ? std::to_string(*w.hpa_max) : "");
    }
    row.push_back({hpa});
    row.push_back({w.affinity});
    rows.push_back(std::move(row));
  }
  std::vector<std::vector<std::string>> headers{header};
  if (opts.wide) headers.push_back(sub);
  std::string out = RenderTable(headers, rows, opts.colour);
  if (updating) out += "*: the cluster is updating to the workload's new template\n";
  if (down) out += "!: the cluster is not Ready; its counts are the last seen\n";
  return out;
}

std::string ClustersTable(const std::vector<ClusterInfo>& clusters, const TableOptions& opts) {
  std::vector<std::string> header{"NAME",  "STATUS",  "SCHEDULING", "REGION",
                                  "ZONES", "VERSION", "CPU",        "MEMORY"};
  if (opts.wide) header.insert(header.end(), {"PODS", "NODES"});
  header.insert(header.end(), {"OBJECTS", "MESSAGE"});
  std::vector<std::vector<TableCell>> rows;
  for (const ClusterInfo& c : clusters) {
    Tone health = c.health == "Ready" ? Tone::kGood : Tone::kBad;
    Tone scheduling = c.scheduling == "Schedulable" ? Tone::kPlain : Tone::kWarn;
    std::vector<TableCell> row{{c.name},
                               {c.health, health},
                               {c.scheduling, scheduling},
                               {c.region.empty() ? "-" : c.region},
                               {c.zones.empty() ? "-" : Join(c.zones, ",")},
                               {c.version.empty() ? "-" : c.version},
                               Usage(c.cpu_allocated, c.cpu_allocatable, &api::FormatMilliCpu),
                               Usage(c.memory_allocated, c.memory_allocatable, &api::FormatBytes)};
    if (opts.wide) {
      row.push_back(Usage(c.pods_allocated, c.pods_allocatable, &Count));
      row.push_back(c.nodes ? TableCell{std::to_string(c.ready_nodes.value_or(0)) + "/" +
                                        std::to_string(*c.nodes)}
                            : TableCell{"-", Tone::kDim});
    }
    row.push_back(c.federated_objects ? TableCell{std::to_string(*c.federated_objects)}
                                      : TableCell{"-", Tone::kDim});
    if (!c.message.empty() || c.unsupported.empty()) {
      row.push_back({c.message});
    } else {
      row.push_back({"does not serve " + Join(c.unsupported, ", "), Tone::kWarn});
    }
    rows.push_back(std::move(row));
  }
  return RenderTable({header}, rows, opts.colour);
}

}  // namespace flotilla::federation::overview
