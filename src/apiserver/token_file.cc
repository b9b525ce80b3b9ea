// A small CSV reader with the semantics of Go's encoding/csv (the reader
// kube-apiserver uses for its token file), so that a file one accepts the
// other accepts too.
#include "apiserver/token_file.h"

#include <string>

namespace flotilla::apiserver {
namespace {

struct Cursor {
  std::string_view text;
  size_t pos = 0;
  int line = 1;

  bool AtEnd() const { return pos >= text.size(); }
  char Peek() const { return text[pos]; }
  // True at "\n" or "\r\n".
  bool AtNewline() const {
    return !AtEnd() && (text[pos] == '\n' ||
                        (text[pos] == '\r' && pos + 1 < text.size() && text[pos + 1] == '\n'));
  }
  void SkipNewline() {
    if (text[pos] == '\r') ++pos;
    ++pos;
    ++line;
  }
};

Status CsvError(std::string_view source, int line, std::string_view what) {
  return Status::BadRequest(std::string(source) + " line " + std::to_string(line) + ": " +
                            std::string(what));
}

// Reads a quoted field starting at the opening quote.
Status ReadQuoted(Cursor& c, std::string_view source, std::string* field) {
  int start_line = c.line;
  ++c.pos;
  for (;;) {
    if (c.AtEnd()) return CsvError(source, start_line, "extraneous or missing \" in quoted-field");
    if (c.AtNewline()) {
      c.SkipNewline();
      *field += '\n';
      continue;
    }
    char ch = c.text[c.pos++];
    if (ch != '"') {
      *field += ch;
    } else if (!c.AtEnd() && c.Peek() == '"') {
      *field += '"';
      ++c.pos;
    } else {
      break;
    }
  }
  if (!c.AtEnd() && c.Peek() != ',' && !c.AtNewline()) {
    return CsvError(source, c.line, "extraneous or missing \" in quoted-field");
  }
  return {};
}

Status ReadUnquoted(Cursor& c, std::string_view source, std::string* field) {
  while (!c.AtEnd() && c.Peek() != ',' && !c.AtNewline()) {
    if (c.Peek() == '"') return CsvError(source, c.line, "bare \" in non-quoted field");
    *field += c.text[c.pos++];
  }
  return {};
}

// Reads one record; leaves the cursor after its line end.
Status ReadRecord(Cursor& c, std::string_view source, std::vector<std::string>* fields) {
  for (;;) {
    std::string field;
    if (!c.AtEnd() && c.Peek() == '"') {
      FLOTILLA_RETURN_IF_ERROR(ReadQuoted(c, source, &field));
    } else {
      FLOTILLA_RETURN_IF_ERROR(ReadUnquoted(c, source, &field));
    }
    fields->push_back(std::move(field));
    if (!c.AtEnd() && c.Peek() == ',') {
      ++c.pos;
      continue;
    }
    if (c.AtNewline()) c.SkipNewline();
    return {};
  }
}

std::vector<std::string> SplitGroups(const std::string& column) {
  std::vector<std::string> groups;
  size_t start = 0;
  while (start <= column.size()) {
    size_t comma = column.find(',', start);
    if (comma == std::string::npos) comma = column.size();
    if (comma > start) groups.push_back(column.substr(start, comma - start));
    start = comma + 1;
  }
  return groups;
}

bool NeedsQuotes(std::string_view field) {
  return field.find_first_of(",\"\r\n") != std::string_view::npos ||
         (!field.empty() && field.front() == ' ');
}

std::string CsvField(std::string_view field, bool force_quotes) {
  if (!force_quotes && !NeedsQuotes(field)) return std::string(field);
  std::string out = "\"";
  for (char ch : field) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

StatusOr<std::vector<TokenEntry>> ParseTokenCsv(std::string_view text, std::string_view source) {
  std::vector<TokenEntry> entries;
  Cursor c{text};
  while (!c.AtEnd()) {
    if (c.AtNewline()) {
      c.SkipNewline();
      continue;
    }
    int line = c.line;
    std::vector<std::string> fields;
    FLOTILLA_RETURN_IF_ERROR(ReadRecord(c, source, &fields));
    if (fields.size() < 3) {
      return CsvError(source, line,
                      "must have at least 3 columns (token, user name, user uid), found " +
                          std::to_string(fields.size()));
    }
    if (fields[0].empty()) continue;
    if (fields[1].empty()) return CsvError(source, line, "the user name is empty");
    TokenEntry entry{fields[0], fields[1], fields[2], {}, line};
    if (fields.size() >= 4) entry.groups = SplitGroups(fields[3]);
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::string FormatTokenCsvLine(const TokenEntry& entry) {
  std::string line = CsvField(entry.token, false) + "," + CsvField(entry.user, false) + "," +
                     CsvField(entry.uid, false);
  if (!entry.groups.empty()) {
    std::string groups;
    for (const auto& g : entry.groups) groups += (groups.empty() ? "" : ",") + g;
    line += "," + CsvField(groups, true);
  }
  return line + "\n";
}

}  // namespace flotilla::apiserver
