"""Choosing where the search runs: the CPU (NumPy) or one or more GPUs (CuPy).

``-m`` forces the CPU, ``-g`` forces the GPU (unusable: :class:`DeviceError`, exit 3), neither
picks the GPU when CuPy imports and a device really computes, else the CPU with a notice.
"""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field

import numpy as np


class DeviceError(RuntimeError):
    """A forced GPU is unusable; the message says why and where CUDA was looked for."""


@dataclass
class Device:
    """Where the search runs and what the report says about it."""

    kind: str                      # "cpu" or "gpu"
    gpus: list = field(default_factory=list)  # [{"id", "name", "memory_gb"}]
    cupy_version: str | None = None
    cuda_version: str | None = None
    notice: str | None = None

    @property
    def xp(self):
        """The array module: numpy or cupy."""
        if self.kind == "gpu":
            import cupy
            return cupy
        return np

    def describe(self) -> dict:
        """Report fields for this device."""
        return {"kind": self.kind, "gpus": self.gpus, "cupy": self.cupy_version, "cuda": self.cuda_version}


def _cuda_locations() -> str:
    places = [os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME")] + sorted(glob.glob("/usr/local/cuda*"))
    found = [p for p in places if p and os.path.isdir(p)]
    return ", ".join(found) if found else "none of CUDA_PATH, CUDA_HOME, /usr/local/cuda*"


# Where the NVIDIA driver lists its GPUs, and the GPUs' device nodes (a container that is given
# GPUs has the nodes even where /proc/driver/nvidia is not mounted).
DRIVER_GPUS = "/proc/driver/nvidia/gpus/*"
GPU_DEVICE_NODES = "/dev/nvidia[0-9]*"


def gpu_count_hint(max_gpus: int | None = None) -> int:
    """How many GPUs a run will probably find, known without loading CUDA (a guess, used only to
    start the search processes of further GPUs early): ``CUDA_VISIBLE_DEVICES``'s entries when
    it is set, else the NVIDIA driver's GPUs (:data:`DRIVER_GPUS`), else the GPUs' device nodes
    (:data:`GPU_DEVICE_NODES`); at most ``max_gpus``."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        count = 0
        for entry in visible.split(","):  # CUDA stops at the first invalid entry
            entry = entry.strip()
            if not entry or entry.startswith("-"):
                break
            count += 1
    else:
        count = len(glob.glob(DRIVER_GPUS)) or len(glob.glob(GPU_DEVICE_NODES))
    return min(count, max_gpus) if max_gpus else count


def probe_gpu() -> Device:
    """Check that CuPy imports and every visible GPU computes; raises :class:`DeviceError` if not."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken install raising anything
        raise DeviceError(f"CuPy is not importable ({type(exc).__name__}: {exc}); install the "
                          f"'gpu-cu12' or 'gpu-cu13' extra. CUDA looked for in: {_cuda_locations()}") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        raise DeviceError(f"no usable CUDA driver or device ({exc}). CUDA looked for in: "
                          f"{_cuda_locations()}") from None
    if count == 0:
        raise DeviceError("CuPy found no CUDA device")
    gpus = []
    for i in range(count):
        try:
            with cupy.cuda.Device(i):
                x = cupy.arange(16, dtype=cupy.uint8)
                if int((x * 2).sum()) != 240:
                    raise RuntimeError("wrong result from a test kernel")
                props = cupy.cuda.runtime.getDeviceProperties(i)
                free, total = cupy.cuda.runtime.memGetInfo()
        except Exception as exc:
            raise DeviceError(f"GPU {i} does not compute ({type(exc).__name__}: {exc}); CUDA libraries "
                              f"(NVRTC, cuBLAS) may be missing. CUDA looked for in: {_cuda_locations()}") from None
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        gpus.append({"id": i, "name": name, "memory_gb": round(total / 2**30, 1),
                     "free_gb": round(free / 2**30, 1)})
    runtime = cupy.cuda.runtime.runtimeGetVersion()
    return Device("gpu", gpus, cupy.__version__, f"{runtime // 1000}.{runtime % 1000 // 10}")


def select_device(force_cpu: bool = False, force_gpu: bool = False, max_gpus: int | None = None) -> Device:
    """The device for this run (see the module docstring); ``max_gpus`` limits the GPUs used."""
    if force_cpu and force_gpu:
        raise ValueError("-m (CPU) and -g (GPU) exclude each other")
    if force_cpu:
        return Device("cpu")
    try:
        dev = probe_gpu()
    except DeviceError as exc:
        if force_gpu:
            raise
        return Device("cpu", notice=f"no usable GPU, running on the CPU: {exc}")
    if max_gpus:
        dev.gpus = dev.gpus[:max_gpus]
    return dev
