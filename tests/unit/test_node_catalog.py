"""The shipped instance-type catalog: every row parses, names the sources it was read from (repository,
file, commit, date) with the facts read there, and agrees with them; a figure no source vouches for is
never the reason for "never fits" (docs/catalogs.md)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import REPO
from support.pools import AKS, GKE, findings, gpu_job, only, volcano_job

from gpulint.kube.pools.binding import bind
from gpulint.kube.pools.catalog import Catalog, parse_catalog, parse_machine_sizes, source_facts
from gpulint.kube.pools.fit import FITS, NEVER, UNKNOWN, fit_pool
from gpulint.kube.pools.model import PoolSpec
from gpulint.kube.quantity import quantity_from_yaml
from gpulint.kube.resources import is_gpu
from gpulint.kube.scheduler import pod_requirements
from gpulint.lint.data import data_dir
from gpulint.lint.inputs.loader import load_bytes
from gpulint.lint.world.node_catalog import _parse, shipped_catalog

SCRIPT = REPO / "scripts" / "catalog_from_sources.py"
# Where `fetch` puts its snapshots; GPULINT_CATALOG_MIRROR points elsewhere (docs/catalogs.md).
MIRROR = Path(os.environ.get("GPULINT_CATALOG_MIRROR", "/work/.mirror"))
SOURCES = {
    "--karpenter-aws": "aws+karpenter-provider-aws",
    "--autoscaler": "kubernetes+autoscaler",
    "--karpenter-azure": "Azure+karpenter-provider-azure",
    "--skewer": "Azure+skewer",
    "--xpk": "AI-Hypercomputer+xpk",
    "--cluster-toolkit": "GoogleCloudPlatform+cluster-toolkit",
    "--gce-machine-types": "Cyclenerd+google-cloud-pricing-cost-calculator",
}


def shipped_entries() -> list[tuple[str, dict]]:
    entries = []
    for path in sorted(data_dir("catalog").glob("*.yaml")):
        (document,) = load_bytes(str(path), path.read_bytes()).documents
        entries += [(document.data["provider"], entry) for entry in document.data["instance-types"]]
    return entries


def test_every_shipped_catalog_file_parses_cleanly():
    files = sorted(data_dir("catalog").glob("*.yaml"))
    assert {f.stem for f in files} >= {"aws", "gcp", "azure"}
    for path in files:
        rows, problems = _parse(str(path), path.read_bytes(), vouch=True)
        assert rows and not problems, problems


def test_every_row_names_its_sources_with_commit_and_date():
    for _, entry in shipped_entries():
        assert entry["sources"], entry["name"]
        for source in entry["sources"]:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+", source["repo"]), entry["name"]
            assert source["path"] and not source["path"].startswith("/"), entry["name"]
            assert re.fullmatch(r"[0-9a-f]{40}", source["commit"]), entry["name"]
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", source["date"]), entry["name"]
            assert source["facts"], entry["name"]


def test_every_row_agrees_with_the_facts_its_sources_state():
    # The row's GPU count and model, vCPUs, memory, EFA and labels are what its sources say, and two
    # sources of one row never disagree.
    for provider, entry in shipped_entries():
        name, capacity = entry["name"], entry["capacity"]
        stated = [source["facts"] for source in entry["sources"]]
        facts = source_facts(entry["sources"])
        assert len(facts) == len({k for s in stated for k in s}), f"{name}: its sources disagree"
        gpus = [k for k in capacity if is_gpu(k) and k != "aws.amazon.com/neuroncore"]
        assert len(gpus) == 1 and int(capacity[gpus[0]]) == facts["gpus"], name
        if "gpu-model" in facts:
            assert entry["gpu"]["model"] == facts["gpu-model"], name
        if "gpu-maker" in facts:  # Azure: the maker (supported-gpus.yaml) and the model the size names (skewer)
            assert entry["gpu"]["model"] == f"{facts['gpu-maker']} {facts.get('gpu-name', '')}".strip(), name
        for fact, resource in (("cpu", "cpu"), ("memory", "memory"), ("neuroncores", "aws.amazon.com/neuroncore")):
            if fact in facts:
                assert quantity_from_yaml(capacity[resource]).value == quantity_from_yaml(facts[fact]).value, name
            else:
                assert resource not in capacity, f"{name}: {resource} stated by no source"
        assert int(capacity.get("vpc.amazonaws.com/efa", 0)) == facts.get("efa", 0), name
        labels = entry.get("labels", {})
        if provider == "aws":
            assert facts["allocatable"] == entry["allocatable"] and facts["labels"] == "all", name
            if "karpenter.k8s.aws/instance-gpu-count" in labels:
                assert labels["karpenter.k8s.aws/instance-gpu-count"] == str(facts["gpus"]), name
        if provider == "gcp":
            assert labels.get("cloud.google.com/gke-accelerator") == facts.get("cloud.google.com/gke-accelerator"), name
            assert (
                "cloud.google.com/gke-accelerator" in labels
                or "cloud.google.com/gke-accelerator" in (entry["open-labels"])
            ), name
        if provider == "azure":
            assert labels["karpenter.azure.com/sku-gpu-count"] == str(facts["gpus"]), name
            assert labels["karpenter.azure.com/sku-cpu"] == str(facts["cpu"]), name
            assert f"{labels['karpenter.azure.com/sku-memory']}Mi" == facts["memory"], name
            assert labels["karpenter.azure.com/sku-gpu-manufacturer"] == facts["gpu-maker"], name
            if "gpu-name" in facts:
                assert labels["karpenter.azure.com/sku-gpu-name"] == facts["gpu-name"], name
            else:  # a size whose name holds no accelerator: what the node carries is not stated
                assert "karpenter.azure.com/sku-gpu-name" in entry["open-labels"], name
        assert not set(labels) & set(entry.get("open-labels", [])), name


def test_every_shipped_row_is_vouched_for_and_offers_an_accelerator():
    catalog = shipped_catalog()
    for row in catalog.rows.values():
        assert row.vouched_gpus, row.name
        assert any(is_gpu(name) and amount > 0 for name, amount in row.capacity.items()), row.name
        assert row.labels["node.kubernetes.io/instance-type"] == row.name
        # a GCP type's vCPUs and memory are stated where the machine-types list has the type (not a4x-*-nolssd)
        assert row.exact == (row.provider != "gcp" or "cpu" in row.capacity), row.name


def test_figures_of_well_known_types():
    catalog = shipped_catalog()
    gib = 1024**3
    # Karpenter's reference: g5.xlarge 4 vCPU, 16 GiB, 1 A10G; allocatable cpu 3920m
    g5 = catalog.get("g5.xlarge")
    assert g5 is not None
    assert g5.capacity["nvidia.com/gpu"] == 1 and g5.capacity["cpu"] == 4
    assert g5.allocatable["cpu"] == Fraction(3920, 1000)
    assert g5.labels["karpenter.k8s.aws/instance-gpu-name"] == "a10g"
    p5 = catalog.get("p5.48xlarge")
    assert p5 is not None and p5.capacity["nvidia.com/gpu"] == 8 and p5.capacity["vpc.amazonaws.com/efa"] == 32
    # xpk and the Cluster Toolkit: a3-highgpu-8g 8 H100 (nvidia-h100-80gb); g2-standard-24 2 L4
    a3 = catalog.get("a3-highgpu-8g")
    assert a3 is not None and a3.capacity["nvidia.com/gpu"] == 8
    assert a3.labels["cloud.google.com/gke-accelerator"] == "nvidia-h100-80gb"
    assert catalog.get("g2-standard-24").labels["cloud.google.com/gke-accelerator"] == "nvidia-l4"  # type: ignore[union-attr]
    # The machine-types list (gcloud compute machine-types list), as Google's accelerator-optimized machine family
    # page gives them: a3-highgpu-8g 208 vCPUs, 1,872GB; a2-highgpu-1g 12 vCPUs, 85GB; g2-standard-24 24, 96GB
    assert a3.capacity["cpu"] == 208 and a3.capacity["memory"] == 1872 * gib
    a2 = catalog.get("a2-highgpu-1g")
    assert a2 is not None and a2.capacity["cpu"] == 12 and a2.capacity["memory"] == 85 * gib and a2.exact
    assert catalog.get("g2-standard-24").capacity["memory"] == 96 * gib  # type: ignore[union-attr]
    nolssd = catalog.get("a4x-highgpu-4g-nolssd")
    assert nolssd is not None and "cpu" not in nolssd.capacity and not nolssd.exact
    # The Azure SKUs the Cluster Autoscaler generates from: ND96isr_H100_v5 96 vCPU, 1900 GiB, 8 GPUs;
    # NC64as_T4_v3 64 vCPU, 440 GiB, 4 GPUs
    h100 = catalog.get("Standard_ND96isr_H100_v5")
    assert h100 is not None and h100.capacity["nvidia.com/gpu"] == 8 and h100.capacity["memory"] == 1900 * gib
    t4 = catalog.get("Standard_NC64as_T4_v3")
    assert t4 is not None and t4.capacity["memory"] == 440 * gib and t4.capacity["nvidia.com/gpu"] == 4
    assert t4.labels["karpenter.azure.com/sku-gpu-manufacturer"] == "nvidia"
    # skewer's size parser, as Karpenter's own test expects (suite_test.go: A100 on Standard_NC24ads_A100_v4)
    assert t4.labels["karpenter.azure.com/sku-gpu-name"] == "T4" and t4.gpu_model == "nvidia T4"
    assert h100.labels["karpenter.azure.com/sku-gpu-name"] == "H100"
    a100 = catalog.get("Standard_NC24ads_A100_v4")
    assert a100 is not None and a100.labels["karpenter.azure.com/sku-gpu-name"] == "A100"
    for name in ("Standard_NC6s_v3", "Standard_ND96asr_v4", "Standard_ND96isr_MI300X_v5"):  # no model in the name
        row = catalog.get(name)
        assert row is not None and "karpenter.azure.com/sku-gpu-name" in row.open_labels, name
    # A partial A10 (NV6ads_A10_v5 gets a share of one A10): the SKU API states 1 GPU, and Karpenter's capacity is
    # nvidia.com/gpu: sku.GPU() (instancetype.go gpuNvidiaCount)
    nv6 = catalog.get("Standard_NV6ads_A10_v5")
    assert nv6 is not None and nv6.capacity["nvidia.com/gpu"] == 1 and nv6.capacity["cpu"] == 6


def test_the_sku_fixture_karpenter_replays_agrees_with_the_autoscalers_table():
    # pkg/fake/zz_generated.sku.southcentralus.go: NC24ads_A100_v4 24 vCPUs, 220 GB, 1 GPU, no RDMA, 915527 MiB NVMe
    (entry,) = [e for _, e in shipped_entries() if e["name"] == "Standard_NC24ads_A100_v4"]
    fixture = [s["facts"] for s in entry["sources"] if s["path"].startswith("pkg/fake/zz_generated.sku.")]
    assert fixture == [{"gpus": 1, "cpu": 24, "memory": "225280Mi", "rdma": False, "local-nvme-mib": 915527}]
    assert source_facts(entry["sources"])["memory"] == entry["capacity"]["memory"]


# A Resource SKU as the fixture holds it, trimmed
FIXTURE_SKU = """		{
			Name:         lo.ToPtr("Standard_ND96isr_H100_v5"),
			Capabilities: &[]compute.ResourceSkuCapabilities{
				{Name: lo.ToPtr("vCPUs"), Value: lo.ToPtr("96")},
				{Name: lo.ToPtr("MemoryGB"), Value: lo.ToPtr("1900")},
				{Name: lo.ToPtr("GPUs"), Value: lo.ToPtr("8")},
				{Name: lo.ToPtr("NvmeDiskSizeInMiB"), Value: lo.ToPtr("29296875")},
				{Name: lo.ToPtr("RdmaEnabled"), Value: lo.ToPtr("True")},
			},
			LocationInfo: &[]compute.ResourceSkuLocationInfo{},
		},
		{
			Name:         lo.ToPtr("Standard_D2s_v3"),
			Capabilities: &[]compute.ResourceSkuCapabilities{
				{Name: lo.ToPtr("vCPUs"), Value: lo.ToPtr("2")},
				{Name: lo.ToPtr("MemoryGB"), Value: lo.ToPtr("0.75")},
			},
			LocationInfo: &[]compute.ResourceSkuLocationInfo{},
		},
