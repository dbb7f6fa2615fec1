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


def test_gcp_and_azure_rows_as_their_documentation_lists_them():
    catalog = shipped_catalog()
    gib = 1024**3
    # Compute Engine "GPU machine types": a3-ultragpu-8g 224 vCPU, 2,952 GB (binary), 8 H200;
    # a4-highgpu-8g 224 vCPU, 3,968 GB, 8 B200 (1,440 GB of GPU memory in all)
    a3u = catalog.get("a3-ultragpu-8g")
    assert a3u is not None and a3u.capacity["cpu"] == 224 and a3u.capacity["memory"] == 2952 * gib
    assert a3u.labels["cloud.google.com/gke-accelerator"] == "nvidia-h200-141gb"
    a4 = catalog.get("a4-highgpu-8g")
    assert a4 is not None and a4.capacity["nvidia.com/gpu"] == 8 and a4.gpu_memory == "180GB"
    # g2-standard-32 has one L4 (more vCPUs, not more GPUs, than g2-standard-24's two)
    assert catalog.get("g2-standard-32").capacity["nvidia.com/gpu"] == 1  # type: ignore[union-attr]
    # NCasT4_v3: Standard_NC64as_T4_v3 64 vCPU, 440 GiB, 4 T4; NCads_H100_v5: NC80adis 2 GPUs
    t4 = catalog.get("Standard_NC64as_T4_v3")
    assert t4 is not None and t4.capacity["memory"] == 440 * gib and t4.capacity["nvidia.com/gpu"] == 4
    assert catalog.get("Standard_NC80adis_H100_v5").capacity["nvidia.com/gpu"] == 2  # type: ignore[union-attr]
    assert t4.labels["kubernetes.azure.com/accelerator"] == "nvidia"
