"""Render deploy/gpulint.yaml, the plain manifests for those who do not use Helm, from deploy/chart.

    python scripts/render_deploy.py [--helm PATH]

The chart is the source; tests/integration/test_chart.py fails when the committed file differs from a fresh render.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHART = REPO / "deploy" / "chart"
OUTPUT = REPO / "deploy" / "gpulint.yaml"
NAMESPACE = "gpulint-system"
HEADER = f"""\
# gpulint admission webhook, rendered from deploy/chart with its default values by
# scripts/render_deploy.py (do not edit: change the chart and render again). Needs cert-manager.
#   kubectl apply --server-side -f deploy/gpulint.yaml
apiVersion: v1
kind: Namespace
metadata:
  name: {NAMESPACE}
"""


def render(helm: str) -> str:
    rendered = subprocess.run(
        [helm, "template", "gpulint", str(CHART), "--namespace", NAMESPACE],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    return HEADER + rendered


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--helm", default=shutil.which("helm") or "helm")
    args = parser.parse_args()
    OUTPUT.write_text(render(args.helm), encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
