#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI's sanitizer stage (docs/RELIABILITY.md): builds a sanitizer preset in build/<preset> and runs its suites under
# Xvfb, as scripts/test.sh runs the dev preset's. Arguments after the preset are passed to ctest (for example -R anomaly).
#   scripts/sanitize.sh asan   the whole suite but the load and chain suites, with AddressSanitizer +
#                              UndefinedBehaviorSanitizer (leaks checked where no OpenGL driver is loaded;
#                              tests/CMakeLists.txt says why)
#   scripts/sanitize.sh tsan   the suites of common, jobs, model, client and backend, and the widget and app
#                              suites that run the console's threads (label tsan), with ThreadSanitizer
#                              (suppressions for third-party code only, each with its reason: tests/tsan.supp)
preset=${1:-}
case "$preset" in
asan | tsan) shift ;;
*)
    echo "usage: scripts/sanitize.sh asan|tsan [CTEST-ARGS...]" >&2
    exit 2
    ;;
esac
FLEETSCOPE_PRESET=$preset
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
install_missing_packages
start=$(date +%s)
configure_and_build
built=$(date +%s)
cd "$FLEETSCOPE_ROOT"
# Reports go to the test's output; UBSan stops the test that hits undefined behaviour (ASan always stops).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
rc=0
xvfb-run -a -s "-screen 0 1920x1080x24 -nolisten tcp" ctest --preset "$preset" "$@" || rc=$?
echo "sanitize: $preset built in $((built - start)) s, tests in $(($(date +%s) - built)) s, exit $rc"
exit $rc
