#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the release preset with Debian's hardening flags and the two .deb packages, fleetscope (the console) and
# fleetscope-backend (the server and its systemd unit), into build/release/packages/; checks them with lintian
# (packaging/README.md says why each remaining tag stays) and prints their sizes. Exits non-zero when lintian finds
# an error or a warning.
FLEETSCOPE_PRESET=release
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# Only packaging needs these, so they are installed here rather than by every scripts/test.sh (as fuzz.sh does):
#   dpkg-dev           dpkg-buildflags (the hardening flags) and dpkg-shlibdeps (Depends from the shared libraries)
#   file               CPack's DEB generator finds the ELF files it hands to dpkg-shlibdeps with it
#   librsvg2-bin       rsvg-convert renders the icon's PNG sizes from packaging/icons/fleetscope.svg
#   lintian            checks the packages against Debian policy
#   desktop-file-utils desktop-file-validate, run on the .desktop entry at build time
#   appstream          appstreamcli validate, run on the metainfo at build time
FLEETSCOPE_PACKAGES+=(dpkg-dev file librsvg2-bin lintian desktop-file-utils appstream)

install_missing_packages
cd "$FLEETSCOPE_ROOT"
start=$(date +%s)

# Debian's flags for a package (fortified functions, stack protector, full RELRO, bind now); the optimisation level
# stays the Release preset's, and no debug information is built since the packages ship stripped binaries.
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
cxxflags=()
for f in $(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CXXFLAGS); do
    case "$f" in -g | -O2) ;; *) cxxflags+=("$f") ;; esac
done
ldflags=$(dpkg-buildflags --get LDFLAGS)

# Configured every time (quick when nothing changed), so that the flags above always apply.
# The prefix is /usr, as in the packages: the backend's built-in configuration file is then
# /etc/fleetscope/backend.yaml.
cmake --preset release -DFLEETSCOPE_PACKAGING=ON -DFLEETSCOPE_BUILD_BENCH=OFF -DCMAKE_INSTALL_PREFIX=/usr \
    -DCMAKE_CXX_FLAGS="${cxxflags[*]}" -DCMAKE_EXE_LINKER_FLAGS="$ldflags"
cmake --build --preset release

out=build/release/packages
rm -rf "$out"
cpack --config build/release/CPackConfig.cmake -G DEB -B "$out"
rm -rf "$out/_CPack_Packages"
mapfile -t debs < <(ls "$out"/*.deb)
if [ ${#debs[@]} -ne 2 ]; then
    echo "package: expected 2 packages in $out, found ${#debs[@]}" >&2
    exit 1
fi

echo
echo "lintian:"
# One run that also shows the overridden tags (O:, each justified in packaging/README.md); it fails on E: or W:.
log="$out/lintian.log"
lintian --fail-on none --display-level '>=pedantic' --display-experimental --show-overrides "${debs[@]}" \
    >"$log" 2>&1 || {
    cat "$log" >&2
    echo "package: lintian did not run" >&2
    exit 1
}
sed -i '/^running with root privileges/d' "$log"
cat "$log"
rc=0
if grep -qE '^[EW]: ' "$log"; then
    echo "lintian: errors or warnings above" >&2
    rc=1
else
    echo "lintian: no errors or warnings; $(grep -c '^O: ' "$log") overridden," \
        "$(grep -cE '^[IPX]: ' "$log") info, pedantic or experimental"
fi

echo
echo "packages ($(($(date +%s) - start)) s):"
for deb in "${debs[@]}"; do
    installed=$(dpkg-deb -f "$deb" Installed-Size)
    printf '  %-52s %6s KiB (.deb)  %7s KiB installed\n' "$deb" "$(($(stat -c %s "$deb") / 1024))" "$installed"
done
exit "$rc"
