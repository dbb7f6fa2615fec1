"""The shipped instance-type catalog: every row parses, cites a source and offers an accelerator."""

from __future__ import annotations

from fractions import Fraction

from gpulint.kube.resources import is_gpu
from gpulint.lint.data import data_dir
from gpulint.lint.node_catalog import _parse, shipped_catalog


def test_every_shipped_catalog_file_parses_cleanly():
    files = sorted(data_dir("catalog").glob("*.yaml"))
    assert {f.stem for f in files} >= {"aws", "gcp", "azure"}
    for path in files:
        rows, problems = _parse(str(path), path.read_bytes())
        assert rows and not problems, problems


def test_every_row_cites_a_source_and_offers_an_accelerator():
    catalog = shipped_catalog()
    for row in catalog.rows.values():
        assert row.source.startswith("https://"), row.name
        assert any(is_gpu(name) and amount > 0 for name, amount in row.capacity.items()), row.name
        assert row.labels["node.kubernetes.io/instance-type"] == row.name


def test_figures_of_well_known_types():
    catalog = shipped_catalog()
    # Karpenter's reference: g5.xlarge 4 vCPU, 16 GiB, 1 A10G; allocatable cpu 3920m
    g5 = catalog.get("g5.xlarge")
    assert g5 is not None
    assert g5.capacity["nvidia.com/gpu"] == 1 and g5.capacity["cpu"] == 4
    assert g5.allocatable["cpu"] == Fraction(3920, 1000)
    assert g5.labels["karpenter.k8s.aws/instance-gpu-name"] == "a10g"
    assert catalog.get("p5.48xlarge").capacity["nvidia.com/gpu"] == 8  # type: ignore[union-attr]
    assert catalog.get("a3-highgpu-8g").capacity["nvidia.com/gpu"] == 8  # type: ignore[union-attr]
    assert catalog.get("g2-standard-24").labels["cloud.google.com/gke-accelerator"] == "nvidia-l4"  # type: ignore[union-attr]
    assert catalog.get("Standard_ND96isr_H100_v5").capacity["nvidia.com/gpu"] == 8  # type: ignore[union-attr]
