"""Run the CUDA kernels of ``solvers.kernels``, ``solvers.fused`` and ``pipeline.search.kernels`` on
the CPU, so that CI (which has no GPU) checks what they compute, not only that they compile.

Each CUDA source is compiled as C++ with g++ against a small prelude that supplies CUDA's
built-ins, and its kernels are launched through ctypes on NumPy arrays, with the same grid, block
and argument tuples that the wrappers pass to CuPy. The execution model:

* Blocks run one after another. Each thread of a block is a fiber (its own stack, switched by a
  few lines of assembly on x86-64, ``ucontext`` elsewhere) on one OS thread, so ``__shared__``
  variables (C++ ``static`` here) are shared by the block's threads and atomics need no locks.
* A thread runs until it reaches a barrier (``__syncthreads*``: the block's live threads; the
  warp operations ``__shfl*_sync``, ``__ballot_sync``, ``__any_sync``, ``__all_sync``,
  ``__syncwarp``: its warp's live threads) or ends. Threads that have ended do not take part, as on
  the hardware. Between barriers threads run in a shuffled order (seeded per launch), so a read of
  another thread's write that lacks a barrier gives varying results instead of passing by luck.
* Errors the hardware would turn into hangs or garbage are reported as exceptions: a deadlock
  (threads waiting at barriers that the others never reach, such as a lane at ``__syncthreads``
  that a warp operation's mask names), threads of a block at different kinds of
  ``__syncthreads``, a warp operation whose mask names a lane that has ended, and an argument
  whose type differs from the kernel's parameter (CuPy would pass the wrong number of bytes:
  every later argument shifts).
* A kernel's pointer parameters are checked pointers: an index outside the bytes of the array
  passed for it is an error (naming the argument, element, block and thread). Pointers derived
  from them and passed on to helpers are plain pointers, no longer checked.

Not modelled: warp-synchronous code without ``*_sync`` calls, shared-memory bounds, and timing.
Only the CUDA features the kernels use are supplied; anything else fails to compile.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import re
import shutil
import subprocess
import tempfile
import threading

import numpy as np

try:
    from numpy.lib.array_utils import byte_bounds
except ImportError:  # NumPy < 2
    from numpy import byte_bounds

_PRELUDE = r"""
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <climits>
#include <cmath>
#include <random>
#include <vector>
#include <algorithm>
#include <type_traits>
#include <functional>
// Fibers switch by a few lines of assembly on x86-64, by ucontext elsewhere (or with EMU_UCONTEXT).
#if defined(__x86_64__) && !defined(EMU_UCONTEXT)
#define EMU_ASM_SWITCH 1
#else
#define EMU_ASM_SWITCH 0
#include <ucontext.h>
#endif

#define __global__
#define __device__ inline
#define __host__
#define __forceinline__
#define __noinline__
#define __restrict__
#define __shared__ static
#define __constant__ static const

struct uint3 { unsigned x, y, z; };
struct dim3 { unsigned x, y, z; };
struct alignas(8) int2 { int x, y; };
static const int warpSize = 32;

namespace emu {

enum State { RUNNABLE, AT_BLOCK, AT_WARP, DONE };
enum Op { SYNC, SYNC_OR, SYNC_AND, SYNC_COUNT, WARP_SYNC, SHFL, SHFL_DOWN, SHFL_UP, SHFL_XOR,
          BALLOT, ANY, ALL };

struct Fiber {
    void* sp;
    uint3 tid;
    int linear, state, op, lane_arg, width;
    unsigned mask;
    unsigned long long value, result;
#if !EMU_ASM_SWITCH
    ucontext_t ctx;
#endif
};

static Fiber* current = nullptr;
static void* scheduler_sp = nullptr;
#if !EMU_ASM_SWITCH
static ucontext_t scheduler_ctx;
#endif
static std::function<void()>* body = nullptr;
static std::vector<Fiber> fibers;
static std::vector<char*> stacks;
static const size_t STACK = 256 * 1024;
static char error[512];

}  // namespace emu

