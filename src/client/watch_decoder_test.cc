#include "client/watch_decoder.h"

#include <gtest/gtest.h>

#include <vector>

namespace flotilla::client {
namespace {

std::string Line(const char* type, const char* rv) {
  return std::string(R"({"type":")") + type + R"(","object":{"metadata":{"resourceVersion":")" +
         rv + "\"}}}\n";
}

struct Collector {
  std::vector<WatchEvent> events;
  WatchDecoder::Emit emit() {
    return [this](WatchEvent e) {
      events.push_back(std::move(e));
      return true;
    };
  }
};

TEST(WatchDecoderTest, EventsSplitAnywhereAcrossChunks) {
  std::string stream =
      Line("ADDED", "1") + Line("MODIFIED", "2") + Line("BOOKMARK", "3") + Line("DELETED", "4");
  for (size_t step : {1, 2, 7, 50, 1000}) {
    WatchDecoder decoder;
    Collector c;
    for (size_t i = 0; i < stream.size(); i += step) {
      ASSERT_TRUE(decoder.Feed(std::string_view(stream).substr(i, step), c.emit()).ok());
    }
    ASSERT_EQ(c.events.size(), 4u) << "step " << step;
    EXPECT_EQ(c.events[0].type, WatchEvent::Type::kAdded);
    EXPECT_EQ(c.events[1].type, WatchEvent::Type::kModified);
    EXPECT_EQ(c.events[2].type, WatchEvent::Type::kBookmark);
    EXPECT_EQ(c.events[3].type, WatchEvent::Type::kDeleted);
    EXPECT_EQ(EventResourceVersion(c.events[2]), "3");
    EXPECT_EQ(EventResourceVersion(c.events[3]), "4");
  }
}

TEST(WatchDecoderTest, SharedLinesTakeTheirObjectsAndDecodeTheRest) {
  // The objects differ from their lines' so that the test sees which was used.
  auto added = std::make_shared<const json::object>(json::object{{"from", "server"}});
  auto modified = std::make_shared<const json::object>(json::object{{"from", "server too"}});
  std::string data =
      Line("ADDED", "1") + Line("MODIFIED", "2") + Line("DELETED", "3") + Line("MODIFIED", "4");
  std::vector<std::shared_ptr<const json::object>> objects{added, modified, nullptr, modified};
  for (bool share : {true, false}) {
    WatchDecoder decoder;
    Collector c;
    ASSERT_TRUE(decoder.FeedShared(data, objects, share, c.emit()).ok());
    ASSERT_EQ(c.events.size(), 4u);
    EXPECT_EQ(c.events[0].type, WatchEvent::Type::kAdded);
    EXPECT_EQ(c.events[1].type, WatchEvent::Type::kModified);
    EXPECT_EQ(c.events[2].type, WatchEvent::Type::kDeleted);
    EXPECT_EQ(c.events[3].type, WatchEvent::Type::kModified);
    EXPECT_EQ(c.events[0].Object(), *added);
    EXPECT_EQ(c.events[1].Object(), *modified);
    EXPECT_EQ(EventResourceVersion(c.events[2]), "3") << "no object: the line is decoded";
    EXPECT_EQ(c.events[3].Object(), *modified);
    EXPECT_EQ(c.events[0].shared == added, share);
    EXPECT_EQ(c.events[0].object.empty(), share);
    EXPECT_EQ(c.events[2].shared, nullptr);
  }
}

TEST(WatchDecoderTest, SharedLinesAfterAPartialLineAreDecoded) {
  WatchDecoder decoder;
  Collector c;
  std::string first = Line("ADDED", "1");
  ASSERT_TRUE(decoder.Feed(std::string_view(first).substr(0, 5), c.emit()).ok());
  auto object = std::make_shared<const json::object>(json::object{{"from", "server"}});
  std::string rest = first.substr(5) + Line("MODIFIED", "2");
  std::vector<std::shared_ptr<const json::object>> objects{object, object};
  ASSERT_TRUE(decoder.FeedShared(rest, objects, true, c.emit()).ok());
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(EventResourceVersion(c.events[0]), "1");
  EXPECT_EQ(EventResourceVersion(c.events[1]), "2");
  EXPECT_EQ(c.events[1].shared, nullptr) << "lines are no longer aligned with their objects";
}

TEST(WatchDecoderTest, UnterminatedLastLineIsDecodedAtTheEnd) {
  WatchDecoder decoder;
  Collector c;
  std::string line = Line("ADDED", "9");
  line.pop_back();
  ASSERT_TRUE(decoder.Feed(line, c.emit()).ok());
  EXPECT_TRUE(c.events.empty());
  ASSERT_TRUE(decoder.Finish(c.emit()).ok());
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_TRUE(WatchDecoder().Finish(c.emit()).ok());  // nothing pending
}

TEST(WatchDecoderTest, ErrorEventsCarryTheStatusAndNoResourceVersion) {
  WatchDecoder decoder;
  Collector c;
  ASSERT_TRUE(
      decoder
          .Feed(R"({"type":"ERROR","object":{"kind":"Status","reason":"Expired","code":410}})"
                "\n",
                c.emit())
          .ok());
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].type, WatchEvent::Type::kError);
  EXPECT_EQ(c.events[0].object.at("reason"), "Expired");
  EXPECT_EQ(EventResourceVersion(c.events[0]), "");
}

TEST(WatchDecoderTest, MalformedLinesAreErrors) {
  Collector c;
  EXPECT_FALSE(WatchDecoder().Feed("{not json\n", c.emit()).ok());
  EXPECT_EQ(WatchDecoder()
                .Feed(R"({"type":"RENAMED","object":{}})"
                      "\n",
                      c.emit())
                .message(),
            "malformed watch event: unknown type \"RENAMED\"");
  EXPECT_FALSE(WatchDecoder()
                   .Feed(R"({"type":"ADDED"})"
                         "\n",
                         c.emit())
                   .ok());
  EXPECT_TRUE(WatchDecoder().Feed("\n\r\n", c.emit()).ok());
  EXPECT_TRUE(c.events.empty());
}

TEST(WatchDecoderTest, OverlongLinesAreRefused) {
  WatchDecoder decoder(16);
  Collector c;
  EXPECT_TRUE(decoder.Feed("0123456789", c.emit()).ok());
  EXPECT_FALSE(decoder.Feed("0123456789", c.emit()).ok());
}

TEST(WatchDecoderTest, EmitCanStopDecoding) {
  WatchDecoder decoder;
  int seen = 0;
  ASSERT_TRUE(decoder
                  .Feed(Line("ADDED", "1") + Line("ADDED", "2"),
                        [&](WatchEvent) {
                          ++seen;
                          return false;
                        })
                  .ok());
  EXPECT_EQ(seen, 1);
}

}  // namespace
}  // namespace flotilla::client
