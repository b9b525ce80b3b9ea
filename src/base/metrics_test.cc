#include "base/metrics.h"

#include <gtest/gtest.h>

namespace flotilla::metrics {
namespace {

TEST(MetricsTest, CountersRenderByLabelValues) {
  Registry r;
  CounterVec& writes = r.Counter("x_total", "Writes.", {"cluster", "op"});
  writes.Add({"b", "create"});
  writes.Add({"a", "update"}, 2);
  writes.Add({"b", "create"});
  EXPECT_EQ(writes.Value({"b", "create"}), 2);
  EXPECT_EQ(&r.Counter("x_total", "ignored", {}), &writes);
  EXPECT_EQ(r.Render(),
            "# HELP x_total Writes.\n# TYPE x_total counter\n"
            "x_total{cluster=\"a\",op=\"update\"} 2\n"
            "x_total{cluster=\"b\",op=\"create\"} 2\n");
}

TEST(MetricsTest, HistogramsAreCumulativeWithInf) {
  Registry r;
  HistogramVec& h = r.Histogram("d_seconds", "Latency.", {"c"}, {0.1, 1});
  h.Observe({"a"}, 0.05);
  h.Observe({"a"}, 0.5);
  h.Observe({"a"}, 3);
  EXPECT_EQ(h.Count({"a"}), 3u);
  EXPECT_EQ(r.Render(),
            "# HELP d_seconds Latency.\n# TYPE d_seconds histogram\n"
            "d_seconds_bucket{c=\"a\",le=\"0.1\"} 1\n"
            "d_seconds_bucket{c=\"a\",le=\"1\"} 2\n"
            "d_seconds_bucket{c=\"a\",le=\"+Inf\"} 3\n"
            "d_seconds_sum{c=\"a\"} 3.55\n"
            "d_seconds_count{c=\"a\"} 3\n");
}

TEST(MetricsTest, CollectorsWriteAtRenderAndEscapeLabels) {
  Registry r;
  int calls = 0;
  r.SetCollector("mine", [&](TextWriter& w) {
    ++calls;
    w.Family("g", "gauge", "A gauge.");
    w.Sample("g", {{"name", "a\"b\\c\nd"}}, 1.5);
  });
  EXPECT_EQ(r.Render(), "# HELP g A gauge.\n# TYPE g gauge\ng{name=\"a\\\"b\\\\c\\nd\"} 1.5\n");
  EXPECT_EQ(calls, 1);
  r.SetCollector("mine", nullptr);
  EXPECT_EQ(r.Render(), "");
}

}  // namespace
}  // namespace flotilla::metrics
