// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "http/boundedhttpserver.h"

#include <microhttpd.h>

namespace fleetscope::backend {

// Hands response to libmicrohttpd for connection: a refusal without a body gets refusalText's, a 204 or 304 none,
// and a shared page is sent from where it is (read in 64 KiB blocks, held until the library lets it go), never
// copied whole. MHD_NO when the library takes no answer now (the connection is then closed).
MHD_Result queueResponse(MHD_Connection *connection, HttpResponse &response);

} // namespace fleetscope::backend
