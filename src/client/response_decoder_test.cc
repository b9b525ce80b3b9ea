#include "client/response_decoder.h"

#include <gtest/gtest.h>

namespace flotilla::client {
namespace {

TEST(ErrorFromResponseTest, StatusBodyGivesReasonMessageAndCauses) {
  const char* body = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"ConfigMap \"Bad\" is invalid: metadata.name: Invalid value: \"Bad\": a lowercase RFC 1123 subdomain",
    "reason":"Invalid","details":{"name":"Bad","kind":"configmaps","causes":[
    {"reason":"FieldValueInvalid","message":"Invalid value: \"Bad\"","field":"metadata.name"}]},"code":422})";
  Status s = ErrorFromResponse(422, body);
  EXPECT_TRUE(s.Is(Reason::kInvalid));
  EXPECT_EQ(s.code(), 422);
  EXPECT_EQ(s.message().rfind("ConfigMap \"Bad\" is invalid", 0), 0u);
  ASSERT_EQ(s.causes().size(), 1u);
  EXPECT_EQ(s.causes()[0].type, "FieldValueInvalid");
  EXPECT_EQ(s.causes()[0].field, "metadata.name");
  EXPECT_EQ(s.causes()[0].message, "Invalid value: \"Bad\"");
}

TEST(ErrorFromResponseTest, ExpiredAndConflictKeepTheirReasons) {
  EXPECT_TRUE(ErrorFromResponse(
                  410, R"({"kind":"Status","reason":"Expired","code":410,"message":"too old"})")
                  .Is(Reason::kExpired));
  EXPECT_TRUE(
      ErrorFromResponse(409, R"({"kind":"Status","reason":"Conflict","code":409,"message":"x"})")
          .Is(Reason::kConflict));
  EXPECT_TRUE(ErrorFromResponse(409, R"({"kind":"Status","reason":"AlreadyExists","code":409})")
                  .Is(Reason::kAlreadyExists));
}

TEST(ErrorFromResponseTest, UnknownReasonFallsBackOnTheCode) {
  Status s = ErrorFromResponse(
      404, R"({"kind":"Status","reason":"SomethingNew","code":404,"message":"m"})");
  EXPECT_TRUE(s.Is(Reason::kNotFound));
  EXPECT_EQ(s.message(), "m");
}

TEST(ErrorFromResponseTest, NonStatusBodiesGetTheCodesReason) {
  Status s = ErrorFromResponse(503, "upstream connect error");
  EXPECT_TRUE(s.Is(Reason::kServiceUnavailable));
  EXPECT_EQ(s.message(), "the server is currently unable to handle the request");
  ASSERT_EQ(s.causes().size(), 1u);
  EXPECT_EQ(s.causes()[0].type, "UnexpectedServerResponse");
  EXPECT_EQ(s.causes()[0].message, "upstream connect error");

  Status internal = ErrorFromResponse(500, "<html>boom</html>");
  EXPECT_TRUE(internal.Is(Reason::kInternalError));
  EXPECT_EQ(internal.message(),
            "an error on the server (\"<html>boom</html>\") has prevented the request from "
            "succeeding");
  EXPECT_TRUE(ErrorFromResponse(401, "").Is(Reason::kUnauthorized));
  EXPECT_TRUE(ErrorFromResponse(401, "").causes().empty());
  EXPECT_TRUE(ErrorFromResponse(418, R"({"kind":"Teapot"})").Is(Reason::kBadRequest));
}

TEST(DecodeTest, ObjectListAndNoContent) {
  auto obj = DecodeObject(ApiResponse{200, R"({"kind":"ConfigMap","metadata":{"name":"a"}})"});
  ASSERT_TRUE(obj.ok());
  EXPECT_EQ(*Find(*obj, "metadata.name"), "a");
  EXPECT_TRUE(DecodeObject(ApiResponse{200, "not json"}).status().Is(Reason::kInternalError));
  EXPECT_TRUE(DecodeObject(StatusOr<ApiResponse>(Status::Unavailable("down")))
                  .status()
                  .Is(Reason::kServiceUnavailable));

  auto list = DecodeList(
      ApiResponse{200, R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"12","continue":"c",
               "remainingItemCount":40},
               "items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})"});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->resource_version, "12");
  EXPECT_EQ(list->continue_token, "c");
  EXPECT_EQ(list->remaining_item_count, 40);
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(*Find(list->items[1], "metadata.name"), "b");
  auto empty = DecodeList(ApiResponse{200, R"({"metadata":{"resourceVersion":"3"},"items":null})"});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->items.empty());
  EXPECT_EQ(empty->remaining_item_count, -1);
  EXPECT_FALSE(DecodeList(ApiResponse{200, R"({"items":[1]})"}).ok());

  EXPECT_TRUE(DecodeNoContent(ApiResponse{200, ""}).ok());
  EXPECT_TRUE(DecodeNoContent(ApiResponse{404, ""}).Is(Reason::kNotFound));
}

TEST(StatusFromObjectTest, SuccessWhereAnErrorBelongsIsInternal) {
  Status s =
      StatusFromObject(json::object{{"kind", "Status"}, {"status", "Success"}, {"code", 200}}, 500);
  EXPECT_TRUE(s.Is(Reason::kInternalError));
}

}  // namespace
}  // namespace flotilla::client
