#!/usr/bin/env bash
# Builds Open Cluster Scheduler 9.1.4 from the unmodified upstream archive in ../shared/ocs/ (relative to
# the repository's root) and installs it into target/ocs/root, a cache inside the clone ($OCS_CACHE
# instead of target/ocs). A second run with
# the same archive does nothing. Build dependencies: see .ci/run. Prints the install root on success.
set -euo pipefail
cd "$(dirname "$0")/.."
archive="${OCS_ARCHIVE:-../shared/ocs/clusterscheduler-9.1.4.tar.xz}"
want=76bea72af3a907ac5476237c297d878d4dc1aa07730b021fffdb5355c8a983ca
out="${OCS_CACHE:-$PWD/target/ocs}"
jobs="${OCS_BUILD_JOBS:-2}"

[ -f "$archive" ] || { echo "build-ocs: $archive: not found (the OCS 9.1.4 source archive)" >&2; exit 2; }
if [ -f "$out/root/.built" ] && [ "$(cat "$out/root/.built")" = "$want" ]; then
    echo "$out/root"; exit 0
fi
have=$(sha256sum "$archive" | cut -d' ' -f1)
[ "$have" = "$want" ] || { echo "build-ocs: $archive: sha256 $have, expected $want" >&2; exit 2; }

rm -rf "$out/src" "$out/build" "$out/root"
mkdir -p "$out/src" "$out/build"
# The CMake files reach each other through the folder name "clusterscheduler": keep it.
tar -xJf "$archive" -C "$out/src"
src="$out/src/clusterscheduler"
# gcc 12: ptrdiff_t without <cstddef>.
sed -i '1i #include <cstddef>' "$src/source/clients/qquota/ocs_qquota_print.cc"

cd "$out/build"
# -Wno-error=restrict: gcc 12 reports a false -Wrestrict in the shepherd and the build forces -Werror.
nice -n 10 cmake "$src" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$out/root" \
    -DWITH_OS_3RDPARTY=ON -DWITH_JNI=OFF -DENABLE_LTO=OFF -DINSTALL_SGE_TEST=OFF -DWITH_QMAKE=OFF \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG -Wno-error=restrict" >"$out/cmake.log" 2>&1 \
    || { tail -30 "$out/cmake.log" >&2; exit 1; }
# Only what is installed: the daemons, clients and libraries under source/ (not the unit tests under
# test/, a fifth of the build, nor qmake), then the install rules without the "all" target.
nice -n 10 make -C source -j"$jobs" >"$out/make.log" 2>&1 || { grep -m5 -B2 -A8 'error' "$out/make.log" >&2; exit 1; }
cmake --install . >"$out/install.log" 2>&1 || { tail -30 "$out/install.log" >&2; exit 1; }
echo "$want" >"$out/root/.built"
echo "$out/root"