static uint3 blockIdx;
static dim3 blockDim, gridDim;
#define threadIdx (emu::current->tid)

namespace emu {

static char bounds_error[512];

// A kernel's pointer parameter: indexing checks the address against the bytes of the array that
// was passed (an access outside them is reported after the launch; it reads or writes a dummy).
// Converts to a plain pointer for helpers and comparisons, unchecked from there on.
template <class T> struct ptr {
    T* p; T* base; const char* lo; const char* hi; int arg;
    T& operator[](long long k) const { return at(p + k); }
    T& operator*() const { return at(p); }
    ptr operator+(long long k) const { return ptr{p + k, base, lo, hi, arg}; }
    ptr operator-(long long k) const { return ptr{p - k, base, lo, hi, arg}; }
    operator T*() const { return p; }
    T& at(T* q) const {
        if ((const char*)q < lo || (const char*)(q + 1) > hi) {
            if (!bounds_error[0])
                snprintf(bounds_error, sizeof bounds_error,
                         "argument %d accessed at element %lld, outside its %lld elements (block %u, thread %d)",
                         arg, (long long)(q - base), (long long)((hi - lo) / (long long)sizeof(T)), blockIdx.x,
                         current->linear);
            static typename std::remove_const<T>::type dummy;
            return dummy;
        }
        return *q;
    }
};

}  // namespace emu

#if EMU_ASM_SWITCH
extern "C" void emu_switch(void** save_sp, void* load_sp);
asm(R"(
.text
.p2align 4
.type emu_switch,@function
emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
.size emu_switch, .-emu_switch
)");
#endif

namespace emu {

static void to_scheduler() {
#if EMU_ASM_SWITCH
    emu_switch(&current->sp, scheduler_sp);
#else
    swapcontext(&current->ctx, &scheduler_ctx);
#endif
}

static void fiber_main() {
    (*body)();
    current->state = DONE;
    to_scheduler();
    __builtin_unreachable();
}

static void start_fiber(Fiber& f, char* stack) {
#if EMU_ASM_SWITCH
    uintptr_t top = ((uintptr_t)(stack + STACK)) & ~(uintptr_t)15;
    void** sp = (void**)top;
    *--sp = nullptr;                    // keeps the stack aligned as at a call
    *--sp = (void*)&fiber_main;         // where emu_switch's ret lands
    for (int k = 0; k < 6; ++k) *--sp = nullptr;  // r15 .. rbp
    f.sp = sp;
#else
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = stack;
    f.ctx.uc_stack.ss_size = STACK;
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, fiber_main, 0);
#endif
}

static void resume(Fiber& f) {
    current = &f;
#if EMU_ASM_SWITCH
    emu_switch(&scheduler_sp, f.sp);
#else
    swapcontext(&scheduler_ctx, &f.ctx);
#endif
}

static unsigned long long wait(int state, int op, unsigned long long value, unsigned mask = 0xffffffffu,
                               int lane_arg = 0, int width = 32) {
    Fiber* f = current;
    f->state = state; f->op = op; f->value = value; f->mask = mask; f->lane_arg = lane_arg; f->width = width;
    to_scheduler();
    return f->result;
}

// Releases the block's threads waiting at a barrier once every live thread is at one.
static bool release_block(int n) {
    int waiting = 0, live = 0, op = -1;
    unsigned long long any = 0, all = 1, count = 0;
    for (int k = 0; k < n; ++k) {
        Fiber& f = fibers[k];
        if (f.state == DONE) continue;
        ++live;
        if (f.state != AT_BLOCK) continue;
        ++waiting;
        if (op >= 0 && f.op != op) {
            snprintf(error, sizeof error, "threads of block %u wait at different kinds of __syncthreads", blockIdx.x);
            return false;
        }
        op = f.op; any |= f.value != 0; all &= f.value != 0; count += f.value != 0;
    }
    if (live == 0 || waiting < live) return false;
    for (int k = 0; k < n; ++k) {
        Fiber& f = fibers[k];
        if (f.state != AT_BLOCK) continue;
        f.result = op == SYNC_OR ? any : op == SYNC_AND ? all : count;
        f.state = RUNNABLE;
    }
    return true;
}

