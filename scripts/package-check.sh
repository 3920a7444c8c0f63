#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI's packaging stage: builds the two .deb packages (scripts/package.sh, lintian included), installs them on this
# machine, checks the installed unit (systemd-analyze verify and security, with and without the credentials drop-in),
# the man pages, the desktop entry and the metainfo, then runs the installed programs: the backend from the unit's own
# ExecStart line with TLS and a token (certificates made here with openssl), the console taking a --screenshot against
# it under Xvfb, and, where the machine lets root boot a container, the unit itself under systemd
# (packaging/check-under-systemd.sh). Removes and purges the packages at the end, also when a step fails, and prints
# the time it took. FLEETSCOPE_PACKAGE_CHECK_KEEP=FILE keeps the console's screenshot there.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# Only this stage needs these (as fuzz.sh does with its own), so scripts/test.sh installs none of them; openssl, xvfb
# and xauth are in common.sh's list, desktop-file-utils and appstream in package.sh's.
#   systemd            systemd-analyze, to check the unit offline (CI has no systemd running)
#   systemd-container  systemd-nspawn, to run the unit under systemd where the machine allows it
#   man-db             man, to render the installed man pages with groff's warnings on
FLEETSCOPE_PACKAGES+=(systemd systemd-container man-db)

start=$(date +%s)
install_missing_packages
cd "$FLEETSCOPE_ROOT"
scripts/package.sh

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo=sudo
fi
apt_get() { DEBIAN_FRONTEND=noninteractive $sudo apt-get -y -qq "$@"; }
# Those of the two packages dpkg still knows (installed, or removed with their conffiles left).
known_packages() {
    { dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' fleetscope fleetscope-backend 2>/dev/null || true; } |
        awk '$2 != "un" { print $1 }'
}
purge_packages() {
    local known
    known=$(known_packages)
    if [ -n "$known" ]; then
        # shellcheck disable=SC2086 # one word per package
        apt_get purge $known >/dev/null
    fi
}

work=$(mktemp -d)
backend_pid=""
cleanup() {
    if [ -n "$backend_pid" ]; then
        kill "$backend_pid" 2>/dev/null || true
        wait "$backend_pid" 2>/dev/null || true
    fi
    purge_packages 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "package-check: $*" >&2
    exit 1
}
step() { echo "package-check: $*"; }

# Waits until file $1 has a line matching $2 or $3 seconds pass; the process $4 must stay alive meanwhile.
wait_for_line() {
    local deadline=$((SECONDS + $3))
    while ! grep -q "$2" "$1" 2>/dev/null; do
        kill -0 "$4" 2>/dev/null || return 1
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

# --- Install ----------------------------------------------------------------------------------------------------------
purge_packages
step "installing $(ls build/release/packages/*.deb | tr '\n' ' ')"
apt_get install ./build/release/packages/fleetscope*.deb >"$work/apt.log" 2>&1 || {
    cat "$work/apt.log" >&2
    fail "apt-get install failed"
}
for f in /usr/bin/fleetscope /usr/bin/fleetscope-backend /etc/fleetscope/backend.yaml \
    /lib/systemd/system/fleetscope-backend.service /usr/share/applications/org.fleetscope.Fleetscope.desktop \
    /usr/share/icons/hicolor/scalable/apps/org.fleetscope.Fleetscope.svg \
    /usr/share/icons/hicolor/256x256/apps/org.fleetscope.Fleetscope.png; do
    [ -e "$f" ] || fail "$f was not installed"
done
grep -qx /etc/fleetscope/backend.yaml /var/lib/dpkg/info/fleetscope-backend.conffiles ||
    fail "/etc/fleetscope/backend.yaml is not a conffile"

# --- The installed files, checked as they are -------------------------------------------------------------------------
unit=/lib/systemd/system/fleetscope-backend.service
step "systemd-analyze verify $unit"
# --man=no: a container may leave man pages out (dpkg path-exclude); they are checked below instead. verify only warns
# about an unknown key or a bad value, so anything it says fails the check.
verified=$(systemd-analyze verify --man=no "$unit" 2>&1) || fail "systemd-analyze verify: $verified"
[ -z "$verified" ] || fail "systemd-analyze verify: $verified"
# The credentials drop-in the documentation gives, over the unit (verify reads drop-ins beside the unit it is given).
step "systemd-analyze verify with examples/credentials.conf"
mkdir -p "$work/units/fleetscope-backend.service.d"
cp "$unit" "$work/units/"
cp /usr/share/doc/fleetscope-backend/examples/credentials.conf "$work/units/fleetscope-backend.service.d/"
verified=$(systemd-analyze verify --man=no "$work/units/fleetscope-backend.service" 2>&1) ||
    fail "systemd-analyze verify: $verified"
[ -z "$verified" ] || fail "systemd-analyze verify (credentials.conf): $verified"
# Exposure 0 is the safest, 10 the least safe; --threshold is in tenths.
security_rc=0
security=$(systemd-analyze security --offline=yes --threshold=20 "$unit" 2>&1) || security_rc=$?
step "systemd-analyze security: $(sed -n 's/^.*Overall exposure level[^:]*: //p' <<<"$security")"
[ "$security_rc" -eq 0 ] || fail "the unit's exposure is over 2.0"
for page in fleetscope fleetscope-backend; do
    warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z \
        "/usr/share/man/man1/$page.1.gz" 2>&1 >/dev/null)
    [ -z "$warnings" ] || fail "man page $page.1: $warnings"
done
desktop-file-validate /usr/share/applications/org.fleetscope.Fleetscope.desktop
appstreamcli validate --no-net /usr/share/metainfo/org.fleetscope.Fleetscope.metainfo.xml >/dev/null
# Every option the programs take is in their man page, and every option the packaged backend.yaml names (set or
# commented out) is one the backend takes.
for program in fleetscope fleetscope-backend; do
    page_text=$(zcat "/usr/share/man/man1/$program.1.gz" | sed 's/\\-/-/g')
    # The options' own lines only (two spaces, then -h, --help or --name), not options named in the text.
    for option in $("/usr/bin/$program" --help | grep -oE '^ +(-[a-zA-Z], ?)?--[a-z][a-z0-9-]*' |
        grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
        grep -q -- "$option\b" <<<"$page_text" || fail "$program --help has $option, its man page does not"
    done
done
backend_help=$(/usr/bin/fleetscope-backend --help)
for key in $(sed -nE 's/^#?([a-z][a-z0-9-]+):( .*)?$/\1/p' /etc/fleetscope/backend.yaml); do
    grep -q -- "--$key\b" <<<"$backend_help" || fail "backend.yaml names '$key', no option"
done

# The unit's command line, run without systemd: as a user of its own with no capabilities and no new privileges, the
# nearest a plain process comes to DynamicUser=, CapabilityBoundingSet= and NoNewPrivileges=.
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
[ -n "$exec_start" ] || fail "no ExecStart= in $unit"
read -r -a service_command <<<"$exec_start"
as_service=()
if [ "$(id -u)" -eq 0 ]; then
    as_service=(setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs --inh-caps=-all --bounding-set=-all)
fi

# Starts the service's command with $@ after it, logging to $work/backend.log; sets backend_port.
start_backend() {
    : >"$work/backend.log"
    "${as_service[@]}" "${service_command[@]}" "$@" >"$work/backend.log" 2>&1 &
    backend_pid=$!
    wait_for_line "$work/backend.log" 'listening on ' 30 "$backend_pid" || {
        cat "$work/backend.log" >&2
        fail "the backend did not start listening"
    }
    backend_port=$(sed -nE 's/.*listening on [^ ]*:([0-9]+).*/\1/p' "$work/backend.log" | head -1)
    # The port itself answers (bash's /dev/tcp), not only the line.
    (exec 3<>"/dev/tcp/127.0.0.1/$backend_port") || fail "nothing accepts on port $backend_port"
}
stop_backend() {
    kill -TERM "$backend_pid"
    local rc=0
    wait "$backend_pid" || rc=$?
    backend_pid=""
    [ "$rc" -eq 0 ] || fail "the backend exited $rc on SIGTERM"
}

# The packaged settings as they are, on a free port instead of 50051 (an option on the command line overrides the
# file's, as the credentials drop-in relies on).
step "the service's command with the packaged /etc/fleetscope/backend.yaml"
start_backend --listen 127.0.0.1:0
stop_backend

# --- TLS and a token, end to end --------------------------------------------------------------------------------------
step "certificates for 127.0.0.1 and a token, made with openssl in $work"
pki="$work/pki"
mkdir -p "$pki"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=Fleetscope test CA" \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
    -keyout "$pki/server.key" -out "$pki/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$pki/server.ext"
openssl x509 -req -in "$pki/server.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 2 \
    -extfile "$pki/server.ext" -out "$pki/server.crt" 2>/dev/null
openssl rand -hex 32 >"$pki/token"
printf '# the consoles allowed in\n%s\n' "$(cat "$pki/token")" >"$pki/tokens"
# The service's user reads its copies, as it would the credentials systemd hands it.
chmod 0755 "$work" "$pki"
chmod 0644 "$pki"/server.* "$pki/tokens"
cat >"$pki/backend.yaml" <<EOF
listen: 127.0.0.1:0
source: simulator
gpus: 2048
tls-cert: $pki/server.crt
tls-key: $pki/server.key
token-file: $pki/tokens
EOF
chmod 0644 "$pki/backend.yaml"
# The unit's line with this file in place of /etc/fleetscope/backend.yaml.
for i in "${!service_command[@]}"; do
    if [ "${service_command[$i]}" = /etc/fleetscope/backend.yaml ]; then
        service_command[i]="$pki/backend.yaml"
    fi
done
step "backend: ${service_command[*]}"
start_backend
step "backend listening on 127.0.0.1:$backend_port with TLS and a token"

xvfb=(xvfb-run -a -s "-screen 0 1920x1080x24 -nolisten tcp")
console=(/usr/bin/fleetscope --backend "127.0.0.1:$backend_port" --ca "$pki/ca.crt" --size 1280x800 --no-animation)
# Without the token the backend must refuse the console: then the run below shows that the token is what let it in.
step "console without the token (must be refused)"
if timeout 60 "${xvfb[@]}" "${console[@]}" --screenshot "$work/refused.png" --screenshot-timeout 5 \
    >"$work/refused.log" 2>&1; then
    fail "the console drew a live frame without a token"
fi
grep -q 'no token' "$work/refused.log" || {
    cat "$work/refused.log" >&2
    fail "the console without a token failed, but not for want of the token"
}
step "console with the CA and the token: --screenshot"
timeout 120 "${xvfb[@]}" "${console[@]}" --token-file "$pki/token" --screenshot "$work/console.png" \
    >"$work/console.log" 2>&1 || {
    cat "$work/console.log" >&2
    fail "the installed console took no screenshot"
}
# A PNG of the window's size with something in it: a blank or black window compresses to a few KiB.
[ "$(head -c 8 "$work/console.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "console.png is no PNG"
read -r width height < <(od -An -tu1 -j16 -N8 "$work/console.png" |
    awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4, $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }')
size=$(stat -c %s "$work/console.png")
[ "$width" -ge 1280 ] && [ "$height" -ge 800 ] || fail "console.png is ${width}x${height}, not the window's size"
[ "$size" -gt 40000 ] || fail "console.png is only $size bytes: the map is missing"
step "console.png: ${width}x${height}, $((size / 1024)) KiB"
if [ -n "${FLEETSCOPE_PACKAGE_CHECK_KEEP:-}" ]; then
    cp "$work/console.png" "$FLEETSCOPE_PACKAGE_CHECK_KEEP"
fi
stop_backend

# --- The unit under systemd -------------------------------------------------------------------------------------------
# Where this machine lets root boot a container (CAP_SYS_ADMIN: CI's own machine does), the unit itself runs under
# systemd with its whole confinement and the credentials drop-in (packaging/check-under-systemd.sh).
cap_eff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
if [ "$(id -u)" -eq 0 ] && [ $((0x$cap_eff >> 21 & 1)) -eq 1 ]; then
    step "the installed unit under systemd (systemd-nspawn)"
    packaging/check-under-systemd.sh "$work/systemd" >"$work/systemd.log" 2>&1 || {
        cat "$work/systemd.log" >&2
        fail "the unit under systemd"
    }
    grep -E '^(ok|FAILED):' "$work/systemd.log" | sed 's/^/    /'
else
    step "skipped the unit under systemd: booting a container needs root with CAP_SYS_ADMIN"
fi

# --- Remove and purge -------------------------------------------------------------------------------------------------
step "apt-get remove, then purge"
apt_get remove fleetscope fleetscope-backend >/dev/null
[ ! -e /usr/bin/fleetscope ] && [ ! -e /usr/bin/fleetscope-backend ] || fail "remove left the programs"
[ -e /etc/fleetscope/backend.yaml ] || fail "remove took the conffile (only purge may)"
[ "$(known_packages)" = fleetscope-backend ] || fail "after remove dpkg knows: $(known_packages | tr '\n' ' ')"
purge_packages
[ -z "$(known_packages)" ] || fail "purge left $(known_packages | tr '\n' ' ')"
[ ! -e /etc/fleetscope ] || fail "purge left /etc/fleetscope"

step "packages built, installed, checked and removed in $(($(date +%s) - start)) s"
