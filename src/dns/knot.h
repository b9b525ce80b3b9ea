// libknot (CZ.NIC's DNS library, docs/dns.md) for C++: its headers declare
// C functions without extern "C".
#pragma once

extern "C" {
#include <libknot/libknot.h>
}