// Releases the lanes of a warp that wait at one warp operation once every lane its mask names is
// there, computing its results. (Lanes outside the mask may be elsewhere, as on the hardware.)
static bool release_warp(int first, int n) {
    int op = -1;
    unsigned mask = 0, waiting = 0, ended = 0;
    for (int k = first; k < first + 32; ++k) {
        if (k >= n || fibers[k].state == DONE) { ended |= 1u << (k - first); continue; }
        Fiber& f = fibers[k];
        if (f.state != AT_WARP) continue;
        if (op >= 0 && (f.op != op || f.mask != mask)) {
            snprintf(error, sizeof error, "lanes of a warp of block %u wait at different warp operations", blockIdx.x);
            return false;
        }
        op = f.op; mask = f.mask; waiting |= 1u << (k - first);
    }
    if (op < 0) return false;
    if (waiting & ~mask) {
        snprintf(error, sizeof error, "a warp operation of block %u runs on a lane its mask leaves out", blockIdx.x);
        return false;
    }
    if (mask & ended) {
        snprintf(error, sizeof error,
                 "a warp operation of block %u names lanes that have ended (mask %08x, ended %08x)",
                 blockIdx.x, mask, ended);
        return false;
    }
    if (waiting != mask) return false;
    unsigned ballot = 0;
    for (int k = first; k < first + 32; ++k)
        if (((waiting >> (k - first)) & 1) && fibers[k].value) ballot |= 1u << (k - first);
    for (int k = first; k < first + 32; ++k) {
        if (!((waiting >> (k - first)) & 1)) continue;
        Fiber& f = fibers[k];
        int lane = k - first, w = f.width, base = lane / w * w, src = lane;
        switch (f.op) {
            case SHFL: src = base + ((f.lane_arg % w) + w) % w; break;
            case SHFL_DOWN: src = lane % w + f.lane_arg < w ? lane + f.lane_arg : lane; break;
            case SHFL_UP: src = lane % w - f.lane_arg >= 0 ? lane - f.lane_arg : lane; break;
            case SHFL_XOR: src = (lane ^ f.lane_arg) < base + w ? lane ^ f.lane_arg : lane; break;
            default: break;
        }
        if (f.op == SHFL || f.op == SHFL_DOWN || f.op == SHFL_UP || f.op == SHFL_XOR) {
            if (!((waiting >> src) & 1)) {
                snprintf(error, sizeof error, "a shuffle of block %u reads a lane outside its mask", blockIdx.x);
                return false;
            }
            f.result = fibers[first + src].value;
        } else if (f.op == BALLOT) {
            f.result = ballot;
        } else if (f.op == ANY) {
            f.result = ballot != 0;
        } else if (f.op == ALL) {
            f.result = ballot == mask;
        } else {
            f.result = 0;
        }
    }
    for (int k = first; k < first + 32; ++k)
        if ((waiting >> (k - first)) & 1) fibers[k].state = RUNNABLE;
    return true;
}