"""


def test_a_resource_sku_is_read_as_the_api_states_it():
    script = _script()
    skus = re.findall(r'Name:\s+lo\.ToPtr\("(Standard_[^"]+)"\),(.*?)LocationInfo:', FIXTURE_SKU, re.S)
    facts = {
        name: script._azure_fixture_facts(
            dict(re.findall(r'Name: lo\.ToPtr\("([^"]+)"\), Value: lo\.ToPtr\("([^"]*)"\)', body))
        )
        for name, body in skus
    }
    assert facts == {
        "Standard_ND96isr_H100_v5": {
            "gpus": 8,
            "cpu": 96,
            "memory": "1945600Mi",
            "rdma": True,
            "local-nvme-mib": 29296875,
        },
        "Standard_D2s_v3": None,  # no GPU
    }


@pytest.mark.parametrize(
    ("size", "accelerator"),
    [
        ("Standard_NC24ads_A100_v4", "A100"),
        ("Standard_ND96isr_H200_v5", "H200"),
        ("Standard_NC4as_T4_v3", "T4"),
        ("Standard_NV6ads_A10_v5", "A10"),
        ("Standard_NC6s_v3", ""),  # V100: the name does not say
        ("Standard_ND96isr_MI300X_v5", ""),  # skewer flags the MI300X series; no accelerator type
        ("Standard_NC24rs_v3", ""),
    ],
)
@pytest.mark.skipif(not (MIRROR / "Azure+skewer" / "repo").is_dir(), reason=f"Azure/skewer is not fetched at {MIRROR}")
def test_skewers_size_parser_names_the_gpu_model(size, accelerator):
    script = _script()
    scheme, _ = script.azure_size_scheme(script.Repo(str(MIRROR / "Azure+skewer" / "repo"), "Azure/skewer"))
    assert script.azure_accelerator(scheme, size) == accelerator


@pytest.mark.skipif(
    not all((MIRROR / name / "repo").is_dir() for name in SOURCES.values()),
    reason=f"the fetched sources are not at {MIRROR} (fetch them, or set GPULINT_CATALOG_MIRROR)",
)
def test_the_shipped_catalog_is_what_its_sources_give(tmp_path):
    args = [arg for flag, name in SOURCES.items() for arg in (flag, str(MIRROR / name / "repo"))]
    run = subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--out", str(data_dir("catalog")), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr


def _script():
    spec = importlib.util.spec_from_file_location("catalog_from_sources", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


# tools/machinetypes.csv as `gcloud compute machine-types list` writes it (tools/machinetypes.sh), trimmed
MACHINE_TYPES = """\
NAME;CPUS;SHARED_CPU;MEMORY_GB;DEPRECATED;ZONE
a2-highgpu-1g;12;False;85.00;;
e2-micro;2;True;1.00;;
n1-highcpu-16;16;False;14.40;;
n1-megamem-96;96;False;1433.60;DEPRECATED;
n1-standard-1;1;False;3.75;;
x9-standard-8;8;False;32.00;;
x9-standard-8;8;False;30.00;;
"""


def test_the_machine_types_list_is_read_as_gcloud_prints_it():
    sizes = _script().gce_machine_sizes(MACHINE_TYPES)
    # whole MiB only: 14.40GB is 14745.6MiB; no shared-core or deprecated type; none listed two ways
    assert sizes == {"a2-highgpu-1g": {"cpu": 12, "memory": "87040Mi"}, "n1-standard-1": {"cpu": 1, "memory": "3840Mi"}}
    with pytest.raises(SystemExit, match="not the machine-types CSV"):
        _script().gce_machine_sizes("NAME,CPUS,MEMORY_GB\na2-highgpu-1g,12,85\n")


# --------------------------------------------------------------------------- what a row vouches for

ROW = """
provider: aws
instance-types:
- name: x9.48xlarge
  {sources}
  capacity: {{cpu: "192", memory: 2048Gi, nvidia.com/gpu: "8"}}
