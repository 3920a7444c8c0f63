#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Steady-state memory of the real console with its embedded simulated fleet: VmRSS of the console's own process
# (and, for context, of the fleetscope-backend child it starts) every INTERVAL seconds for DURATION seconds after the
# first live frame, with the CPU each used over the interval. Runs itself under Xvfb when there is no display.
#
#   bench/console_memory.sh [GPUS=1048576] [DURATION=120] [INTERVAL=10] [console options, e.g. --no-animation]
#
# The time to the first live frame is taken from a first run with --screenshot (which exits once a live frame is
# drawn); the measured run then starts sampling that long after its own start.
set -euo pipefail

if [[ -z "${DISPLAY:-}" ]]; then
    exec xvfb-run -a -s "-screen 0 1920x1080x24 -nolisten tcp" "${BASH_SOURCE[0]}" "$@"
fi

gpus=${1:-1048576}
duration=${2:-120}
interval=${3:-10}
shift $(($# < 3 ? $# : 3))
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${FLEETSCOPE_BIN_DIR:-$root/build/dev/bin}

work=$(mktemp -d)
console=""
backend=""
cleanup() {
    # Only the processes this script started, by PID.
    [[ -n "$console" ]] && kill -TERM "$console" 2>/dev/null && wait "$console" 2>/dev/null || true
    [[ -n "$backend" ]] && kill -TERM "$backend" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

rss_mib() { # VmRSS of a PID in MiB, or - when it is gone
    awk '/^VmRSS:/ { printf "%.0f", $2 / 1024; found = 1 } END { if (!found) printf "-" }' "/proc/$1/status" \
        2>/dev/null || printf -- "-"
}
cpu_ticks() { # utime + stime of a PID, in clock ticks
    awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0
}

start=$(date +%s.%N)
"$bin/fleetscope" --gpus "$gpus" "$@" --screenshot "$work/first.png" --screenshot-timeout 300 >"$work/first.log" 2>&1
first=$(echo "$(date +%s.%N) - $start" | bc)
first=$(printf "%.0f" "$first")
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/^Mem:/ { print $2 }') GiB"
echo "console: $bin/fleetscope --gpus $gpus $*; first live frame drawn ${first} s after start (--screenshot run)"

"$bin/fleetscope" --gpus "$gpus" "$@" >"$work/console.log" 2>&1 &
console=$!
ticks=$(getconf CLK_TCK)
sleep "$first"
for _ in $(seq 1 20); do
    backend=$(pgrep -P "$console" || true) # its only child: the embedded fleetscope-backend
    [[ -n "$backend" ]] && break
    sleep 0.5
done
printf "%6s %12s %10s %12s %10s\n" "t (s)" "console MiB" "console %" "backend MiB" "backend %"
samples=()
prev_c=$(cpu_ticks "$console")
prev_b=$(cpu_ticks "${backend:-0}")
elapsed=0
while ((elapsed < duration)); do
    sleep "$interval"
    elapsed=$((elapsed + interval))
    c=$(cpu_ticks "$console")
    b=$(cpu_ticks "${backend:-0}")
    rss=$(rss_mib "$console")
    if [[ "$rss" == "-" ]]; then
        echo "the console has exited; its log:" >&2
        cat "$work/console.log" >&2
        exit 1
    fi
    samples+=("$rss")
    printf "%6d %12s %10.0f %12s %10.0f\n" $((first + elapsed)) "$rss" \
        "$(echo "100 * ($c - $prev_c) / $ticks / $interval" | bc -l)" "$(rss_mib "${backend:-0}")" \
        "$(echo "100 * ($b - $prev_b) / $ticks / $interval" | bc -l)"
    prev_c=$c
    prev_b=$b
done
# Steady value: the median of the samples.
median=$(printf "%s\n" "${samples[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
peak=$(awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$console/status")
echo "console steady VmRSS (median of ${#samples[@]} samples): ${median} MiB; peak (VmHWM): ${peak} MiB"