static const char* run_block(int n, std::mt19937& rng, std::vector<int>& order) {
    for (int k = 0; k < n; ++k) {
        Fiber& f = fibers[k];
        f.linear = k;
        f.tid = uint3{(unsigned)(k % blockDim.x), (unsigned)(k / blockDim.x % blockDim.y),
                      (unsigned)(k / (blockDim.x * blockDim.y))};
        f.state = RUNNABLE;
        start_fiber(f, stacks[k]);
    }
    while (true) {
        std::shuffle(order.begin(), order.end(), rng);
        for (int k : order)
            if (fibers[k].state == RUNNABLE) resume(fibers[k]);
        bool released = false, done = true;
        for (int first = 0; first < n; first += 32) released |= release_warp(first, n);
        if (error[0]) return error;
        if (!released) released = release_block(n);
        if (error[0]) return error;
        for (int k = 0; k < n; ++k) done &= fibers[k].state == DONE;
        if (done) return nullptr;
        if (!released) {
            snprintf(error, sizeof error,
                     "block %u deadlocks: its threads wait at barriers that not all live threads reach "
                     "(a __syncthreads or warp operation in divergent code)", blockIdx.x);
            return error;
        }
    }
}

static const char* launch(dim3 grid, dim3 block, unsigned seed, std::function<void()> kernel) {
    error[0] = 0;
    bounds_error[0] = 0;
    int n = (int)(block.x * block.y * block.z);
    if (n < 1 || n > 1024) {
        snprintf(error, sizeof error, "%d threads per block (CUDA allows 1 to 1024)", n);
        return error;
    }
    if (grid.x < 1 || grid.y < 1 || grid.z < 1 || grid.y > 65535 || grid.z > 65535) {
        snprintf(error, sizeof error, "grid %u x %u x %u is not a valid CUDA grid", grid.x, grid.y, grid.z);
        return error;
    }
    if ((int)fibers.size() < n) fibers.resize(n);
    while ((int)stacks.size() < n) stacks.push_back((char*)malloc(STACK));
    std::vector<int> order(n);
    for (int k = 0; k < n; ++k) order[k] = k;
    std::mt19937 rng(seed);
    body = &kernel;
    blockDim = block; gridDim = grid;
    for (unsigned z = 0; z < grid.z; ++z)
        for (unsigned y = 0; y < grid.y; ++y)
            for (unsigned x = 0; x < grid.x; ++x) {
                blockIdx = uint3{x, y, z};
                const char* e = run_block(n, rng, order);
                if (e) return e;
            }
    return bounds_error[0] ? bounds_error : nullptr;
}

template <class T> unsigned long long bits(T v) {
    unsigned long long b = 0; memcpy(&b, &v, sizeof(T)); return b;
}
template <class T> T unbits(unsigned long long b) {
    T v; memcpy(&v, &b, sizeof(T)); return v;
}

}  // namespace emu

static inline void __syncthreads() { emu::wait(emu::AT_BLOCK, emu::SYNC, 0); }
static inline int __syncthreads_or(int p) { return (int)emu::wait(emu::AT_BLOCK, emu::SYNC_OR, p != 0); }
static inline int __syncthreads_and(int p) { return (int)emu::wait(emu::AT_BLOCK, emu::SYNC_AND, p != 0); }
static inline int __syncthreads_count(int p) { return (int)emu::wait(emu::AT_BLOCK, emu::SYNC_COUNT, p != 0); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { emu::wait(emu::AT_WARP, emu::WARP_SYNC, 0, mask); }
static inline unsigned __ballot_sync(unsigned mask, int p) { return (unsigned)emu::wait(emu::AT_WARP, emu::BALLOT, p != 0, mask); }
static inline int __any_sync(unsigned mask, int p) { return (int)emu::wait(emu::AT_WARP, emu::ANY, p != 0, mask); }
static inline int __all_sync(unsigned mask, int p) { return (int)emu::wait(emu::AT_WARP, emu::ALL, p != 0, mask); }
template <class T> T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
    return emu::unbits<T>(emu::wait(emu::AT_WARP, emu::SHFL, emu::bits(v), mask, src, width)); }
template <class T> T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = 32) {
    return emu::unbits<T>(emu::wait(emu::AT_WARP, emu::SHFL_DOWN, emu::bits(v), mask, (int)d, width)); }
