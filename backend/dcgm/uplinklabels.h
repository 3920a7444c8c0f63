// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "dcgm/promsample.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace fleetscope::backend {

// A GPU's network attachment as an exporter labels it: treydock/infiniband_exporter's HCA collector
// (collectors/hca.go) writes one infiniband_hca_uplink_info series (value 1) per HCA port of the fabric, labelled
// hca (the HCA's node description, which rdma-ndd sets to "<hostname> <device>": "node01 mlx5_3"), port (the HCA's
// port), uplink (the node description of what the cable's other end is: a leaf switch's name), uplink_port,
// uplink_type ("SW" for a switch), and guid, uplink_guid, uplink_lid, which are not read. The exporter runs on one
// host of the fabric (or writes node_exporter's textfile directory), so the series' instance names that host, not
// the HCA's: the node comes from the first word of hca, the NIC from the second.
class UplinkLabels
{
public:
    static constexpr std::string_view seriesName = "infiniband_hca_uplink_info";
    // An InfiniBand node description is 64 bytes (the NodeDescription attribute); longer is not one.
    static constexpr size_t maxNameBytes = 64;
    static constexpr uint32_t maxPort = 65535; // TopologyFile::maxPort: a leaf's port as a file gives it

    enum class Refusal : uint8_t {
        None,
        NoHca, // hca empty
        NoNic, // hca has no second word (an HCA described as "p0001"): which NIC it is is not known
        BadHca, // hca too long, more than two words, or not printable
        NoUplink, // uplink empty
        BadUplink, // uplink too long or not printable
        NotASwitch, // uplink_type other than SW (an HCA cabled to another HCA, back to back)
        BadPort, // uplink_port or port not a decimal from 1 to maxPort
        Count
    };
    // What a refusal means, for the log: "hca names no NIC (one word)".
    static const char *why(Refusal refusal);

    // The labels read of one series (a PromSample holds them too, under the same names).
    struct Series
    {
        std::string hca;
        std::string port;
        std::string uplink;
        std::string uplinkPort;
        std::string uplinkType;
        static Series of(const PromSample &s) { return { s.hca, s.hcaPort, s.uplink, s.uplinkPort, s.uplinkType }; }
        // Takes one label when it is one of the five.
        void read(std::string_view name, std::string_view value);
    };

    // One uplink, as views into the series' labels.
    struct Uplink
    {
        std::string_view host;
        std::string_view nic;
        std::string_view leaf;
        uint32_t port = 0; // the leaf's
        uint32_t hcaPort = 0;
    };
    static Refusal read(const Series &series, Uplink *out);

    // The instant query a poller asks: one series per HCA port, deduplicated over the exporters that scrape the same
    // fabric (a site runs two for redundancy).
    static std::string query();
    // A series' labels for a log line, each cut and its control characters replaced (they come from the wire):
    // "hca 'node01 mlx5_3' port '1' uplink 'su03-l3' port '17'".
    static std::string example(const Series &series);

    // A decimal from 1 to maxPort, nothing else (no sign, no spaces, no leading zero run past 5 digits).
    static bool parsePort(std::string_view text, uint32_t *port);
    // Printable ASCII without spaces, not empty, at most maxNameBytes.
    static bool isName(std::string_view text);
    // The same with inner spaces.
    static bool isText(std::string_view text);
};

} // namespace fleetscope::backend
