"""GPU DOUBLE, NOT PyTorch: a stand-in for the test hosts (see ../README.md).

It answers what the readiness check asks of PyTorch: the build's backend,
the devices, and matrix products, computed on the CPU in plain Python.

Its devices are found as the real driver finds them: the host's per-GPU
device files (`/dev/nvidia0`... on CUDA, `/dev/dri/renderD128`... on ROCm)
that this process can open, once it can open the control device
(`/dev/nvidiactl`, `/dev/kfd`), numbered from 0 in that order; a device whose
file the kernel refuses to open is not enumerated. Then CUDA_VISIBLE_DEVICES
(HIP_VISIBLE_DEVICES on ROCm) narrows that list, never widens it.
"""

import errno
import glob
import os
import random
import re
from types import SimpleNamespace

_MODE = os.environ.get("KD_DOUBLE_MODE", "ok")
_BACKEND = os.environ.get("KD_DOUBLE_BACKEND", "cuda")
__version__ = "2.13.0+kernodeck.gpu-double"
version = SimpleNamespace(cuda="12.8" if _BACKEND == "cuda" else None, hip="6.4.0" if _BACKEND == "rocm" else None)
backends = SimpleNamespace(cuda=SimpleNamespace(matmul=SimpleNamespace(allow_tf32=True)))
_random = random.Random(0)


class device:
    def __init__(self, kind, index=None):
        self.type, self.index = kind, index


class Tensor:
    def __init__(self, rows, where=None):
        self.rows, self.device = rows, where or device("cpu")

    def to(self, where):
        return Tensor(self.rows, where)

    def cpu(self):
        return Tensor(self.rows)

    def __matmul__(self, other):
        columns = list(zip(*other.rows, strict=True))
        return Tensor(
            [[sum(a * b for a, b in zip(row, col, strict=True)) for col in columns] for row in self.rows], self.device
        )

    def __sub__(self, other):
        return Tensor(
            [[a - b for a, b in zip(r, s, strict=True)] for r, s in zip(self.rows, other.rows, strict=True)],
            self.device,
        )

    def abs(self):
        return Tensor([[abs(a) for a in row] for row in self.rows], self.device)

    def max(self):
        return max(max(row) for row in self.rows)


def manual_seed(seed):
    _random.seed(seed)


def randn(rows, columns):
    return Tensor([[_random.gauss(0, 1) for _ in range(columns)] for _ in range(rows)])


def _kernel_lets_open(path):
    """No driver is behind the test hosts' device nodes: an open the kernel permits reaches the missing driver
    and fails with ENXIO, which stands for the real driver's success here."""
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CLOEXEC))
    except OSError as error:
        return error.errno in (errno.ENXIO, errno.ENODEV)
    return True


def _enumerated():
    if _BACKEND == "rocm":
        control, pattern = "/dev/kfd", "/dev/dri/renderD[0-9]*"
    else:
        control, pattern = "/dev/nvidiactl", "/dev/nvidia[0-9]*"
    if not _kernel_lets_open(control):
        return []
    files = sorted(glob.glob(pattern), key=lambda path: int(re.search(r"(\d+)$", path).group(1)))
    return [path for path in files if _kernel_lets_open(path)]


def _visible():
    enumerated = _enumerated()
    listed = os.environ.get("HIP_VISIBLE_DEVICES" if _BACKEND == "rocm" else "CUDA_VISIBLE_DEVICES")
    if listed is None:
        return enumerated
    wanted = [int(i) for i in listed.split(",") if i.strip().isdigit()]
    return [enumerated[i] for i in wanted if i < len(enumerated)]


cuda = SimpleNamespace(
    is_available=lambda: _MODE == "ok" and bool(_visible()),
    device_count=lambda: len(_visible()) if _MODE == "ok" else 0,
    get_device_properties=lambda i: SimpleNamespace(
        name=f"Kernodeck GPU double ({os.path.basename(_visible()[i])})", total_memory=80 * 2**30
    ),
)
