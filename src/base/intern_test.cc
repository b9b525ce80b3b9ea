#include "base/intern.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace flotilla {
namespace {

// A hash that puts every value in one bucket: equal hashes must still be
// told apart by value.
struct CollidingHash {
  size_t operator()(const std::string&) const { return 7; }
};

TEST(InternTest, EqualValuesShareOneCopyAndDifferentOnesDoNot) {
  auto a = Intern(std::string("discovery of apps/v1"));
  auto b = Intern(std::string("discovery of apps/v1"));
  auto c = Intern(std::string("discovery of batch/v1"));
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(*c, "discovery of batch/v1");
}

TEST(InternTest, ValuesWithTheSameHashAreToldApartByValue) {
  auto a = Intern<std::string, CollidingHash>("one");
  auto b = Intern<std::string, CollidingHash>("two");
  auto a2 = Intern<std::string, CollidingHash>("one");
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(a.get(), a2.get());
  EXPECT_EQ(*b, "two");
}

TEST(InternTest, AValueNobodyHoldsIsMadeAgainAndTheTableStaysSmall) {
  using Table = InternTable<std::string, CollidingHash>;
  std::weak_ptr<const std::string> gone;
  {
    auto v = Table::Instance().Intern("short-lived");
    gone = v;
  }
  EXPECT_TRUE(gone.expired());
  auto again = Table::Instance().Intern("short-lived");
  EXPECT_EQ(*again, "short-lived");
  // Many values made and dropped: the sweeps keep the entries near the
  // number alive, not the number ever made.
  for (int i = 0; i < 10000; ++i) Table::Instance().Intern("dropped " + std::to_string(i));
  EXPECT_LT(Table::Instance().size(), 100u);
}

TEST(InternTest, ThreadsInterningTheSameValuesGetTheSameCopies) {
  std::vector<std::shared_ptr<const std::string>> got(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&got, t] {
      for (int i = 0; i < 1000; ++i) {
        auto v = Intern(std::string("shared ") + std::to_string(i % 10));
        if (i == 999) got[t] = v;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& v : got) EXPECT_EQ(v.get(), got[0].get());
}

}  // namespace
}  // namespace flotilla
