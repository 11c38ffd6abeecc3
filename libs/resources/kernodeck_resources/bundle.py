"""The customer resources as the gateway serves them: the index, the diagnostic script, the pilot as a zip.

Each resource carries the version of this package, which moves with the project.
"""

import io
import zipfile
from functools import cache
from importlib import metadata, resources
from pathlib import PurePosixPath

PILOT_FOLDER = "kernodeck-pilot"  # the folder the zip unpacks into
_FIXED_TIME = (2026, 1, 1, 0, 0, 0)  # the same bytes for the same files: no build time inside
_LEFT_OUT = {"__pycache__", ".venv"}

DIAGNOSTIC_ABOUT = (
    "The readiness check Kernodeck runs on every node before handing it over, to run yourself with the"
    " interpreter your program uses. It reports the interpreter, the environment, PyTorch's real backend"
    " (CUDA or ROCm: on ROCm PyTorch answers through torch.cuda, so that name proves nothing), the devices,"
    " and a matrix product computed on each GPU and compared with the CPU's, as JSON; exit 0 ready, 1 not"
    " (with the reasons), 2 no PyTorch. A pass proves that this interpreter computes on those GPUs, with no"
    " silent fall back to the CPU. It does not prove more: importing PyTorch proves no GPU computation, and"
    " one simple computation does not validate every extension, kernel or precision your model uses: run"
    " your own pilot next."
)
PILOT_ABOUT = (
    "The CPU mini-project of the pilot guide, in the guide's layout (README.md, requirements-rebuild.txt,"
    " config/pilote.json, data/pilote/ with twelve documents, one invalid on purpose, src/, runs/): it"
    " classifies the documents, writes a summary naming each exactly once, checkpoints as it goes, and"
    " ships the resume test (stop in the middle, resume in a fresh process, same summary). Python 3.11+,"
    " standard library only."
)


def version() -> str:
    return metadata.version("kernodeck-resources")


def index(base_url: str) -> list[dict]:
    """What customers can download, each with its address under `base_url` and the project's version."""
    return [
        {
            "id": "diagnostic",
            "name": "Diagnostic (readiness check)",
            "description": DIAGNOSTIC_ABOUT,
            "url": f"{base_url}/diagnostic.py",
            "version": version(),
        },
        {
            "id": "pilot-project",
            "name": "CPU mini-project with its resume test",
            "description": PILOT_ABOUT,
            "url": f"{base_url}/pilot-project.zip",
            "version": version(),
        },
    ]


def diagnostic_script() -> bytes:
    return (resources.files("kernodeck_resources") / "diagnostic.py").read_bytes()


@cache
def pilot_zip() -> bytes:
    """The pilot folder as a zip unpacking into kernodeck-pilot/, files in order, scripts executable."""
    root = resources.files("kernodeck_resources") / "pilot"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for relative, data in sorted(_files(root, PurePosixPath())):
            info = zipfile.ZipInfo(f"{PILOT_FOLDER}/{relative}", date_time=_FIXED_TIME)
            info.external_attr = (0o755 if relative.suffix == ".py" else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return out.getvalue()


def _files(folder, relative: PurePosixPath):
    for entry in folder.iterdir():
        if entry.name in _LEFT_OUT:
            continue
        if entry.is_dir():
            yield from _files(entry, relative / entry.name)
        elif not relative.parts or relative.parts[0] != "runs" or entry.name == "README.md":
            yield relative / entry.name, entry.read_bytes()
