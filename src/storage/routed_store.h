// A Store that keeps the keys under one prefix in another Store: the
// federation's view of its members' pods lives in memory, beside the
// durable store that holds everything users wrote (docs/federation.md,
// "The members' pods").
//
// Reads, writes and watches of a key or prefix under `prefix` go to `side`;
// everything else goes to `main`, including a List, Watch or Count whose
// prefix merely contains `prefix` ("/": the garbage collector's watch), so
// the side's keys are invisible from above their prefix. The two stores
// number their revisions independently: a resourceVersion of one means
// nothing to the other, and the revision methods (CurrentRevision, Compact,
// CompactedRevision) are main's.
//
// Thread-safe as its two stores are.
#pragma once

#include <memory>
#include <string>

#include "storage/store.h"

namespace flotilla::storage {

std::unique_ptr<Store> NewRoutedStore(std::unique_ptr<Store> main, std::string prefix,
                                      std::shared_ptr<Store> side);

}  // namespace flotilla::storage
