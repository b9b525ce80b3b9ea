// An informer handler that marks a LiveZone stale on every event: what a
// zone built from caches registers on each cache it reads.
#pragma once

#include "dns/live_zone.h"
#include "runtime/informer.h"

namespace flotilla::dns {

inline runtime::EventHandler StaleOn(LiveZone& zone) {
  return runtime::EventHandler{
      .on_add = [&zone](const runtime::ObjectPtr&) { zone.MarkStale(); },
      .on_update = [&zone](const runtime::ObjectPtr&,
                           const runtime::ObjectPtr&) { zone.MarkStale(); },
      .on_delete = [&zone](const runtime::ObjectPtr&) { zone.MarkStale(); },
      .on_synced = [&zone] { zone.MarkStale(); }};
}

}  // namespace flotilla::dns
