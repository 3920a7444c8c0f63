// SPDX-License-Identifier: Apache-2.0
// Not compiled: tst_layering_catches must name this include (a view is handed its data by the session; it never
// asks the transport itself).
#pragma once
#include "client/historyclient.h"
