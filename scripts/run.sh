#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing, builds, and opens Fleetscope on the embedded simulated fleet.
# Arguments are passed to the console (see `fleetscope --help`).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
install_missing_packages
configure_and_build
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
    echo "fleetscope: no display (DISPLAY is not set); run it from a desktop session, or under xvfb-run to try it" >&2
    exit 1
fi
exec "$FLEETSCOPE_ROOT/build/$PRESET/bin/fleetscope" "$@"
