// Watch stream decoding (watch_decoder.h).
#include "client/watch_decoder.h"

#include <utility>

namespace flotilla::client {
namespace {

bool ParseType(std::string_view text, WatchEvent::Type* type) {
  static constexpr std::pair<std::string_view, WatchEvent::Type> kTypes[] = {
      {"ADDED", WatchEvent::Type::kAdded},     {"MODIFIED", WatchEvent::Type::kModified},
      {"DELETED", WatchEvent::Type::kDeleted}, {"BOOKMARK", WatchEvent::Type::kBookmark},
      {"ERROR", WatchEvent::Type::kError},
  };
  for (const auto& [name, value] : kTypes) {
    if (name == text) {
      *type = value;
      return true;
    }
  }
  return false;
}

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

StatusOr<WatchEvent> DecodeWatchEvent(std::string_view line) {
  auto parsed = ParseJsonObject(line);
  if (!parsed.ok()) {
    return Status::Internal("malformed watch event: " + parsed.status().message());
  }
  auto type_text = GetString(*parsed, "type");
  if (!type_text) return Status::Internal("malformed watch event: no type");
  WatchEvent event;
  if (!ParseType(*type_text, &event.type)) {
    return Status::Internal("malformed watch event: unknown type \"" + std::string(*type_text) +
                            "\"");
  }
  json::value* object = parsed->if_contains("object");
  if (object == nullptr || !object->is_object()) {
    return Status::Internal("malformed watch event: no object");
  }
  event.object = std::move(object->as_object());
  return event;
}

std::string EventResourceVersion(const WatchEvent& event) {
  if (event.type == WatchEvent::Type::kError) return "";
  const json::object* meta = GetObject(event.Object(), "metadata");
  if (meta == nullptr) return "";
  return std::string(GetString(*meta, "resourceVersion").value_or(""));
}

Status WatchDecoder::Line(std::string_view line, const Emit& emit, bool* stop) {
  if (IsBlank(line)) return Status::Ok();
  FLOTILLA_ASSIGN_OR_RETURN(WatchEvent event, DecodeWatchEvent(line));
  *stop = !emit(std::move(event));
  return Status::Ok();
}

Status WatchDecoder::Feed(std::string_view data, const Emit& emit) {
  bool stop = false;
  while (!data.empty() && !stop) {
    size_t newline = data.find('\n');
    if (newline == std::string_view::npos) {
      if (partial_.size() + data.size() > max_line_bytes_) {
        return Status::Internal("watch event longer than " + std::to_string(max_line_bytes_) +
                                " bytes");
      }
      partial_.append(data);
      return Status::Ok();
    }
    std::string_view piece = data.substr(0, newline);
    data.remove_prefix(newline + 1);
    if (partial_.empty()) {
      FLOTILLA_RETURN_IF_ERROR(Line(piece, emit, &stop));
    } else {
      std::string line = std::move(partial_);
      partial_.clear();
      line.append(piece);
      FLOTILLA_RETURN_IF_ERROR(Line(line, emit, &stop));
    }
  }
  return Status::Ok();
}

Status WatchDecoder::FeedShared(std::string_view data,
                                std::span<const std::shared_ptr<const json::object>> objects,
                                bool share, const Emit& emit) {
  if (!partial_.empty()) return Feed(data, emit);
  for (size_t i = 0; !data.empty(); ++i) {
    size_t newline = data.find('\n');
    if (newline == std::string_view::npos) return Feed(data, emit);
    std::string_view line = data.substr(0, newline);
    data.remove_prefix(newline + 1);
    const json::object* object = i < objects.size() ? objects[i].get() : nullptr;
    std::optional<std::string_view> type_text = RawMember(line, "type");
    WatchEvent event;
    if (object == nullptr || !type_text || type_text->size() < 2 ||
        !ParseType(type_text->substr(1, type_text->size() - 2), &event.type)) {
      bool stop = false;
      FLOTILLA_RETURN_IF_ERROR(Line(line, emit, &stop));
      if (stop) return Status::Ok();
      continue;
    }
    if (share) {
      event.shared = objects[i];
    } else {
      event.object = *object;
    }
    if (!emit(std::move(event))) return Status::Ok();
  }
  return Status::Ok();
}

Status WatchDecoder::Finish(const Emit& emit) {
  std::string line = std::move(partial_);
  partial_.clear();
  bool stop = false;
  return Line(line, emit, &stop);
}

}  // namespace flotilla::client
