#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing, builds with warnings as errors, and runs the whole test suite headless under Xvfb.
# Arguments are passed to ctest (for example -R heatmap).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
install_missing_packages
configure_and_build
cd "$FLEETSCOPE_ROOT"
# One private X server for the whole run; Mesa's llvmpipe gives Qt OpenGL 4.5 there.
exec xvfb-run -a -s "-screen 0 1920x1080x24 -nolisten tcp" ctest --preset "$PRESET" "$@"
