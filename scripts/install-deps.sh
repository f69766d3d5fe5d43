#!/usr/bin/env bash
# Installs the Debian packages h5loom needs, only if some are missing
# (apt-get update once, then apt-get install). Safe to run repeatedly.
# HDF5 is not among them: scripts/build-hdf5.sh builds 1.14.5 (docs/building.md).
set -euo pipefail

packages=(
  build-essential cmake ninja-build make git pkg-config ccache
  python3 python3-venv python3-pip python3-dev
  openmpi-bin libopenmpi-dev
  dpkg-dev zlib1g-dev  # HDF5 1.14.5 from Debian's source package (scripts/build-hdf5.sh)
  libgtest-dev nlohmann-json3-dev libcli11-dev libisal-dev libzstd-dev zlib1g-dev libblosc-dev libcurl4-openssl-dev
  netcdf-bin  # ncdump and ncgen: netCDF-C reads the netCDF layer's files (tests)
  gfortran  # the Fortran module (src/fortran) and its tests
  chromium chromium-driver
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} system packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
