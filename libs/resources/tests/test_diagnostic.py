"""The readiness check: its judgement of CUDA and ROCm builds' answers, and the real CPU build of PyTorch."""

import json
import subprocess
import sys
from importlib import resources

import pytest
from kernodeck_resources.diagnostic import assess, backend_of

SCRIPT = resources.files("kernodeck_resources") / "diagnostic.py"


def device(index, matches=True):
    return {"index": index, "name": "GPU", "memory_bytes": 80 << 30, "computed_on": "cuda", "matches_cpu": matches}


def facts(cuda=None, hip=None, available=True, devices=2):
    return {
        "framework": {"name": "torch", "version": "2.13.0"},
        "build": {"cuda": cuda, "hip": hip},
        "gpu_available": available,
        "devices": [device(i) for i in range(devices)] if available else [],
    }


def test_a_cuda_build_with_its_gpus_is_ready():
    assert assess(facts(cuda="12.8"), "cuda", 2) == []


def test_a_rocm_build_is_rocm_though_it_answers_through_torch_cuda():
    rocm = facts(cuda=None, hip="6.4.43484")
    assert backend_of(rocm["build"]) == "rocm"
    assert assess(rocm, "rocm", 2) == []
    assert assess(rocm, "cuda", 2)[0].startswith("backend_mismatch")


def test_a_cuda_build_on_a_rocm_model_is_refused():
    assert assess(facts(cuda="12.8"), "rocm", 2)[0].startswith("backend_mismatch")


def test_a_gpu_build_that_sees_no_gpu_falls_back_to_the_cpu():
    reasons = assess(facts(cuda="12.8", available=False), "cuda", 1)
    assert reasons[0].startswith("cpu_fallback")


@pytest.mark.parametrize(("seen", "refused"), [(1, "fewer_gpus"), (2, None), (3, "more_gpus")])
def test_other_than_the_allocated_gpus_is_refused(seen, refused):
    reasons = assess(facts(cuda="12.8", devices=seen), "cuda", 2)
    assert [r.split(":")[0] for r in reasons] == ([refused] if refused else [])


def on_a_shared_machine(opened, refused):
    return {**facts(cuda="12.8"), "device_files": {"opened": opened, "refused": refused}}


def test_its_own_gpu_files_opening_and_no_other_is_ready():
    mine = ["/dev/nvidia2", "/dev/nvidia3"]
    seen = on_a_shared_machine(mine, ["/dev/nvidia0", "/dev/nvidia1"])
    assert assess(seen, "cuda", 2, mine) == []


def test_another_gpu_file_that_opens_is_refused_whatever_pytorch_sees():
    mine = ["/dev/nvidia2", "/dev/nvidia3"]
    seen = on_a_shared_machine(["/dev/dri/card0", *mine, "/dev/nvidia5"], ["/dev/nvidia4"])
    assert assess(seen, "cuda", 2, mine) == [
        "foreign_gpu: /dev/dri/card0 opens, not one of this environment's",
        "foreign_gpu: /dev/nvidia5 opens, not one of this environment's",
    ]


def test_an_own_gpu_file_the_kernel_refuses_is_refused():
    seen = on_a_shared_machine(["/dev/nvidia2"], ["/dev/nvidia3"])
    assert assess(seen, "cuda", 2, ["/dev/nvidia2", "/dev/nvidia3"]) == [
        "own_gpu_refused: the kernel refuses /dev/nvidia3"
    ]


def test_a_device_whose_result_differs_from_the_cpu_is_refused():
    broken = facts(cuda="12.8")
    broken["devices"][1]["matches_cpu"] = False
    assert assess(broken, "cuda", 2)[0].startswith("compute_failed: device 1")


def test_the_real_cpu_build_of_pytorch_is_refused_as_a_cpu_fallback():
    pytest.importorskip("torch")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--expect-backend", "cuda", "--expect-gpus", "1"], capture_output=True, text=True
    )
    report = json.loads(done.stdout)
    assert done.returncode == 1
    assert report["ok"] is False
    assert report["backend"] == {"name": "cpu", "cuda": None, "hip": None}
    assert report["reasons"][0].startswith("cpu_fallback")
    assert report["interpreter"]["path"] == sys.executable
    assert report["framework"]["version"].startswith("2.13.0")


def test_without_pytorch_it_says_so_and_exits_2(tmp_path):
    done = subprocess.run([sys.executable, "-S", "-I", str(SCRIPT)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2
    assert json.loads(done.stdout)["reasons"][0].startswith("framework_missing")
