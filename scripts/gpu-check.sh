#!/usr/bin/env bash
# The CUDA path end to end on a machine with an NVIDIA GPU, in well under
# 8 minutes once built: the devices, 200 training updates of the paper-size
# T-shirt, a 300-frame rollout on the GPU, and one network step on the CPU
# and the GPU compared vertex by vertex. Prints step time and frames/s.
#
#   bash scripts/setup-cuda-build.sh      # once, on Debian 12
#   bash scripts/gpu-check.sh [OUT_DIR]   # default out/gpu-check
#
# Exit status 1 when the GPU is not used or the two devices disagree by more
# than f32 tolerance (1e-4 m on any vertex after one step).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/gpu-check}
mkdir -p "$out"

echo "== build"
cargo build --release --features cuda
senc=target/release/senc

echo "== devices"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv || {
    echo "no NVIDIA driver (nvidia-smi failed)" >&2
    exit 1
}

echo "== 200 training updates, paper-size T-shirt, cuda:0"
rm -rf "$out/train"
start=$(date +%s.%N)
$senc train --config configs/paper_tshirt.ron --steps 200 --out "$out/train" --device cuda:0 2>&1 | tee "$out/train.log"
end=$(date +%s.%N)
if grep -q "running on the CPU" "$out/train.log"; then
    echo "training fell back to the CPU" >&2
    exit 1
fi
python3 -c "print(f'training: {200 / ($end - $start):.2f} updates/s, {1000 * ($end - $start) / 200:.0f} ms per update (start-up included)')"

echo "== 300-frame rollout on cuda:0"
rm -rf "$out/gpu" "$out/cpu"
$senc rollout --checkpoint "$out/train/checkpoint" --motion 01_03 --frames 789:1089 --out "$out/gpu" --device cuda:0 | tee "$out/rollout.log"

echo "== one step on the CPU and on the GPU"
$senc rollout --checkpoint "$out/train/checkpoint" --motion 01_03 --frames 789:791 --out "$out/gpu1" --device cuda:0 > /dev/null
$senc rollout --checkpoint "$out/train/checkpoint" --motion 01_03 --frames 789:791 --out "$out/cpu1" --device cpu > /dev/null
python3 - "$out/cpu1/frame_00001.ply" "$out/gpu1/frame_00001.ply" <<'PY'
import sys
sys.path.insert(0, "scripts")
import check_ply  # the stdlib PLY reader of the tests
def points(path):
    data = open(path, "rb").read()
    fmt, elements, offset = check_ply.read_header(data)
    read = check_ply.read_binary if fmt == "binary_little_endian" else check_ply.read_ascii
    return [(r["x"], r["y"], r["z"]) for name, r in read(data, offset, elements) if name == "vertex"]
a, b = points(sys.argv[1]), points(sys.argv[2])
assert len(a) == len(b), (len(a), len(b))
worst = max(max(abs(p - q) for p, q in zip(u, v)) for u, v in zip(a, b))
print(f"one step, CPU vs GPU: largest coordinate difference {worst:.3e} m over {len(a)} vertices")
sys.exit(0 if worst <= 1e-4 else 1)
PY
