// SPDX-License-Identifier: Apache-2.0
#pragma once
// The end-to-end suites run real parts that scripts/common.sh installs: Prometheus, VictoriaMetrics and vmagent, the
// openssl tool (test certificates), pdftotext. Where one is missing a test skips, saying which; with
// FLEETSCOPE_REQUIRE_REAL_PARTS=1 (set by .ci/run) that is a failure instead, so that a green CI means every
// end-to-end test ran rather than skipped.
#include <QTest>
#include <QtGlobal>

#define FLEETSCOPE_SKIP_WITHOUT(message)                                                                               \
    do {                                                                                                               \
        if (qEnvironmentVariableIntValue("FLEETSCOPE_REQUIRE_REAL_PARTS") != 0) {                                      \
            QFAIL(message);                                                                                            \
        }                                                                                                              \
        QSKIP(message);                                                                                                \
    } while (false)