"""
SOURCE = '{{repo: example/provider, path: types.go, commit: "{commit}", date: "2026-08-21", facts: {facts}}}'
COMMIT = "1d927085dd81a9df9301e613f371dac5b4d16bfe"


def verdict(
    sources: str, gpus: int, cpu: int = 1, vouch: bool = True, stated: dict[str, Fraction] | None = None
) -> tuple[str, str]:
    (document,) = load_bytes("catalog.yaml", ROW.format(sources=sources).encode()).documents
    rows, problems = parse_catalog(document.data, "catalog.yaml", vouch)
    assert not problems
    catalog = Catalog()
    catalog.extend(rows)
    spec = PoolSpec("EKS node group", "gpu", "nodegroup.json", instance_types=("x9.48xlarge",), provider="aws")
    spec.accelerators = stated or {}
    pod = pod_requirements(
        {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": gpus, "cpu": cpu}}}]}
    )
    fit = fit_pool(pod, bind(spec, catalog, []))
    return fit.state, fit.why


SIZES = """
provider: gcp
instance-types: []
machine-sizes:
- {{name: n1-standard-8, sources: [{sources}]}}
"""


@pytest.mark.parametrize(
    ("sources", "size"),
    [
        (SOURCE.format(commit=COMMIT, facts='{cpu: 8, memory: "30720Mi"}'), (8, 30 * 1024**3)),
        ("", None),  # no source
        ('{repo: example/provider, facts: {cpu: 8, memory: "30720Mi"}}', None),  # no commit or date
        (SOURCE.format(commit=COMMIT, facts="{cpu: 8}"), None),  # no memory
        (SOURCE.format(commit=COMMIT, facts='{cpu: 0, memory: "30720Mi"}'), None),  # no vCPU
        (  # two sources that disagree
            SOURCE.format(commit=COMMIT, facts='{cpu: 8, memory: "30720Mi"}')
            + ", "
            + SOURCE.format(commit=COMMIT, facts='{cpu: 8, memory: "15360Mi"}'),
            None,
        ),
    ],
)
def test_a_machine_size_stands_only_as_its_dated_sources_state_it(sources, size):
    (document,) = load_bytes("gcp.yaml", SIZES.format(sources=sources).encode()).documents
    found = parse_machine_sizes(document.data)
    if size is None:
        assert found == {}
    else:
        assert (found["n1-standard-8"].cpu, found["n1-standard-8"].memory) == size
        assert found["n1-standard-8"].maybe_arm  # the list states no architecture


def test_the_shipped_machine_sizes_are_the_n1_and_gpu_families():
    sizes = shipped_catalog().sizes
    assert (sizes["n1-standard-8"].cpu, sizes["n1-standard-8"].memory) == (8, 30 * 1024**3)
    assert (sizes["n1-highmem-16"].cpu, sizes["n1-highmem-16"].memory) == (16, 104 * 1024**3)
    assert (sizes["g2-standard-8"].cpu, sizes["g2-standard-8"].memory) == (8, 32 * 1024**3)
    assert "n1-highcpu-16" not in sizes and "e2-standard-4" not in sizes  # 14.40GB; no GPU family
    assert not set(sizes) & set(shipped_catalog().rows)  # a GPU row holds its own size


def test_a_row_whose_source_states_the_gpu_count_decides():
    sources = "sources: [" + SOURCE.format(commit=COMMIT, facts="{gpus: 8, cpu: 192, memory: 2048Gi}") + "]"
    assert verdict(sources, 8)[0] == FITS
    state, reason = verdict(sources, 9)
    assert state == NEVER and "has 8 nvidia.com/gpu; the pod asks for 9" in reason
    assert verdict(sources, 1, cpu=193)[0] == NEVER


@pytest.mark.parametrize(
    "sources",
    [
        "",  # no source at all
        "sources: [" + SOURCE.format(commit=COMMIT, facts="{cpu: 192}") + "]",  # the source omits the count
        "sources: [" + SOURCE.format(commit=COMMIT, facts="{gpus: 4}") + "]",  # the source says otherwise
        "sources: [{repo: example/provider, facts: {gpus: 8}}]",  # a source without commit or date
        "sources: ["  # two sources that disagree
        + SOURCE.format(commit=COMMIT, facts="{gpus: 8}")
        + ", "
        + SOURCE.format(commit=COMMIT, facts="{gpus: 16}")
        + "]",
    ],
)
def test_a_row_no_source_vouches_for_makes_the_verdict_unknown_never_an_error(sources):
    state, reason = verdict(sources, 9)
    assert state == UNKNOWN
    assert "no source vouches for what instance type(s) x9.48xlarge offer" in reason


def test_the_resource_names_an_unvouched_type_offers_are_not_proven():
    # gpu-resource-unknown decides a resource name from the pools only when every type they can add is
    # described: a type no source vouches for is not
    def pool(sources: str):
        (document,) = load_bytes("catalog.yaml", ROW.format(sources=sources).encode()).documents
        catalog = Catalog()
        catalog.extend(parse_catalog(document.data, "catalog.yaml", True)[0])
        spec = PoolSpec("EKS node group", "gpu", "nodegroup.json", instance_types=("x9.48xlarge",), provider="aws")
        return bind(spec, catalog, [])

    sourced = "sources: [" + SOURCE.format(commit=COMMIT, facts="{gpus: 8}") + "]"
    assert pool(sourced).accelerators_known and pool(sourced).known
    assert not pool("").accelerators_known and not pool("").known
    assert pool("").unvouched_types == ("x9.48xlarge",)


def test_what_the_pool_itself_states_decides_an_unvouched_type():
    # Cluster Autoscaler's node-template resources (or a GKE pool's accelerators) name the GPUs a node of
    # the pool has: the pool's own word, where the catalog's row has no source
    stated = {"nvidia.com/gpu": Fraction(4)}
    assert verdict("", 4, stated=stated)[0] == FITS
    state, reason = verdict("", 5, stated=stated)
    assert state == NEVER and "has 4 nvidia.com/gpu" in reason


def test_an_unstated_cpu_is_never_the_reason_but_the_stated_gpus_are():
    sources = "sources: [" + SOURCE.format(commit=COMMIT, facts="{gpus: 8}") + "]"
    assert verdict(sources, 8, cpu=500)[0] == FITS
    assert verdict(sources, 9)[0] == NEVER


def test_the_operators_own_catalog_stands_without_sources():
    # --node-catalog is the operator's word about their cluster, like an inventory
    state, reason = verdict("", 9, vouch=False)
    assert state == NEVER and "has 8 nvidia.com/gpu" in reason


# --------------------------------------------------------------------------- through the CLI

CPU_500 = "          requests: {cpu: 500}\n"


def test_a_gke_types_vcpus_from_the_machine_types_list_decide(write):
    # g2-standard-24: 2 L4s (xpk, the Cluster Toolkit), 24 vCPUs (the machine-types list); the autoscaler's
    # template leaves 23.87 after GKE's kube-reserved
    l4 = "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n"
    manifest = gpu_job(2, spec=l4).replace("          limits:", CPU_500 + "          limits:")
    never = only(findings(write, manifest, GKE), "gpu-unschedulable")
    assert never["severity"] == "error" and "g2-standard-24 has 23.87 cpu; the pod asks for 500" in str(never)
    fits = gpu_job(2, spec=l4).replace("          limits:", "          requests: {cpu: 23}\n          limits:")
    assert [f for f in findings(write, fits, GKE) if f["rule"] == "gpu-unschedulable"] == []
    never = only(findings(write, gpu_job(3, spec=l4), GKE), "gpu-unschedulable")
    assert never["severity"] == "error"


def test_a_catalog_row_that_lists_no_disk_is_not_a_disk_of_zero(write):
    # The SKU table states an AKS size's vCPUs, memory and GPUs, not its disk: a pod asking for 10Gi of
    # ephemeral-storage on a Standard_NC24ads_A100_v4 pool fits (it was "has 0.0Gi ephemeral-storage")
    sku = "      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]\n"
    disk = "          requests: {ephemeral-storage: 10Gi}\n          limits:"
    manifest = gpu_job(1, spec=sku).replace("          limits:", disk)
    assert [f for f in findings(write, manifest, AKS) if f["rule"] == "gpu-unschedulable"] == []
    never = only(findings(write, gpu_job(2, spec=sku).replace("          limits:", disk), AKS), "gpu-unschedulable")
    assert "has 1 nvidia.com/gpu" in str(never)


def test_a_label_no_source_states_never_excludes_a_gke_type(write):
    family = "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4, cloud.google.com/machine-family: g2}\n"
    assert [f for f in findings(write, gpu_job(2, spec=family), GKE) if f["rule"] == "gpu-unschedulable"] == []


def test_an_aks_size_figures_from_the_autoscalers_sku_table(write):
    # Standard_NC24ads_A100_v4: 24 vCPU, 220 GiB (225280 MiB), 1 GPU in the SKU table
    sku = "      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]\n"
    manifest = gpu_job(1, spec=sku).replace("          limits:", "          requests: {cpu: 25}\n          limits:")
    never = only(findings(write, manifest, AKS), "gpu-unschedulable")
    assert "its instance type Standard_NC24ads_A100_v4 has 24 cpu" in never["message"] + str(never)


def test_a_gang_on_gke_types_is_packed_by_their_gpus_and_vcpus(write):
    # l4-pool adds at most 2 g2-standard-24 nodes of 2 L4s and 23.87 allocatable cpu: 4 one-GPU workers asking
    # 4 cpu each fit; 5 never do (GPUs); 4 asking 12 cpu each never do either (one a node: 2 in all)
    def gang(workers: int, cpu: int = 4) -> str:
        return volcano_job(workers).replace(
            "            limits:", f"            requests: {{cpu: {cpu}}}\n            limits:"
        )

    assert "requests: {cpu: 4}" in gang(4)
    assert [f for f in findings(write, gang(4), GKE) if f["severity"] in ("error", "warning")] == []
    error = only(findings(write, gang(5), GKE), "gang-unsatisfiable")
    assert error["severity"] == "error" and "hold at most 4" in error["message"]
    error = only(findings(write, gang(4, cpu=12), GKE), "gang-unsatisfiable")
    assert error["severity"] == "error" and "hold at most 2" in error["message"]


AKS_KARPENTER = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: gpu}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.azure.com, kind: AKSNodeClass, name: gpu}}
      requirements:
      - {{key: node.kubernetes.io/instance-type, operator: In, values: [{sizes}]}}
      taints:
      - {{key: sku, value: gpu, effect: NoSchedule}}
"""


