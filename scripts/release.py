"""Cut a release: set the version, commit, tag vX.Y.Z and move the major tag vX.

    python scripts/release.py 0.2.0            # in a clean checkout of main
    git push origin main v0.2.0 && git push --force origin v0   # printed at the end; never run here

The tags are what the CI recipes (docs/ci.md) pin: pre-commit's `rev: v0.2.0` and the GitHub Action's
`uses: gpulint/gpulint@v0` (a major tag that moves to each release, as actions do) or `@v0.2.0`.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
FILES = {
    "pyproject.toml": re.compile(r'(?m)^version = "([^"]+)"$'),
    "gpulint/__init__.py": re.compile(r'(?m)^__version__ = "([^"]+)"$'),
}


def git(*args: str, root: Path) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def set_version(root: Path, version: str) -> list[str]:
    """Write ``version`` into every file that carries it; the files that changed."""
    changed = []
    for name, pattern in FILES.items():
        path = root / name
        text = path.read_text(encoding="utf-8")
        found = pattern.search(text)
        if found is None:
            raise SystemExit(f"release: {name}: no version line matching {pattern.pattern}")
        if found.group(1) != version:
            path.write_text(text[: found.start(1)] + version + text[found.end(1) :], encoding="utf-8")
            changed.append(name)
    return changed


def release(root: Path, version: str) -> list[str]:
    """Tag ``version`` (committing the version bump first if needed); the push commands to run."""
    match = VERSION.fullmatch(version)
    if match is None:
        raise SystemExit(f"release: {version!r} is not MAJOR.MINOR.PATCH")
    if git("status", "--porcelain", "--untracked-files=no", root=root):
        raise SystemExit("release: the working tree has uncommitted changes; commit or drop them first")
    tag, major = f"v{version}", f"v{match.group(1)}"
    if git("tag", "--list", tag, root=root):
        raise SystemExit(f"release: {tag} exists already")
    changed = set_version(root, version)
    if changed:
        git("add", *changed, root=root)
        git("commit", "-q", "-m", f"Release {version}", root=root)
    git("tag", "-a", tag, "-m", f"gpulint {version}", root=root)
    git("tag", "-f", "-a", major, "-m", f"gpulint {version} (latest {major}.x)", f"{tag}^{{commit}}", root=root)
    branch = git("rev-parse", "--abbrev-ref", "HEAD", root=root)
    return [f"git push origin {branch} {tag}", f"git push --force origin {major}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("version", help="MAJOR.MINOR.PATCH, e.g. 0.2.0")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to release (default: this one)")
    args = parser.parse_args()
    pushes = release(args.root, args.version)
    print(f"Tagged v{args.version}. Publish it with:", *pushes, sep="\n  ")


if __name__ == "__main__":
    sys.exit(main())
