// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

// NVIDIA's XID catalogue (docs.nvidia.com/deploy/xid-errors): the codes a fleet sees most, with their meanings.
// The backend writes them into event texts, the console shows them beside each XID. Defined once for both sides.
namespace fleetscope {

struct XidInfo
{
    uint32_t code;
    const char *meaning;
};

inline constexpr XidInfo xidCatalogue[] = {
    { 13, "Graphics engine exception" },
    { 31, "GPU memory page fault" },
    { 43, "GPU stopped processing" },
    { 45, "Preemptive cleanup, due to previous errors" },
    { 48, "Double-bit ECC error" },
    { 61, "Internal micro-controller breakpoint/warning" },
    { 62, "Internal micro-controller halt" },
    { 63, "ECC page retirement or row remapping recorded" },
    { 64, "ECC page retirement or row remapping failure" },
    { 74, "NVLink error" },
    { 79, "GPU has fallen off the bus" },
    { 92, "High single-bit ECC error rate" },
    { 94, "Contained ECC error" },
    { 95, "Uncontained ECC error" },
    { 119, "GSP RPC timeout" },
    { 120, "GSP error" },
};

// The meaning of an XID code; null for codes not in the catalogue.
constexpr const char *xidMeaning(uint32_t code)
{
    for (const XidInfo &x : xidCatalogue) {
        if (x.code == code) {
            return x.meaning;
        }
    }
    return nullptr;
}

// XIDs after which the GPU is out of service (its job dies or stalls, or its node is lost): an uncontained or
// double-bit memory error, fallen off the bus, the GSP not answering. The rest are soft (an application's fault, a
// retried link, a warning) and pass. The backend grades its XID events and weighs repeat offenders by it.
constexpr bool xidSerious(uint32_t code)
{
    return code == 48 || code == 79 || code == 94 || code == 95 || code == 119;
}

} // namespace fleetscope
