#!/usr/bin/env bash
# Builds HDF5 1.14.5 (parallel, over the system's Open MPI) once per machine,
# from Debian trixie's source package, into a prefix outside the repository:
#   ${H5LOOM_HDF5_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/h5loom/hdf5-1.14.5}
# and reuses it after (docs/building.md). Run by `make deps`; safe to rerun.
#
#   scripts/build-hdf5.sh            build unless the prefix is complete
#   scripts/build-hdf5.sh --prefix   print the prefix and exit
#   H5LOOM_HDF5_JOBS=N               build jobs (default: nproc)
#
# The prefix holds libhdf5 (+ HL), its headers, the tools (h5dump, h5ls, ...,
# h5pcc), CMake and pkg-config files, and HDF5's API test programs
# (bin/h5_api_test, bin/h5_api_test_parallel). Atomic: the build runs in a
# temporary directory, installs into PREFIX.tmp, which is renamed to PREFIX,
# and the stamp file is written last; a failed run leaves no PREFIX behind.
set -euo pipefail

HDF5_VERSION=1.14.5
# Bump when the build recipe below changes: an existing prefix with another
# recipe number is rebuilt.
RECIPE=1
DEFAULT_PREFIX="${XDG_CACHE_HOME:-$HOME/.cache}/h5loom/hdf5-$HDF5_VERSION"
PREFIX="${H5LOOM_HDF5_PREFIX:-$DEFAULT_PREFIX}"
STAMP_NAME=.h5loom-hdf5-stamp
STAMP_TEXT="hdf5 $HDF5_VERSION recipe $RECIPE"

if [ "${1:-}" = "--prefix" ]; then
  echo "$PREFIX"
  exit 0
fi

say() { echo "build-hdf5: $*"; }

if [ -f "$PREFIX/$STAMP_NAME" ] && [ "$(head -n1 "$PREFIX/$STAMP_NAME")" = "$STAMP_TEXT" ]; then
  say "HDF5 $HDF5_VERSION present in $PREFIX"
  exit 0
fi

JOBS="${H5LOOM_HDF5_JOBS:-$(nproc 2>/dev/null || echo 2)}"
case "$PREFIX" in /*) ;; *) PREFIX="$PWD/$PREFIX" ;; esac
mkdir -p "$(dirname "$PREFIX")"
work="$(mktemp -d "${TMPDIR:-/tmp}/h5loom-hdf5.XXXXXX")"
staging="$PREFIX.tmp"
cleanup() { rm -rf "$work" "$staging"; }
trap cleanup EXIT
rm -rf "$staging"
start=$(date +%s)

# 1. Source: Debian trixie's hdf5 source package, through a private apt
#    configuration (the system's sources and lists are not touched).
say "building HDF5 $HDF5_VERSION into $PREFIX (one time; about 3 min on 2 cores, $JOBS jobs)"
mirror="$(sed -n 's/^URIs:[[:space:]]*\(http[^ ]*\/debian\)[[:space:]]*$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)"
mirror="${H5LOOM_DEBIAN_MIRROR:-${mirror:-http://deb.debian.org/debian}}"
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/src"
echo "deb-src $mirror trixie main" > "$work/apt/sources.list"
APT=(apt-get -q -o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
     -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache"
     -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Sandbox::User=root)
say "fetching the source package hdf5/trixie from $mirror"
"${APT[@]}" update > "$work/apt-update.log" 2>&1 || { cat "$work/apt-update.log"; exit 1; }
(cd "$work/src" && "${APT[@]}" source hdf5/trixie > "$work/apt-source.log" 2>&1) \
  || { cat "$work/apt-source.log"; exit 1; }
srcdir="$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'hdf5-*' | head -n1)"
if [ -z "$srcdir" ] || ! grep -q "H5_VERS_INFO.*version: $HDF5_VERSION\b" "$srcdir/src/H5public.h"; then
  say "FAILED: trixie's hdf5 source package is not HDF5 $HDF5_VERSION:"; ls "$work/src"; exit 1
fi
say "source: $(basename "$work"/src/*.dsc)"

# 2. Configure and build: CMake + Ninja, shared, parallel (mpicc), HL, tools,
#    zlib, HDF5's API tests; no Fortran, C++ or Java.
say "configuring and building (log: $work/build.log)"
{
  CC=mpicc cmake -S "$srcdir" -B "$work/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=mpicc \
    -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_RPATH="$PREFIX/lib" \
    -DHDF5_ENABLE_PARALLEL=ON -DBUILD_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF \
    -DHDF5_BUILD_FORTRAN=OFF -DHDF5_BUILD_CPP_LIB=OFF -DHDF5_BUILD_JAVA=OFF \
    -DHDF5_BUILD_EXAMPLES=OFF -DHDF5_BUILD_HL_LIB=ON -DHDF5_BUILD_TOOLS=ON \
    -DBUILD_TESTING=ON -DHDF5_TEST_API=ON -DHDF5_TEST_API_INSTALL=ON \
    -DHDF5_TEST_SERIAL=OFF -DHDF5_TEST_PARALLEL=OFF -DHDF5_TEST_TOOLS=OFF \
    -DHDF5_TEST_EXAMPLES=OFF -DHDF5_TEST_SWMR=OFF -DHDF5_TEST_FORTRAN=OFF -DHDF5_TEST_CPP=OFF \
    -DHDF5_TEST_JAVA=OFF -DHDF5_ENABLE_Z_LIB_SUPPORT=ON -DHDF5_ENABLE_SZIP_SUPPORT=OFF
  cmake --build "$work/build" -j "$JOBS"
} > "$work/build.log" 2>&1 || { tail -n 60 "$work/build.log"; say "FAILED (nothing installed)"; exit 1; }

# 3. Install into PREFIX.tmp, add the API test programs if CMake did not, check, rename.
cmake --install "$work/build" --prefix "$staging" > "$work/install.log" 2>&1 \
  || { tail -n 30 "$work/install.log"; say "FAILED at install (nothing installed)"; exit 1; }
for t in h5_api_test h5_api_test_parallel; do
  if [ ! -x "$staging/bin/$t" ]; then
    cp "$work/build/bin/$t" "$staging/bin/$t"
  fi
done
for f in lib/libhdf5.so lib/libhdf5_hl.so include/H5VLconnector.h bin/h5dump bin/h5ls bin/h5pcc \
         bin/h5_api_test bin/h5_api_test_parallel; do
  [ -e "$staging/$f" ] || { say "FAILED: $f missing after install"; exit 1; }
done
if [ -e "$PREFIX" ]; then
  say "replacing $PREFIX (incomplete, or built by another recipe)"
  rm -rf "$PREFIX"
fi
mv "$staging" "$PREFIX"
{ echo "$STAMP_TEXT"; echo "source $(basename "$work"/src/*.dsc)"; echo "built $(date -u +%FT%TZ) on $(uname -n)"; } \
  > "$PREFIX/$STAMP_NAME"
say "done in $(( $(date +%s) - start )) s: HDF5 $HDF5_VERSION in $PREFIX"
