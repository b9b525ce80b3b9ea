// Fuzz targets over every parser of untrusted input (docs/testing.md,
// "Fuzzing"). Each target takes any bytes, feeds them to the code that reads
// them from the network or from a file, and aborts with a message when a
// promise of that code breaks (a 5xx for a bad request, a canonical form that
// does not parse back); the sanitizers catch the rest.
//
// Two drivers run them: a libFuzzer binary per target (fuzzer_main.cc,
// built with clang by scripts/fuzz) for long coverage-guided runs, and the
// unit test smoke_test.cc, which runs every target on its seed corpus and
// on deterministic mutations of it, under ASan and UBSan in CI.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace flotilla::fuzz {

struct Target {
  std::string_view name;  // also its corpus directory: fuzz/corpus/NAME
  void (*run)(std::span<const uint8_t> data);
};

// Every target, by name.
std::span<const Target> Targets();
const Target* FindTarget(std::string_view name);

// Aborts, saying which promise broke and on what.
[[noreturn]] void Broken(std::string_view what, std::string_view detail);

std::string_view AsText(std::span<const uint8_t> data);

// Removes directory `dir` (a target's PKI) when the process exits; the
// target's server lives as long as the process.
void RemoveAtExit(std::string dir);

// The targets (one file each).
void ApiObject(std::span<const uint8_t> data);
void Patch(std::span<const uint8_t> data);
void Apply(std::span<const uint8_t> data);
void Protobuf(std::span<const uint8_t> data);
void Selectors(std::span<const uint8_t> data);
void Kubeconfig(std::span<const uint8_t> data);
void TokenFile(std::span<const uint8_t> data);
void Annotations(std::span<const uint8_t> data);
void ServiceAccountToken(std::span<const uint8_t> data);
void AuditPolicy(std::span<const uint8_t> data);
void Http1Server(std::span<const uint8_t> data);
void Http2Server(std::span<const uint8_t> data);
void Tunnel(std::span<const uint8_t> data);

}  // namespace flotilla::fuzz
