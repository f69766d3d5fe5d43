#!/usr/bin/env bash
# Installs h5loom into a scratch prefix, then builds the quick starts against it
# twice: with find_package(h5loom) and with pkg-config + mpicc (mpif90 for the
# Fortran one), and runs them.
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
# Fortran: find_package in a project that enables Fortran, and pkg-config h5loom-fortran.
cmake -S "$src/tests/install_consumer/fortran" -B "$work/cmake-f" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DQUICKSTART_F="$src/examples/fortran/quickstart.F90" > "$work/configure-f.log"
cmake --build "$work/cmake-f" > "$work/build-f.log"
"$work/cmake-f/consumer_f" "$work/f.nc"
mpif90 "$src/examples/fortran/quickstart.F90" $(pkg-config --cflags --libs h5loom-fortran) -o "$work/pc_f"
"$work/pc_f" "$work/g.nc"
echo "install-consumer: find_package(h5loom) and pkg-config h5loom, h5loom-fortran all work"
