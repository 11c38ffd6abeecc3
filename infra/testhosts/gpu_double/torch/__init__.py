"""GPU DOUBLE, NOT PyTorch: a stand-in for the test hosts (see ../README.md).

It answers what the readiness check asks of PyTorch: the build's backend,
the devices (as many as the host's KD_DOUBLE_GPUS, narrowed by the
rental's CUDA_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES), and matrix products,
computed on the CPU in plain Python.
"""

import os
import random
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


def _visible():
    machine = int(os.environ.get("KD_DOUBLE_GPUS", "8"))
    listed = os.environ.get("HIP_VISIBLE_DEVICES" if _BACKEND == "rocm" else "CUDA_VISIBLE_DEVICES")
    if listed is None:
        return list(range(machine))
    return [int(i) for i in listed.split(",") if i.strip() and int(i) < machine]


cuda = SimpleNamespace(
    is_available=lambda: _MODE == "ok" and bool(_visible()),
    device_count=lambda: len(_visible()) if _MODE == "ok" else 0,
    get_device_properties=lambda i: SimpleNamespace(
        name=f"Kernodeck GPU double #{_visible()[i]}", total_memory=80 * 2**30
    ),
)
