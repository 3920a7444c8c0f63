#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the fuzz preset (clang 16, libFuzzer, ASan + UBSan) and runs each fuzz target for SECONDS (default 30) on a
# copy of its seed corpus (fuzz/corpus/<target>) and its past findings (fuzz/regressions/<target>), as many targets at
# once as there are cores (FLEETSCOPE_FUZZ_JOBS=N to change it). Prints per target the executions, the edges covered
# (cov) and the time; exits non-zero when any target crashed, leaked, timed out or ran out of memory, with the input
# that did it under build/fuzz/runs/<target>/.
#   scripts/fuzz.sh [SECONDS] [TARGET...]     targets: remotewrite topology frameparts promjson topologyfile
#                                             answers tokenfile configfile viewstring playlist
#                                             alertmanager_json
FLEETSCOPE_PRESET=fuzz
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# libFuzzer and the sanitizers' runtime with clang 16; llvm-16 for llvm-symbolizer-16 (stacks with file:line).
FLEETSCOPE_PACKAGES+=(clang-16 libfuzzer-16-dev libclang-rt-16-dev llvm-16)

duration=${1:-30}
shift || true
if ! [[ "$duration" =~ ^[0-9]+$ ]] || [ "$duration" -lt 1 ]; then
    echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]" >&2
    exit 2
fi
# The longest input each target is given: a few times its largest seed, small enough to stay fast.
declare -A max_len=([remotewrite]=16384 [topology]=32768 [frameparts]=8192 [promjson]=4096 [topologyfile]=4096
    [answers]=4096 [tokenfile]=8192 [configfile]=8192 [viewstring]=2048 [playlist]=8192)
max_len+=([alertmanager_json]=8192)
max_len+=([alertsdecode]=8192)
max_len+=([jobdecode]=8192)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(remotewrite topology frameparts promjson topologyfile answers tokenfile configfile viewstring
        playlist)
    targets+=(alertmanager_json)
    targets+=(alertsdecode)
    targets+=(jobdecode)
fi
for t in "${targets[@]}"; do
    if [ -z "${max_len[$t]:-}" ]; then
        echo "fuzz: no target '$t' (${!max_len[*]})" >&2
        exit 2
    fi
done

install_missing_packages
configure_and_build
cd "$FLEETSCOPE_ROOT"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ -x /usr/bin/llvm-symbolizer-16 ]; then
    export ASAN_SYMBOLIZER_PATH=/usr/bin/llvm-symbolizer-16
fi

# Runs one target; its summary line goes to build/fuzz/runs/<target>/result, and a failed run leaves .../failed.
fuzz_one() {
    local t=$1 run="build/fuzz/runs/$1" rc=0 start ms seconds execs cov line artifact
    rm -rf "$run"
    mkdir -p "$run/corpus"
    cp fuzz/corpus/"$t"/* "$run/corpus/"
    local extra=()
    if [ -d "fuzz/regressions/$t" ]; then
        extra=("fuzz/regressions/$t")
    fi
    echo "fuzz: $t for ${duration} s (-max_len=${max_len[$t]}), log in $run/log"
    start=$(date +%s%3N)
    "build/fuzz/bin/fuzz_$t" -max_total_time="$duration" -max_len="${max_len[$t]}" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$run/" "$run/corpus" "${extra[@]}" >"$run/log" 2>&1 || rc=$?
    ms=$(($(date +%s%3N) - start))
    seconds="$((ms / 1000)).$((ms % 1000 / 100))"
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run/log" | tail -1)
    cov=$(sed -nE 's/^#[0-9]+[[:space:]]+[A-Za-z]+[[:space:]]+cov: ([0-9]+).*/\1/p' "$run/log" | tail -1)
    line=$(printf '%-13s %12s execs  cov %6s  %7s s' "$t" "${execs:-?}" "${cov:-?}" "$seconds")
    if [ "$rc" -ne 0 ]; then
        artifact=$(ls "$run"/{crash,leak,timeout,oom,slow-unit}-* 2>/dev/null | head -1 || true)
        line="$line  FAILED (exit $rc) ${artifact:-see $run/log}"
        touch "$run/failed"
        grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$run/log" | head -5 || true
    else
        line="$line  ok"
    fi
    echo "$line" | tee "$run/result"
}

# As many targets at once as there are cores (FLEETSCOPE_FUZZ_JOBS to change it): each target runs on one core, so on
# CI's two cores the stage takes half as long, with each target getting the same time.
parallel=${FLEETSCOPE_FUZZ_JOBS:-$(nproc)}
for t in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do
        wait -n || true
    done
    fuzz_one "$t" &
done
wait

failed=()
summary=()
for t in "${targets[@]}"; do
    summary+=("$(cat "build/fuzz/runs/$t/result" 2>/dev/null || echo "$t: no result")")
    if [ -e "build/fuzz/runs/$t/failed" ] || [ ! -e "build/fuzz/runs/$t/result" ]; then
        failed+=("$t")
    fi
done

echo
echo "fuzz summary ($(uname -m), $(nproc) cores, ${duration} s a target, $parallel at once):"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: FAILED: ${failed[*]}"
    exit 1
fi
echo "fuzz: ${#targets[@]} targets, no findings"
