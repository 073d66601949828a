#!/usr/bin/env bash
# Prepares a Debian 12 (bookworm) x86_64 machine to build senc with
# `--features cuda` without network access at build time.
#
# burn-cuda 0.22 → cubecl-cuda → cubecl-llvm, whose build dependency
# tracel-llvm-bundler 23.1.0-4 downloads a prebuilt LLVM 23 into
# $XDG_DATA_HOME (~/.local/share)/tracel/tracel-llvm-23.1.0-4 unless that
# directory holds an LLVM prefix and the sentinel file .tracel-llvm-installed.
# Debian's security suite packages LLVM 22, which the CUDA path builds and
# links against; so this script
#   1. installs llvm-22-dev, libpolly-22-dev, libzstd-dev, libz3-dev;
#   2. points the bundler's cache directory at the LLVM 22 prefix and
#      creates the sentinel there;
#   3. links liblibz3.so to the system's libz3.so (llvm-sys asks the linker
#      for -llibz3).
# Idempotent: a second run changes nothing and says so.
#
#   bash scripts/setup-cuda-build.sh
#   cargo build --release --features cuda
set -euo pipefail

LLVM_MAJOR=22
BUNDLE=tracel-llvm-23.1.0-4
PACKAGES="llvm-${LLVM_MAJOR}-dev libpolly-${LLVM_MAJOR}-dev libzstd-dev libz3-dev"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# 1. Packages.
if dpkg -s $PACKAGES >/dev/null 2>&1; then
    echo "packages: $PACKAGES already installed"
else
    echo "packages: installing $PACKAGES"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PACKAGES
fi
prefix=$(llvm-config-${LLVM_MAJOR} --prefix)

# 2. The bundler's cache directory → the LLVM prefix, with its sentinel.
cache_root="${XDG_DATA_HOME:-$HOME/.local/share}/tracel"
cache="$cache_root/$BUNDLE"
mkdir -p "$cache_root"
if [ -L "$cache" ] && [ "$(readlink -f "$cache")" = "$(readlink -f "$prefix")" ]; then
    echo "bundler cache: $cache already points at $prefix"
elif [ -e "$cache" ]; then
    echo "bundler cache: $cache exists and is not a link to $prefix; move it away and run again" >&2
    exit 1
else
    ln -s "$prefix" "$cache"
    echo "bundler cache: linked $cache → $prefix"
fi
if [ -e "$cache/.tracel-llvm-installed" ]; then
    echo "sentinel: present"
else
    as_root touch "$cache/.tracel-llvm-installed"
    echo "sentinel: created $cache/.tracel-llvm-installed"
fi

# 3. -llibz3.
z3=$(ls /usr/lib/x86_64-linux-gnu/libz3.so 2>/dev/null || true)
if [ -z "$z3" ]; then
    echo "libz3.so not found after installing libz3-dev" >&2
    exit 1
fi
link=/usr/lib/x86_64-linux-gnu/liblibz3.so
if [ -L "$link" ] || [ -e "$link" ]; then
    echo "linker: $link present"
else
    as_root ln -s "$z3" "$link"
    echo "linker: linked $link → $z3"
fi
echo "ready: cargo build --release --features cuda"
