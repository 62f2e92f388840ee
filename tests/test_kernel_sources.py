"""The CUDA sources of the GPU kernels compile, checked without a GPU: NVRTC (the runtime compiler
CuPy uses) is a plain library, shipped as the ``nvidia-cuda-nvrtc-cu12`` wheel of the dev extras.
A syntax or type error in a kernel would otherwise surface only on a GPU machine. Skipped (with
the reason) where the library cannot be found."""
from __future__ import annotations

import ctypes
import glob
import os

import pytest


def _nvrtc():
    """The NVRTC library, from the pip wheel or the system; None if there is none."""
    candidates = []
    try:
        import nvidia.cuda_nvrtc as pkg  # the wheel: a namespace package with lib/ inside

        for root in pkg.__path__:
            candidates += sorted(glob.glob(os.path.join(root, "lib", "libnvrtc.so*")))
    except ImportError:  # no wheel: look for a CUDA toolkit below
        pass
    candidates += sorted(glob.glob("/usr/local/cuda*/lib64/libnvrtc.so*")) + ["libnvrtc.so"]
    for path in candidates:
        if "builtins" in path or ".alt." in path:
            continue
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


NVRTC = _nvrtc()
pytestmark = pytest.mark.skipif(NVRTC is None, reason="NVRTC not found (pip install nvidia-cuda-nvrtc-cu12)")


def _compile(source: str, arch: str) -> tuple[int, str]:
    prog = ctypes.c_void_p()
    assert NVRTC.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernels.cu", 0, None, None) == 0
    opts = [b"-std=c++14", f"--gpu-architecture={arch}".encode()]
    result = NVRTC.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    NVRTC.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    NVRTC.nvrtcGetProgramLog(prog, log)
    NVRTC.nvrtcDestroyProgram(ctypes.byref(prog))
    return result, log.value.decode(errors="replace")


def _sources():
    from pipeline.search import kernels as search_kernels
    from solvers import fused, kernels

    return {"solvers.kernels": kernels.source(), "solvers.fused": fused._SOURCE,
            "pipeline.search.kernels": search_kernels.source()}


# compute_75: T4 (Kaggle's older GPUs); compute_89: L4 (Kaggle's 4-GPU machines); compute_90: H100/H200.
@pytest.mark.parametrize("arch", ["compute_75", "compute_89", "compute_90"])
@pytest.mark.parametrize("module", ["solvers.kernels", "solvers.fused", "pipeline.search.kernels"])
def test_cuda_sources_compile(module, arch):
    result, log = _compile(_sources()[module], arch)
    assert result == 0, f"{module} does not compile for {arch}:\n{log}"


def test_a_broken_source_is_caught():
    """The check can fail: a kernel with an undeclared name does not compile."""
    result, log = _compile('extern "C" __global__ void k(int* a) { a[0] = undeclared; }', "compute_75")
    assert result != 0 and "undeclared" in log
