"""KServe's runtime selection (gpulint/kube/kserve_runtimes.py) against the runtimes KServe's releases install
(tests/data/kserve-runtimes: kserve/kserve config/runtimes of the releases where they changed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpulint.kube.kserve_runtimes import BUILT_IN, KServeInstall, choose, choose_installed, dev_shm_mounted

RELEASES = Path(__file__).parent.parent / "data" / "kserve-runtimes"


def _upstream(release: str) -> dict[str, dict[str, Any]]:
    docs = yaml.safe_load_all((RELEASES / f"{release}.yaml").read_text(encoding="utf-8"))
    return {d["metadata"]["name"]: d for d in docs if d and d.get("kind") == "ClusterServingRuntime"}


def _selection(spec: dict[str, Any]) -> tuple[Any, ...]:
    """What selection reads of a runtime: its autoSelect formats, protocols, and the kserve-container's args."""
    formats = sorted(
        (f["name"], f.get("version"), f.get("priority")) for f in spec["supportedModelFormats"] if f.get("autoSelect")
    )
    container = next(c for c in spec["containers"] if c["name"] == "kserve-container")
    return formats, sorted(spec.get("protocolVersions") or []), container.get("args"), container["resources"]


@pytest.mark.parametrize("release", sorted(p.stem for p in RELEASES.glob("v*.yaml")))
def test_the_table_is_what_the_release_installs(release: str) -> None:
    upstream = _upstream(release)
    minor = int(release.split(".")[1])
    table = {b.name: b.runtime(minor) for b in BUILT_IN if b.runtime(minor) is not None}
    single = {n: d for n, d in upstream.items() if "workerSpec" not in d["spec"]}
    # predictiveserver (v0.17 on) selects nothing by itself: no autoSelect format
    selectable = {n for n, d in single.items() if any(f.get("autoSelect") for f in d["spec"]["supportedModelFormats"])}
    assert set(table) == selectable
    for name, runtime in table.items():
        assert runtime is not None
        assert _selection(runtime["spec"]) == _selection(upstream[name]["spec"]), name


def _isvc_model(name: str, **more: Any) -> dict[str, Any]:
    return {"modelFormat": {"name": name}, **more}


def _runtime(name: str, formats: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    containers = [{"name": "kserve-container", "image": "example/server"}]
    return {
        "kind": "ServingRuntime",
        "metadata": {"name": name},
        "spec": {"supportedModelFormats": formats, "containers": containers, **spec},
    }


def _name(runtime: dict[str, Any] | None) -> str | None:
    return None if runtime is None else runtime["metadata"]["name"]


def test_every_release_gives_huggingface_the_huggingface_server() -> None:
    """v0.17 on, kserve-openvino also selects huggingface, without a priority: the one with a priority wins."""
    chosen = choose_installed(_isvc_model("huggingface"), [], [], multinode=False)
    assert _name(chosen.runtime) == "kserve-huggingfaceserver"
    assert "volumes" not in chosen.runtime["spec"]  # the Helm chart's default: no /dev/shm


def test_releases_that_disagree_choose_nothing() -> None:
    """tensorflow: kserve-tensorflow-serving (priority 2) until v0.16, kserve-openvino (priority 3) from v0.17."""
    chosen = choose_installed(_isvc_model("tensorflow"), [], [], multinode=False)
    assert chosen.runtime is None


def test_the_protocol_filters() -> None:
    """kserve-tritonserver serves v2 only: a triton model without protocolVersion v2 gets no runtime."""
    assert choose_installed(_isvc_model("triton"), [], [], multinode=False).runtime is None
    v2 = choose_installed(_isvc_model("triton", protocolVersion="v2"), [], [], multinode=False)
    assert _name(v2.runtime) == "kserve-tritonserver"


def test_the_namespace_runtime_comes_first() -> None:
    own = _runtime("vllm-runtime", [{"name": "huggingface", "autoSelect": True}])
    chosen = choose_installed(_isvc_model("huggingface"), [own], [], multinode=False)
    assert _name(chosen.runtime) == "vllm-runtime"


def test_a_runtime_without_autoselect_is_not_chosen() -> None:
    own = _runtime("vllm-runtime", [{"name": "huggingface"}])
    chosen = choose_installed(_isvc_model("huggingface"), [own], [], multinode=False)
    assert _name(chosen.runtime) == "kserve-huggingfaceserver"


def test_a_tie_is_decided_by_creation_time_which_files_do_not_hold() -> None:
    formats = [{"name": "custom", "autoSelect": True, "priority": 1}]
    first, second = _runtime("a", formats), _runtime("b", formats)
    chosen = choose(_isvc_model("custom"), [], [first, second], multinode=False)
    assert chosen.runtime is None and chosen.ambiguous
    higher = _runtime("c", [{"name": "custom", "autoSelect": True, "priority": 2}])
    assert _name(choose(_isvc_model("custom"), [], [first, second, higher], multinode=False).runtime) == "c"


def test_a_cluster_runtime_of_a_built_in_name_replaces_it() -> None:
    mine = _runtime("kserve-huggingfaceserver", [{"name": "huggingface", "autoSelect": True, "priority": 1}])
    mine["kind"] = "ClusterServingRuntime"
    mine["spec"]["volumes"] = [{"name": "devshm", "emptyDir": {"medium": "Memory"}}]
    chosen = choose_installed(_isvc_model("huggingface"), [], [mine], multinode=False)
    assert chosen.runtime is mine


def test_a_multinode_predictor_gets_no_single_node_runtime() -> None:
    assert choose_installed(_isvc_model("huggingface"), [], [], multinode=True).runtime is None


@pytest.mark.parametrize("release", sorted(p.stem for p in RELEASES.glob("v*.yaml")))
def test_the_yaml_installs_dev_shm_is_what_the_table_says_of_an_install_not_the_chart(release: str) -> None:
    """The YAML install of each release (its config/runtimes): a /dev/shm mount in kserve-huggingfaceserver exactly
    where the table says one is mounted, or that only the chart's values decide; its chart differs in v0.14-v0.16."""
    installed = _upstream(release).get("kserve-huggingfaceserver")
    minor = int(release.split(".")[1])
    if installed is None:  # before v0.12: not installed, and not in the table
        assert next(b for b in BUILT_IN if b.name == "kserve-huggingfaceserver").runtime(minor) is None
        return
    spec = installed["spec"]
    mounts = {m["mountPath"] for c in spec["containers"] for m in c.get("volumeMounts") or []}
    chart_off, chart_on = (
        dev_shm_mounted("kserve-huggingfaceserver", KServeInstall(minor, on)) for on in (False, True)
    )
    unknown = dev_shm_mounted("kserve-huggingfaceserver", KServeInstall(minor))
    if "/dev/shm" in mounts:
        assert chart_on is True and (unknown is None) == (chart_off is False)
    else:
        assert chart_off is chart_on is unknown is False
