#!/usr/bin/env python3
"""Kernodeck readiness check: does this Python really compute on the GPU?

Run it with the interpreter your program uses, before the real job:

    python diagnostic.py                                   # report what is there
    python diagnostic.py --expect-backend cuda --expect-gpus 2

It needs only the standard library and PyTorch. It prints one JSON report:
the interpreter (path, version), the framework and its version, the REAL
backend (`torch.version.cuda` or `torch.version.hip`: on ROCm, PyTorch
reuses the `torch.cuda` namespace, so that name proves nothing), the
devices seen with their memory, and a matrix product computed on every
device and compared with the CPU's result. It exits 0 when all is well and 1,
with the reasons in the report, when it would fall back to the CPU, sees
fewer GPUs than expected, or the backend is not the expected one; 2 when
PyTorch cannot be imported at all.

What a pass proves: this interpreter, in this environment, computes on these
GPUs with the backend named, and nothing silently fell back to the CPU. What
it does not prove: importing PyTorch proves no GPU computation (that is why
the check computes), and one simple matrix product does not validate every
extension, custom kernel, precision or memory size your model needs. Run
your own pilot on a small representative input next.
"""

import argparse
import errno
import glob
import json
import os
import platform
import sys

SIZE = 32  # the matrices' side: enough to exercise the device, quick everywhere
TOLERANCE = 1e-3
GPU_DEVICE_FILES = ("/dev/nvidia[0-9]*", "/dev/dri/renderD[0-9]*", "/dev/dri/card[0-9]*")
REFUSED = (errno.EACCES, errno.EPERM, errno.ENOENT)  # what the kernel answers an open it does not allow


def gather(torch) -> dict:
    """What this PyTorch build and its devices say about themselves, with one computation per device."""
    cuda_version = getattr(torch.version, "cuda", None)
    hip_version = getattr(torch.version, "hip", None)
    available = bool(torch.cuda.is_available())
    devices = []
    if available:
        torch.manual_seed(0)
        left, right = torch.randn(SIZE, SIZE), torch.randn(SIZE, SIZE)
        expected = left @ right
        if hasattr(torch.backends, "cuda"):
            torch.backends.cuda.matmul.allow_tf32 = False  # compare at full precision
        for index in range(torch.cuda.device_count()):
            devices.append(_device(torch, index, left, right, expected))
    return {
        "framework": {"name": "torch", "version": str(torch.__version__)},
        "build": {"cuda": cuda_version, "hip": hip_version},
        "gpu_available": available,
        "devices": devices,
    }


def _device(torch, index: int, left, right, expected) -> dict:
    properties = torch.cuda.get_device_properties(index)
    device = torch.device("cuda", index)
    entry = {"index": index, "name": properties.name, "memory_bytes": int(properties.total_memory)}
    try:
        product = left.to(device) @ right.to(device)
        entry["computed_on"] = product.device.type
        difference = float((product.cpu() - expected).abs().max())
        entry["max_difference"] = difference
        entry["matches_cpu"] = product.device.type == "cuda" and difference <= TOLERANCE
    except Exception as error:  # the device is listed but cannot compute: that is the finding
        entry.update(computed_on=None, matches_cpu=False, error=f"{type(error).__name__}: {error}")
    return entry


def device_files() -> dict:
    """Every GPU device file of the machine, split by whether the kernel lets this process open it."""
    found = {"opened": [], "refused": []}
    for path in sorted(path for pattern in GPU_DEVICE_FILES for path in glob.glob(pattern)):
        found["opened" if kernel_allows_open(path) else "refused"].append(path)
    return found


def kernel_allows_open(path: str) -> bool:
    """An open refused for permission (file ownership, a device cgroup) or absence is refused; one that reached
    the driver counts as allowed, even when the driver then fails it (busy, no device behind the file)."""
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        return error.errno not in REFUSED
    os.close(descriptor)
    return True


def backend_of(build: dict) -> str:
    """The backend this build really targets: `hip` set means ROCm, whatever the `cuda` namespace says."""
    if build.get("hip"):
        return "rocm"
    if build.get("cuda"):
        return "cuda"
    return "cpu"


def assess(
    facts: dict, expect_backend: str | None, expect_gpus: int | None, expect_devices: list[str] | None = None
) -> list[str]:
    """The reasons to refuse this environment; none means ready."""
    backend = backend_of(facts["build"])
    reasons = []
    if backend == "cpu":
        reasons.append("cpu_fallback: this PyTorch build has no GPU backend (CPU-only build)")
    elif not facts["gpu_available"]:
        reasons.append(f"cpu_fallback: PyTorch is built for {backend} but sees no usable GPU")
    if expect_backend and backend != "cpu" and backend != expect_backend:
        reasons.append(f"backend_mismatch: expected {expect_backend}, this PyTorch runs on {backend}")
    seen = len(facts["devices"])
    if expect_gpus is not None and seen < expect_gpus:
        reasons.append(f"fewer_gpus: expected {expect_gpus}, sees {seen}")
    if expect_gpus is not None and seen > expect_gpus:
        reasons.append(f"more_gpus: expected {expect_gpus}, sees {seen}")
    if expect_devices is not None:
        files = facts["device_files"]
        reasons += [
            f"foreign_gpu: {p} opens, not one of this environment's" for p in files["opened"] if p not in expect_devices
        ]
        reasons += [f"own_gpu_refused: the kernel refuses {p}" for p in expect_devices if p not in files["opened"]]
    for device in facts["devices"]:
        if not device.get("matches_cpu"):
            detail = (
                device.get("error")
                or f"computed on {device.get('computed_on')}, difference {device.get('max_difference')}"
            )
            reasons.append(f"compute_failed: device {device['index']} ({device['name']}): {detail}")
    return reasons


def report(facts: dict, reasons: list[str]) -> dict:
    return {
        "ok": not reasons,
        "reasons": reasons,
        "interpreter": {"path": sys.executable, "version": platform.python_version()},
        "framework": facts["framework"],
        "backend": {"name": backend_of(facts["build"]), "cuda": facts["build"]["cuda"], "hip": facts["build"]["hip"]},
        "devices": facts["devices"],
        **({"device_files": facts["device_files"]} if "device_files" in facts else {}),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Kernodeck readiness check (see the top of this file)")
    parser.add_argument("--expect-backend", choices=("cuda", "rocm"))
    parser.add_argument("--expect-gpus", type=int)
    parser.add_argument(
        "--expect-devices", type=lambda text: [p for p in text.split(",") if p], help="this environment's GPU files"
    )
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError as error:
        interpreter = {"path": sys.executable, "version": platform.python_version()}
        print(json.dumps({"ok": False, "reasons": [f"framework_missing: {error}"], "interpreter": interpreter}))
        return 2
    facts = gather(torch)
    if args.expect_devices is not None:
        facts["device_files"] = device_files()
    reasons = assess(facts, args.expect_backend, args.expect_gpus, args.expect_devices)
    print(json.dumps(report(facts, reasons), indent=2))
    return 1 if reasons else 0


if __name__ == "__main__":
    sys.exit(main())
