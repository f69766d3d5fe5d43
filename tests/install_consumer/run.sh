#!/usr/bin/env bash
# Installs h5loom into a scratch prefix, then builds the quick starts against it
# twice: with find_package(h5loom) and with pkg-config + mpicc, and runs them.
set -euo pipefail
src=$1 build=$2
work=$build/install-consumer
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$src/tests/install_consumer" -B "$work/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DQUICKSTART_C="$src/examples/quickstart.c" -DQUICKSTART_CPP="$src/examples/quickstart.cpp" > "$work/configure.log"
cmake --build "$work/cmake" > "$work/build.log"
export LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$work/cmake/consumer_c" "$work/a.h5"
"$work/cmake/consumer_cpp" "$work/b.h5"
export PKG_CONFIG_PATH="$(dirname "$(find "$work/prefix" -name h5loom.pc)")"
mpicc -std=c99 "$src/examples/quickstart.c" $(pkg-config --cflags --libs h5loom) -o "$work/pc_c"
"$work/pc_c" "$work/c.h5"
echo "install-consumer: find_package(h5loom) and pkg-config h5loom both work"