template <class T> T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = 32) {
    return emu::unbits<T>(emu::wait(emu::AT_WARP, emu::SHFL_UP, emu::bits(v), mask, (int)d, width)); }
template <class T> T __shfl_xor_sync(unsigned mask, T v, int m, int width = 32) {
    return emu::unbits<T>(emu::wait(emu::AT_WARP, emu::SHFL_XOR, emu::bits(v), mask, m, width)); }

// One OS thread runs every fiber: atomics are plain read-modify-writes.
template <class T, class U> T atomicAdd(T* p, U v) { T old = *p; *p = old + (T)v; return old; }
template <class T, class U> T atomicSub(T* p, U v) { T old = *p; *p = old - (T)v; return old; }
template <class T, class U> T atomicMin(T* p, U v) { T old = *p; if ((T)v < old) *p = (T)v; return old; }
template <class T, class U> T atomicMax(T* p, U v) { T old = *p; if ((T)v > old) *p = (T)v; return old; }
template <class T, class U> T atomicOr(T* p, U v) { T old = *p; *p = old | (T)v; return old; }
template <class T, class U> T atomicAnd(T* p, U v) { T old = *p; *p = old & (T)v; return old; }
template <class T, class U> T atomicExch(T* p, U v) { T old = *p; *p = (T)v; return old; }
template <class T, class U, class V> T atomicCAS(T* p, U cmp, V v) { T old = *p; if (old == (T)cmp) *p = (T)v; return old; }

