// SPDX-License-Identifier: Apache-2.0
#pragma once

// How often a console may probe a quiet connection with HTTP/2 pings, for both sides: the console's keepalive time is
// never shorter, and the backend accepts pings this often without data in between (gRPC's default is one every five
// minutes, past which it answers GOAWAY "too_many_pings" and drops the connection: a console streaming from a backend
// whose frames come seldom would be cut off every few keepalive periods).
namespace fleetscope::keepalive {

constexpr int minTimeMs = 1000;

} // namespace fleetscope::keepalive