def test_a_karpenter_aks_pool_is_judged_by_the_gpu_name_its_sizes_carry(write, tmp_path):
    # Karpenter labels an A100 size's nodes karpenter.azure.com/sku-gpu-name=A100: a pod selecting H100 on a pool
    # of A100 sizes never schedules; one selecting A100 does
    def pool(sizes: str) -> str:
        inventory = tmp_path / sizes.replace(",", "").replace(" ", "")
        inventory.mkdir()
        (inventory / "nodepool.yaml").write_text(AKS_KARPENTER.format(sizes=sizes))
        return str(inventory)

    def job(model: str) -> str:
        lines = "      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]\n"
        return gpu_job(1, spec=lines + f"      nodeSelector: {{karpenter.azure.com/sku-gpu-name: {model}}}\n")

    a100 = pool("Standard_NC24ads_A100_v4, Standard_NC48ads_A100_v4")
    assert findings(write, job("A100"), a100) == []
    never = [f for f in findings(write, job("H100"), a100) if f["severity"] == "error"]
    assert len(never) == 1 and "karpenter.azure.com/sku-gpu-name" in str(never[0]), never
    # NC6s_v3's name holds no model (skewer gives none): the label's value is not stated, so no verdict
    v100 = pool("Standard_NC6s_v3")
    assert [f for f in findings(write, job("V100"), v100) if f["severity"] in ("error", "warning")] == []