template <class A, class B> inline typename std::common_type<A, B>::type min(A a, B b) { return b < a ? b : a; }
template <class A, class B> inline typename std::common_type<A, B>::type max(A a, B b) { return a < b ? b : a; }
static inline int __popc(unsigned v) { return __builtin_popcount(v); }
static inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
static inline int __ffs(int v) { return __builtin_ffs(v); }
static inline int __ffsll(long long v) { return __builtin_ffsll(v); }
static inline int __clz(int v) { return v ? __builtin_clz((unsigned)v) : 32; }
static inline int __clzll(long long v) { return v ? __builtin_clzll((unsigned long long)v) : 64; }
template <class T> T __ldg(const T* p) { return *p; }
"""

# C parameter types and the NumPy dtypes CuPy would pass for them.
_C_TYPES = {
    "bool": np.bool_, "char": np.int8, "signed char": np.int8, "unsigned char": np.uint8,
    "short": np.int16, "unsigned short": np.uint16, "int": np.int32, "unsigned int": np.uint32,
    "unsigned": np.uint32, "long long": np.int64, "long long int": np.int64,
    "unsigned long long": np.uint64, "unsigned long long int": np.uint64, "float": np.float32,
    "double": np.float64, "int8_t": np.int8, "uint8_t": np.uint8, "int32_t": np.int32,
    "uint32_t": np.uint32, "int64_t": np.int64, "uint64_t": np.uint64,
}
# CuPy ElementwiseKernel type names and their C types.
_EW_TYPES = {"bool": "bool", "int8": "signed char", "uint8": "unsigned char", "int16": "short",
             "uint16": "unsigned short", "int32": "int", "uint32": "unsigned int", "int64": "long long",
             "uint64": "unsigned long long", "float32": "float", "float64": "double"}

_KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(([^)]*)\)', re.S)
_LOCK = threading.Lock()


class EmulatorError(RuntimeError):
    """A launch the hardware would hang on or compute garbage from (see the module's docstring)."""


def available() -> str | None:
    """None when kernels can be emulated here, else the reason they cannot."""
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        return "no C++ compiler (g++) to build the CUDA emulator"
    if platform.system() != "Linux":
        return f"the CUDA emulator runs on Linux only, not {platform.system()}"
    return None


def _param(decl: str) -> tuple[str, bool]:
    """(base C type, is a pointer) of a kernel parameter declaration such as ``const long long* h``."""
    decl = decl.replace("__restrict__", " ")
    name = re.search(r"(\w+)\s*$", decl)
    if name is None:
        raise ValueError(f"cannot read kernel parameter {decl!r}")
    ctype = decl[:name.start()].strip()
    pointer = ctype.endswith("*")
    base = " ".join(ctype.rstrip("*").replace("const", " ").split())
    if base not in _C_TYPES:
        raise ValueError(f"kernel parameter type {ctype!r} is not supported by the emulator")
    return ctype, pointer


def _checked_signature(match) -> str:
    """A kernel's signature with its pointer parameters as bounds-checked ``emu::ptr``."""
    decls = []
    for decl in (p for p in match.group(2).split(",") if p.strip()):
        ctype, pointer = _param(decl)
        name = re.search(r"(\w+)\s*$", decl).group(1)
        decls.append(f"emu::ptr<{ctype[:-1].strip()}> {name}" if pointer else decl.strip())
    return f'extern "C" __global__ void {match.group(1)}({", ".join(decls)})'


def _compile(code: str, tag: str, defines: tuple = ()) -> ctypes.CDLL:
    """Build ``code`` into a shared library (cached by its text) and load it."""
    cxx = os.environ.get("CXX", "g++")
    flags = ["-O1", "-std=c++17", "-shared", "-fPIC", "-fvisibility=hidden", "-fno-strict-aliasing", "-w"]
    flags += [f"-D{d}" for d in defines]
    digest = hashlib.sha256((cxx + " ".join(flags) + code).encode()).hexdigest()[:20]
    folder = os.path.join(tempfile.gettempdir(), f"arcbatt-cuda-emulator-{os.getuid()}")
    os.makedirs(folder, exist_ok=True)
    lib = os.path.join(folder, f"{tag}-{digest}.so")
    with _LOCK:
        if not os.path.exists(lib):
            src = lib[:-3] + ".cpp"
            with open(src, "w") as f:
                f.write(code)
            tmp = f"{lib}.{os.getpid()}.tmp"
            done = subprocess.run([cxx, *flags, src, "-o", tmp], capture_output=True, text=True)
            if done.returncode:
                raise RuntimeError(f"the CUDA emulator could not compile {tag}:\n{done.stderr[-4000:]}")
            os.replace(tmp, lib)
        return ctypes.CDLL(lib)


class Module:
    """A CUDA source compiled for the CPU; ``get_function(name)`` as ``cupy.RawModule`` has it."""

    def __init__(self, source: str, tag: str = "kernels", defines: tuple = ()):
        self.params = {name: [_param(p) for p in args.split(",") if p.strip()]
                       for name, args in _KERNEL.findall(source)}
        if not self.params:
            raise ValueError("no extern \"C\" __global__ kernels in the source")
        wrappers = []
        for name, params in self.params.items():
            args = []
            for k, (ctype, pointer) in enumerate(params):
                if pointer:
                    elem = ctype[:-1].strip()
                    args.append(f"emu::ptr<{elem}>{{*({elem}**)a[{k}], *({elem}**)a[{k}], "
                                f"(const char*)b[{2 * k}], (const char*)b[{2 * k + 1}], {k}}}")
                else:
                    args.append(f"*(std::add_pointer_t<{ctype}>)a[{k}]")
            wrappers.append(
                f'extern "C" __attribute__((visibility("default"))) const char* emu_launch_{name}('
                f"unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned seed, "
                f"void** a, const long long* b) {{ return emu::launch(dim3{{gx, gy, gz}}, dim3{{bx, by, bz}}, "
                f"seed, [&] {{ {name}({', '.join(args)}); }}); }}")
        self.lib = _compile(_PRELUDE + _KERNEL.sub(_checked_signature, source) + "\n" + "\n".join(wrappers), tag,
                            defines)
        self.launches = 0
        self.launches_by_kernel = {name: 0 for name in self.params}

    def get_function(self, name: str) -> "Kernel":
        """The kernel ``name`` as a callable ``(grid, block, args)``."""
        if name not in self.params:
            raise KeyError(f"no kernel {name!r} in the source")
        return Kernel(self, name)


class Kernel:
    """One emulated kernel; called like ``cupy.RawKernel``: ``kernel(grid, block, args)``."""

    def __init__(self, module: Module, name: str):
        self.module, self.name = module, name
        self.fn = getattr(module.lib, f"emu_launch_{name}")
        self.fn.restype = ctypes.c_char_p

    def __call__(self, grid, block, args, shared_mem: int = 0):
        params = self.module.params[self.name]
        if len(args) != len(params):
            raise TypeError(f"{self.name}: {len(args)} arguments for {len(params)} parameters")
        slots = [self._slot(k, ctype, pointer, a) for k, ((ctype, pointer), a) in enumerate(zip(params, args))]
        argv = (ctypes.c_void_p * len(slots))(*[ctypes.addressof(s) for s in slots])
        # Each pointer argument's bytes, [low, high): accesses outside them are errors.
        bounds = (ctypes.c_longlong * (2 * len(args)))()
        for k, a in enumerate(args):
            if isinstance(a, np.ndarray):
                bounds[2 * k], bounds[2 * k + 1] = byte_bounds(a)
        dims = [int(v) for v in tuple(grid) + (1,) * (3 - len(grid))]
        dims += [int(v) for v in tuple(block) + (1,) * (3 - len(block))]
        self.module.launches += 1
        self.module.launches_by_kernel[self.name] += 1
        seed = (self.module.launches * 2654435761) & 0xFFFFFFFF
        with _LOCK:
            error = self.fn(*dims, seed, argv, bounds)
        if error:
            raise EmulatorError(f"{self.name}: {error.decode()}")

    def _slot(self, k: int, ctype: str, pointer: bool, value):
        where = f"{self.name} argument {k} ({ctype})"
        base = " ".join(ctype.rstrip("*").replace("const", " ").split())
        if pointer:
            if isinstance(value, np.ndarray):
                if value.dtype != _C_TYPES[base]:
                    raise TypeError(f"{where}: an array of {value.dtype}, the kernel reads {base}")
                return ctypes.c_void_p(value.ctypes.data)
            # A null pointer: CuPy passes a Python int or an 8-byte integer scalar as 8 bytes.
            if isinstance(value, (int, np.int64, np.uint64)) and not isinstance(value, bool) and int(value) == 0:
                return ctypes.c_void_p(0)
            raise TypeError(f"{where}: expected an array, got {type(value).__name__}")
        if isinstance(value, np.ndarray) or not isinstance(value, (np.generic, int, float, bool)):
            raise TypeError(f"{where}: expected a scalar, got {type(value).__name__}")
        # CuPy passes Python scalars as 64-bit (bool as bool): the same rule catches the same bugs.
        scalar = np.asarray(value) if isinstance(value, np.generic) else np.asarray(
            value, dtype=np.bool_ if isinstance(value, bool) else np.int64 if isinstance(value, int) else np.float64)
        if scalar.dtype != _C_TYPES[base]:
            raise TypeError(f"{where}: a {scalar.dtype} scalar; CuPy would pass {scalar.dtype.itemsize} bytes "
                            f"for a {np.dtype(_C_TYPES[base]).itemsize}-byte parameter")
        return ctypes.create_string_buffer(scalar.tobytes(), scalar.dtype.itemsize)


class ElementwiseKernel:
    """``cupy.ElementwiseKernel`` for inputs and outputs of fixed types (no ``raw``, no type
    placeholders), element by element over same-shaped arrays; outputs are allocated."""

    def __init__(self, in_params: str, out_params: str, body: str, name: str, preamble: str = ""):
        self.inputs = [self._decl(p) for p in in_params.split(",") if p.strip()]
        self.outputs = [self._decl(p) for p in out_params.split(",") if p.strip()]
        args = ", ".join([f"const {_EW_TYPES[t]}* {n}_" for t, n in self.inputs]
                         + [f"{_EW_TYPES[t]}* {n}_" for t, n in self.outputs])
        binds = " ".join([f"{_EW_TYPES[t]} {n} = {n}_[i];" for t, n in self.inputs]
                         + [f"{_EW_TYPES[t]}& {n} = {n}_[i];" for t, n in self.outputs])
        code = (_PRELUDE + preamble + f'\nextern "C" __attribute__((visibility("default"))) void emu_{name}('
                f"long long n, {args}) {{ for (long long i = 0; i < n; ++i) {{ {binds} {body}; }} }}\n")
        self.fn = getattr(_compile(code, name), f"emu_{name}")
        self.fn.restype = None

    @staticmethod
    def _decl(param: str) -> tuple[str, str]:
        parts = param.split()
        if len(parts) != 2 or parts[0] not in _EW_TYPES:
            raise ValueError(f"elementwise parameter {param!r} is not supported by the emulator")
        return parts[0], parts[1]

    def __call__(self, *arrays):
        if len(arrays) != len(self.inputs):
            raise TypeError(f"{len(arrays)} inputs for {len(self.inputs)} parameters")
        ins = [np.ascontiguousarray(a, dtype=t) for a, (t, _) in zip(arrays, self.inputs)]
        shape = np.broadcast_shapes(*(a.shape for a in ins))
        ins = [np.ascontiguousarray(np.broadcast_to(a, shape)) for a in ins]
        outs = [np.empty(shape, dtype=t) for t, _ in self.outputs]
        size = int(np.prod(shape))
        self.fn(ctypes.c_longlong(size), *[ctypes.c_void_p(a.ctypes.data) for a in ins + outs])
        return outs[0] if len(outs) == 1 else tuple(outs)


_MODULES: dict[str, Module] = {}


def launch_counts() -> dict[str, int]:
    """Launches so far of each kernel of the installed modules (``module.kernel`` -> count)."""
    return {f"{tag}.{name}": count for tag, m in _MODULES.items() for name, count in m.launches_by_kernel.items()}


def install(monkeypatch) -> None:
    """Make ``solvers.kernels``, ``solvers.fused`` and ``pipeline.search.kernels`` launch their kernels
    on the CPU through this emulator, on NumPy arrays (``kernels.enabled(numpy)`` becomes true;
    ``ARCBATT_NO_KERNELS`` still switches them off), for the duration of a test (``monkeypatch``:
    pytest's fixture)."""
    from pipeline.search import kernels as search_kernels
    from solvers import fused, kernels

    if "kernels" not in _MODULES:
        _MODULES["kernels"] = Module(kernels.source(), "kernels")
        _MODULES["fused"] = Module(fused._SOURCE, "fused")
        _MODULES["search_kernels"] = Module(search_kernels.source(), "search_kernels")

    def elementwise_of(module, preamble: str = ""):
        made = {}

        def elementwise(name: str):
            if name not in made:
                params, out, body = module._ELEMENTWISE[name]
                made[name] = ElementwiseKernel(params, out, body, "arcbatt_" + name, preamble=preamble)
            return made[name]
        return elementwise

    monkeypatch.setattr(kernels, "enabled", lambda xp: os.environ.get("ARCBATT_NO_KERNELS", "") in ("", "0"))
    monkeypatch.setattr(kernels, "_kernel", _MODULES["kernels"].get_function)
    monkeypatch.setattr(fused, "_kernel", _MODULES["fused"].get_function)
    monkeypatch.setattr(search_kernels, "_kernel", _MODULES["search_kernels"].get_function)
    monkeypatch.setattr(kernels, "_elementwise", elementwise_of(kernels))
    monkeypatch.setattr(search_kernels, "_elementwise", elementwise_of(search_kernels, search_kernels._SPLITMIX))
