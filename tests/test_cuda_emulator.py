"""The CUDA emulator (tests/cuda_emulator.py) that runs the GPU kernels in CI: its barriers, warp
operations and atomics give CUDA's results, and what would hang or corrupt a launch on a GPU is an
error here."""
from __future__ import annotations

import numpy as np
import pytest

import cuda_emulator

pytestmark = pytest.mark.skipif(cuda_emulator.available() is not None, reason=cuda_emulator.available() or "")

_SOURCE = r"""
// Block sum by a shared-memory tree (barriers) and by warp shuffles; ballots and block votes.
extern "C" __global__ void sums(const int* v, long long* tree, long long* shuffled, unsigned* ballots,
                                int* votes) {
    __shared__ long long part[256];
    __shared__ long long warp_sums[8];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    part[t] = v[i];
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) part[t] += part[t + s];
        __syncthreads();
    }
    if (t == 0) tree[blockIdx.x] = part[0];
    long long x = v[i];
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
    if (t % 32 == 0) warp_sums[t / 32] = x;
    __syncthreads();
    if (t == 0) {
        long long total = 0;
        for (int k = 0; k < (int)blockDim.x / 32; ++k) total += warp_sums[k];
        shuffled[blockIdx.x] = total;
    }
    unsigned b = __ballot_sync(0xffffffffu, v[i] % 2);
    if (t % 32 == 0) ballots[i / 32] = b;
    int any = __syncthreads_or(v[i] == 7), count = __syncthreads_count(v[i] % 2);
    if (t == 0) { votes[2 * blockIdx.x] = any; votes[2 * blockIdx.x + 1] = count; }
}

// Warp maximum by xor shuffles, and a histogram by atomics.
extern "C" __global__ void max_hist(const int* v, int* maxima, int* hist, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int x = i < n ? v[i] : -1;
    for (int o = 16; o > 0; o >>= 1) x = max(x, __shfl_xor_sync(0xffffffffu, x, o));
    if (threadIdx.x % 32 == 0) maxima[i / 32] = x;
    if (i < n) atomicAdd(&hist[v[i] % 10], 1);
}

// Reads a neighbour's shared write without a barrier between them (a race on a GPU).
extern "C" __global__ void racy(const int* v, int* out) {
    __shared__ int s[256];
    int t = threadIdx.x;
    s[t] = v[t];
    out[t] = s[(t + 1) % blockDim.x];
}

// Lane 0 waits at the block's barrier while the rest of its warp waits for it in a shuffle: a hang.
extern "C" __global__ void divergent(int* out) {
    if (threadIdx.x == 0) __syncthreads();
    else out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (int)threadIdx.x, 1);
}

// Threads that return before a barrier do not take part in it (as on the hardware); a shuffle
// among the lanes its mask names.
extern "C" __global__ void early_return(int* out) {
    int t = threadIdx.x;
    if (t >= 40) return;
    if (t >= 1 && t < 4) out[t] = __shfl_sync(0x0000000eu, t * 10, 3);
    __syncthreads();
    if (t == 0) out[0] = __syncthreads_count(1);
    else __syncthreads_count(1);
}

// Each thread reads its right neighbour: the last one reads past the array.
extern "C" __global__ void past_the_end(const int* v, int* out, int n) {
    int t = threadIdx.x;
    if (t < n) out[t] = v[t + 1];
}

// Half the block at one kind of barrier, half at another.
extern "C" __global__ void mixed_barriers(int* out) {
    if (threadIdx.x < 32) __syncthreads();
    else out[0] = __syncthreads_or(1);
}

// A shuffle with a full mask after half the warp has returned.
extern "C" __global__ void ended_lanes(const int* v, int* out) {
    if (threadIdx.x >= 16) return;
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, v[threadIdx.x], 1);
}
"""


@pytest.fixture(scope="module", params=["asm", "ucontext"])
def module(request):
    """The test kernels, with fibers switched by assembly (x86-64) and by ucontext (what other
    machines use)."""
    if request.param == "asm":
        return cuda_emulator.Module(_SOURCE, "emulator-tests")
    return cuda_emulator.Module(_SOURCE, "emulator-tests-ucontext", defines=("EMU_UCONTEXT",))


def test_barriers_shuffles_ballots_and_votes_give_cudas_results(module):
    rng = np.random.default_rng(0)
    v = rng.integers(0, 100, 4 * 256).astype(np.int32)
    v[300] = 7
    tree, shuffled = np.zeros(4, np.int64), np.zeros(4, np.int64)
    ballots, votes = np.zeros(32, np.uint32), np.zeros(8, np.int32)
    module.get_function("sums")((4,), (256,), (v, tree, shuffled, ballots, votes))
    blocks = v.reshape(4, 256).astype(np.int64)
    assert tree.tolist() == blocks.sum(axis=1).tolist()
    assert shuffled.tolist() == blocks.sum(axis=1).tolist()
    odd = (v.reshape(32, 32) % 2).astype(np.uint64)
    assert ballots.tolist() == (odd << np.arange(32, dtype=np.uint64)).sum(axis=1).tolist()
    assert votes.reshape(4, 2)[:, 0].tolist() == [int((b == 7).any()) for b in blocks]
    assert votes.reshape(4, 2)[:, 1].tolist() == (blocks % 2).sum(axis=1).tolist()


