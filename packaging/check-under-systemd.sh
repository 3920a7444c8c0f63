#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The installed fleetscope-backend.service under a real systemd, which CI's container cannot run: boots this machine's
# own root, behind a throw-away overlay, as a systemd-nspawn container, and there
#   1. starts the packaged unit with the packaged settings, checks that it serves, as a user of its own with no
#      capabilities, no new privileges and a system call filter, within its memory, task and descriptor limits, and
#      takes a console screenshot against it;
#   2. adds examples/credentials.conf with a root-only (0600) certificate, key and token file, serves 0.0.0.0:50051,
#      and checks that a console with the CA and the token draws the fleet and one without the token is refused;
#   3. stops it and checks that it ended cleanly.
# Nothing on this machine changes, and its network is not touched. Needs root with CAP_SYS_ADMIN, systemd-container, and both packages installed.
#   packaging/check-under-systemd.sh [OUTDIR]     (screenshots and the unit's journal are left in OUTDIR)
set -euo pipefail
out=$(realpath -m "${1:-build/release/check-under-systemd}")
for f in /usr/bin/fleetscope /usr/bin/fleetscope-backend /lib/systemd/system/fleetscope-backend.service; do
    [ -e "$f" ] || { echo "check-under-systemd: $f is missing; install both packages first" >&2; exit 2; }
done
command -v systemd-nspawn >/dev/null || { echo "check-under-systemd: needs systemd-container" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out"

root=$(mktemp -d /run/fleetscope-check.XXXXXX)
cleanup() {
    umount "$root/merged" 2>/dev/null || true
    umount "$root" 2>/dev/null || true
    rmdir "$root" 2>/dev/null || true
}
trap cleanup EXIT
mount -t tmpfs tmpfs "$root"
mkdir "$root/upper" "$root/work" "$root/merged"
mount -t overlay overlay -o "lowerdir=/,upperdir=$root/upper,workdir=$root/work" "$root/merged"
: >"$root/merged/etc/machine-id" # a machine id of its own, made at boot

cat >"$root/merged/etc/systemd/system/fleetscope-check.service" <<'EOF'
[Unit]
Description=Fleetscope: the installed unit under systemd
After=basic.target
[Service]
Type=oneshot
ExecStart=/out/check.sh
ExecStopPost=/bin/systemctl --no-block poweroff
EOF

cat >"$out/check.sh" <<'EOF'
#!/bin/bash
exec >/out/result.txt 2>&1
set -u
failed=0
ok() { echo "ok: $*"; }
bad() { echo "FAILED: $*"; failed=1; }
wait_port() {
    local deadline=$((SECONDS + 30))
    until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}
show() { systemctl show fleetscope-backend --value -p "$1"; }
xvfb=(xvfb-run -a -s "-screen 0 1920x1080x24 -nolisten tcp")
console=(fleetscope --backend 127.0.0.1:50051 --size 1280x800 --no-animation)

echo "== the packaged unit and settings"
systemctl start fleetscope-backend || bad "systemctl start"
wait_port 50051 && ok "serves 127.0.0.1:50051" || bad "nothing on 127.0.0.1:50051"
pid=$(show MainPID)
user=$(ps -o user= -p "$pid")
[ "$user" = fleetscope-backend ] && [ "$(stat -c %u /proc/"$pid")" -ne 0 ] && ok "runs as $user (dynamic uid $(stat -c %u /proc/"$pid"))" || bad "runs as '$user'"
grep -q '^CapEff:[[:space:]]*0000000000000000$' "/proc/$pid/status" && ok "no effective capabilities" || bad "capabilities"
grep -q '^CapBnd:[[:space:]]*0000000000000000$' "/proc/$pid/status" && ok "empty bounding set" || bad "bounding set"
grep -q '^NoNewPrivs:[[:space:]]*1$' "/proc/$pid/status" && ok "no new privileges" || bad "NoNewPrivs"
grep -q '^Seccomp:[[:space:]]*2$' "/proc/$pid/status" && ok "system call filter on" || bad "no seccomp filter"
# The resource limits (packaging/README.md, "Resources") as systemd applied them: the cgroup's and the process's own.
limits="$(show MemoryHigh) $(show MemoryMax) $(show TasksMax)"
[ "$limits" = "4294967296 6442450944 4096" ] && ok "MemoryHigh 4G, MemoryMax 6G, TasksMax 4096" || bad "limits: $limits"
grep -Eq '^Max open files +16384 +16384 ' "/proc/$pid/limits" && ok "16384 file descriptors" || bad "LimitNOFILE"
"${xvfb[@]}" "${console[@]}" --screenshot /out/plain.png && ok "console screenshot (plain, loopback)" || bad "console (plain)"
[ "$(show NRestarts)" = 0 ] && [ "$(show ActiveState)" = active ] && ok "still running, never restarted" || bad "it restarted or stopped"

echo "== examples/credentials.conf: TLS and a token from root-only files"
install -d -m 0700 /etc/fleetscope/tls
cd /etc/fleetscope/tls
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=check CA" \
    -keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
    -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >server.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext \
    -out server.crt 2>/dev/null
openssl rand -hex 32 >/etc/fleetscope/tokens
chmod 0600 server.key server.crt /etc/fleetscope/tokens
install -d /etc/systemd/system/fleetscope-backend.service.d
cp /usr/share/doc/fleetscope-backend/examples/credentials.conf /etc/systemd/system/fleetscope-backend.service.d/
sed -i 's/^listen: .*/listen: 0.0.0.0:50051/' /etc/fleetscope/backend.yaml
systemctl daemon-reload
systemctl restart fleetscope-backend || bad "systemctl restart with the credentials"
wait_port 50051 && ok "serves 0.0.0.0:50051 with TLS" || bad "nothing on port 50051 with the credentials"
"${xvfb[@]}" "${console[@]}" --ca /etc/fleetscope/tls/ca.crt --token-file /etc/fleetscope/tokens \
    --screenshot /out/tls.png && ok "console screenshot (CA and token)" || bad "console with CA and token"
if "${xvfb[@]}" "${console[@]}" --ca /etc/fleetscope/tls/ca.crt --screenshot /out/refused.png \
    --screenshot-timeout 5; then bad "a console without the token was let in"; else ok "console without the token refused"; fi

echo "== stop"
systemctl stop fleetscope-backend
[ "$(show Result)" = success ] && [ "$(show ExecMainStatus)" = 0 ] && ok "stopped cleanly" || bad "stop: $(show Result) $(show ExecMainStatus)"
journalctl -u fleetscope-backend --no-pager -o short-monotonic >/out/journal.txt
echo "result: $([ "$failed" -eq 0 ] && echo passed || echo FAILED)"
EOF
chmod 0755 "$out/check.sh"

echo "check-under-systemd: booting / (overlaid) in systemd-nspawn"
# A network of its own (loopback only), so that nothing here meets this machine's ports; basic.target, so that of
# this machine's own services only the check (and what the unit pulls in) starts.
timeout 300 systemd-nspawn --quiet --directory="$root/merged" --register=no --keep-unit --link-journal=no \
    --private-network --bind="$out:/out" --machine=fleetscope-check --boot -- \
    systemd.unit=basic.target systemd.wants=fleetscope-check.service >"$out/boot.log" 2>&1 || true
if [ ! -f "$out/result.txt" ]; then
    tail -20 "$out/boot.log" >&2
    echo "check-under-systemd: the container did not run the check" >&2
    exit 1
fi
cat "$out/result.txt"
grep -q '^result: passed$' "$out/result.txt"
