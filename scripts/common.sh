# SPDX-License-Identifier: Apache-2.0
# Shared by scripts/run.sh and scripts/test.sh: install what is missing, configure and build.
set -euo pipefail

FLEETSCOPE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PRESET=${FLEETSCOPE_PRESET:-dev}

# Everything the project needs on a fresh Debian 12, by package name.
FLEETSCOPE_PACKAGES=(
    cmake g++ ninja-build ccache pkg-config
    lld  # links 3-6x faster than GNU ld (CMakeLists.txt)
    qt6-base-dev qt6-qpa-plugins libqt6opengl6-dev qt6-charts-dev
    libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libfmt-dev libzstd-dev
    libgl-dev libegl-dev libgl1-mesa-dri xvfb xauth fonts-dejavu-core
    libsimdjson-dev  # the backend's Prometheus source parses PromQL answers with it
    prometheus  # the exporter's integration test scrapes the simulator with a real Prometheus
    prometheus-alertmanager  # the NOC's alerts: the backend reads and silences a real Alertmanager in the tests (amtool too)
    victoria-metrics  # the same chain through a real single-node VictoriaMetrics (tst_victoriametrics_e2e)
    libcurl4-openssl-dev  # http(s) towards Prometheus, with the system's OpenSSL
    libssl-dev  # checks a --prometheus-ca bundle and names certificate errors (also pulled in by libgrpc-dev)
    openssl  # the TLS test makes its self-signed certificates with the openssl tool
    libyaml-cpp-dev  # YAML topology files (--topology fleet.yaml)
    poppler-utils  # pdftotext: the summary view's test reads the PDF report back
    libsnappy-dev  # the remote-write receiver: snappy bodies
    libmicrohttpd-dev libgnutls28-dev  # the backend's HTTP doors (remote write, exporter pages) and their TLS
    libcpp-httplib-dev  # the tests' and benchmarks' HTTP client towards those doors
    libcli11-dev  # the backend's command line
)

install_missing_packages() {
    local missing=()
    for p in "${FLEETSCOPE_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        return 0
    fi
    echo "fleetscope: installing ${missing[*]}"
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        sudo=sudo
    fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure_and_build() {
    cd "$FLEETSCOPE_ROOT"
    if [ ! -f "build/$PRESET/build.ninja" ]; then
        cmake --preset "$PRESET"
    fi
    cmake --build --preset "$PRESET"
}