def test_xor_shuffles_and_atomics_with_a_partial_last_block(module):
    rng = np.random.default_rng(1)
    n = 1000
    v = rng.integers(0, 1000, n).astype(np.int32)
    maxima, hist = np.zeros(32, np.int32), np.zeros(10, np.int32)
    module.get_function("max_hist")((4,), (256,), (v, maxima, hist, np.int64(n)))
    padded = np.concatenate([v, np.full(1024 - n, -1, np.int32)])
    assert maxima.tolist() == padded.reshape(32, 32).max(axis=1).tolist()
    assert hist.tolist() == np.bincount(v % 10, minlength=10).tolist()


def test_a_missing_barrier_shows_as_wrong_results(module):
    """Threads run in a shuffled order between barriers, so a race does not pass by luck."""
    v = np.arange(256, dtype=np.int32) + 1
    out = np.zeros(256, np.int32)
    module.get_function("racy")((1,), (256,), (v, out))
    assert not np.array_equal(out, np.roll(v, -1))


def test_returned_threads_and_masked_lanes_take_no_part(module):
    out = np.zeros(64, np.int32)
    module.get_function("early_return")((1,), (64,), (out,))
    assert out[:4].tolist() == [40, 30, 30, 30]


def test_what_would_hang_or_corrupt_a_gpu_launch_is_an_error(module):
    with pytest.raises(cuda_emulator.EmulatorError, match="different kinds"):
        module.get_function("mixed_barriers")((1,), (64,), (np.zeros(1, np.int32),))
    with pytest.raises(cuda_emulator.EmulatorError, match="deadlocks"):
        module.get_function("divergent")((1,), (32,), (np.zeros(32, np.int32),))
    with pytest.raises(cuda_emulator.EmulatorError, match="ended"):
        module.get_function("ended_lanes")((1,), (32,), (np.zeros(32, np.int32), np.zeros(32, np.int32)))
    with pytest.raises(cuda_emulator.EmulatorError, match="argument 0 accessed at element 32, outside its 32"):
        module.get_function("past_the_end")((1,), (32,), (np.zeros(32, np.int32), np.zeros(32, np.int32), np.int32(32)))
    # The same kernel within bounds, and on a view: the bounds are the view's, not its base's.
    base = np.arange(64, dtype=np.int32)
    out = np.zeros(32, np.int32)
    module.get_function("past_the_end")((1,), (32,), (base[:33], out, np.int32(32)))
    assert out.tolist() == list(range(1, 33))
    with pytest.raises(cuda_emulator.EmulatorError, match="outside its 32"):
        module.get_function("past_the_end")((1,), (32,), (base[:32], out, np.int32(32)))
    kernel = module.get_function("max_hist")
    v, maxima, hist = np.zeros(64, np.int32), np.zeros(2, np.int32), np.zeros(10, np.int32)
    # A Python int for a long long is what CuPy passes too; for an int it would shift every later
    # argument by four bytes.
    kernel((1,), (64,), (v, maxima, hist, 64))
    with pytest.raises(TypeError, match="int32 scalar"):
        kernel((1,), (64,), (v, maxima, hist, np.int32(64)))
    with pytest.raises(TypeError, match="an array of int64, the kernel reads int"):
        kernel((1,), (64,), (v.astype(np.int64), maxima, hist, np.int64(64)))
    with pytest.raises(TypeError, match="4 parameters"):
        kernel((1,), (64,), (v, maxima, hist))
    with pytest.raises(cuda_emulator.EmulatorError, match="threads per block"):
        kernel((1,), (2048,), (v, maxima, hist, np.int64(64)))


def test_cell_row_and_col_divide_exactly_for_every_cell_of_a_grid():
    """The kernels' division-free row and column of a cell (solvers.kernels.CELL_INDEX), compiled
    as the kernels use it: exact for every cell index below 1024 and width 1 to 64."""
    from solvers.kernels import CELL_INDEX

    module = cuda_emulator.Module(CELL_INDEX + r"""
extern "C" __global__ void rows_cols(int w, int* rows, int* cols) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    rows[k] = cell_row(k, w);
    cols[k] = cell_col(k, w);
}
""", "cell-index")
    k = np.arange(1024)
    for w in range(1, 65):
        rows, cols = np.zeros(1024, np.int32), np.zeros(1024, np.int32)
        module.get_function("rows_cols")((4,), (256,), (np.int32(w), rows, cols))
        assert rows.tolist() == (k // w).tolist(), w
        assert cols.tolist() == (k % w).tolist(), w
