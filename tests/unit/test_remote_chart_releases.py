"""The GPU stack's charts of a chart repository released by a helmfile or a Zarf package: the device plugin
configurations and the ClusterPolicy their values make are read as a Flux HelmRelease's are (device-plugin-config),
through the gpulint CLI on repositories laid out as real ones are (helmfile.yaml beside values/, zarf.yaml)."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

from conftest import run_cli

# A pod asking for a MIG profile by name: under mig.strategy single the plugin advertises nvidia.com/gpu only.
JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  namespace: ml
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: finetune
          image: nvcr.io/nvidia/pytorch:24.05-py3
          resources:
            limits:
              nvidia.com/mig-3g.40gb: 1
"""
# time-slicing with replicas beside resources: the plugin refuses the file (NVIDIA/k8s-device-plugin api/config/v1)
BROKEN = """\
version: v1
sharing:
  timeSlicing:
    replicas: 4
    resources:
      - name: nvidia.com/gpu
"""
FIXED = """\
version: v1
sharing:
  timeSlicing:
    resources:
      - name: nvidia.com/gpu
        replicas: 4
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(body))


def _findings(root: Path) -> list[dict]:
    run = run_cli("check", str(root), "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    return [f for f in json.loads(run.stdout)["findings"] if f["rule"] == "device-plugin-config"]


def _helmfile(values: str, chart: str = "nvdp/nvidia-device-plugin", extra: str = "") -> str:
    indented = textwrap.indent(values, " " * 6)
    return (
        "repositories:\n  - name: nvdp\n    url: https://nvidia.github.io/k8s-device-plugin\n"
        "  - name: nvidia\n    url: https://helm.ngc.nvidia.com/nvidia\n"
        f"releases:\n  - name: nvdp\n    namespace: nvidia-device-plugin\n    chart: {chart}\n"
        f"    version: 0.17.1\n{extra}    values:\n{indented}"
    )


def _config_map(config: str) -> str:
    body = textwrap.indent(config, " " * 8)
    return f"- config:\n    map:\n      default: |-\n{body}"


def test_helmfile_inline_config_map_is_checked_at_its_line(tmp_path: Path) -> None:
    _write(tmp_path, {"helmfile.yaml": _helmfile(_config_map(BROKEN))})
    found = _findings(tmp_path)
    assert [(f["severity"], f["line"]) for f in found] == [("warning", 18), ("error", 20)]  # replicas:, - name:
    assert "'replicas' is not a field at sharing.timeSlicing" in found[0]["message"]
    assert found[0]["path"].endswith("helmfile.yaml")


def test_helmfile_d_release_is_read(tmp_path: Path) -> None:
    """helmfile reads every file of helmfile.d/ (whatever its name) as a helmfile."""
    _write(tmp_path, {"helmfile.d/10-gpu.yaml": _helmfile(_config_map(BROKEN))})
    assert [f["severity"] for f in _findings(tmp_path)] == ["warning", "error"]


def test_helmfile_fixed_config_is_clean(tmp_path: Path) -> None:
    _write(tmp_path, {"helmfile.yaml": _helmfile(_config_map(FIXED))})
    assert _findings(tmp_path) == []


def test_helmfile_release_not_known_stays_unknown(tmp_path: Path) -> None:
    """A value set with `set:`, a `{{ }}` helmfile fills in, a release not installed, a local chart of that name and
    a repository the helmfile does not name: what the plugin reads is not known, or is not this chart's."""
    cases = {
        "set/helmfile.yaml": _helmfile(
            _config_map(BROKEN), extra="    set:\n      - name: config.name\n        value: x\n"
        ),
        "tmpl/helmfile.yaml": _helmfile(_config_map(BROKEN).replace("version: v1", "version: {{ .Values.v }}")),
        "off/helmfile.yaml": _helmfile(_config_map(BROKEN), extra="    installed: false\n"),
        "cond/helmfile.yaml": _helmfile(_config_map(BROKEN), extra="    installedTemplate: '{{ .Values.gpu }}'\n"),
        "inherit/helmfile.yaml": _helmfile(_config_map(BROKEN), extra="    inherit:\n      - template: gpu\n"),
        "local/helmfile.yaml": _helmfile(_config_map(BROKEN), chart="./charts/nvidia-device-plugin"),
        "other/helmfile.yaml": _helmfile(_config_map(BROKEN), chart="bjw-s/nvidia-device-plugin"),
        "named/helmfile.yaml": _helmfile(_config_map(BROKEN).replace("map:", "name: plugin-config\n    map:")),
    }
    _write(tmp_path, cases)
    assert _findings(tmp_path) == []


def test_helmfile_values_file_makes_the_operator_cluster_policy(tmp_path: Path) -> None:
    """`values/gpu-operator.yaml` sets mig.strategy single: the chart's ClusterPolicy says so, as a HelmRelease's."""
    _write(
        tmp_path,
        {
            "helmfile.yaml": _helmfile("- values/gpu-operator.yaml\n", chart="nvidia/gpu-operator"),
            "values/gpu-operator.yaml": "mig:\n  strategy: single\n",
            "jobs/finetune.yaml": JOB,
        },
    )
    found = _findings(tmp_path)
    assert len(found) == 1 and found[0]["path"].endswith("finetune.yaml")
    assert "helmfile release" in found[0]["message"] + " ".join(found[0].get("notes", []))


def test_helmfile_values_file_mixed_strategy_is_clean(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "helmfile.yaml": _helmfile(
                "- values/gpu-operator.yaml\n- mig:\n    strategy: mixed\n", "nvidia/gpu-operator"
            ),
            "values/gpu-operator.yaml": "mig:\n  strategy: single\n",
            "jobs/finetune.yaml": JOB,
        },
    )
    assert _findings(tmp_path) == []


ZARF = """\
kind: ZarfPackageConfig
metadata:
  name: gpu-operator
components:
  - name: gpu-operator
    required: true
    charts:
      - name: gpu-operator
        url: https://helm.ngc.nvidia.com/nvidia
        version: v25.3.0
        namespace: gpu-operator
        valuesFiles:
          - values/gpu-operator-values.yaml
"""


def test_zarf_chart_of_a_url_makes_the_operator_cluster_policy(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "zarf.yaml": ZARF,
            "values/gpu-operator-values.yaml": "mig:\n  strategy: single\n",
            "jobs/finetune.yaml": JOB,
        },
    )
    found = _findings(tmp_path)
    assert len(found) == 1 and "mig.strategy: single" in found[0]["message"]


def test_zarf_variable_leaves_the_strategy_unknown(tmp_path: Path) -> None:
    """A value Zarf fills in at deploy time (###ZARF_VAR_MIG_STRATEGY###) is given, not known."""
    _write(
        tmp_path,
        {
            "zarf.yaml": ZARF,
            "values/gpu-operator-values.yaml": "mig:\n  strategy: ###ZARF_VAR_MIG_STRATEGY###\n",
            "jobs/finetune.yaml": JOB,
        },
    )
    assert _findings(tmp_path) == []


def _kustomization(entry: str) -> str:
    return (
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: gpu\n"
        "resources:\n  - namespace.yaml\nhelmCharts:\n" + textwrap.indent(entry, "  ")
    )


NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gpu\n"
PLUGIN_CHART = """\
- name: nvidia-device-plugin
  repo: https://nvidia.github.io/k8s-device-plugin
  version: 0.17.1
  releaseName: nvdp
"""


def test_kustomize_helm_chart_inline_values_are_checked(tmp_path: Path) -> None:
    """kustomize without --enable-helm renders no helmCharts: the values are read from the kustomization."""
    inline = "  valuesInline:\n" + textwrap.indent(_config_map(BROKEN).removeprefix("- "), " " * 4)
    _write(tmp_path, {"gpu/kustomization.yaml": _kustomization(PLUGIN_CHART + inline), "gpu/namespace.yaml": NAMESPACE})
    found = _findings(tmp_path)
    assert [(f["severity"], f["line"]) for f in found] == [("warning", 18), ("error", 20)]
    assert found[0]["path"].endswith("gpu/kustomization.yaml")


def test_kustomize_helm_chart_fixed_and_unknown_values_are_clean(tmp_path: Path) -> None:
    """The fixed file; the same broken one under valuesMerge: merge (the chart's defaults win, not read here); and
    a chart of the repository itself (no repo: rendered as a release of that chart, not read here)."""
    fixed = "  valuesInline:\n" + textwrap.indent(_config_map(FIXED).removeprefix("- "), " " * 4)
    broken = "  valuesInline:\n" + textwrap.indent(_config_map(BROKEN).removeprefix("- "), " " * 4)
    local = PLUGIN_CHART.replace("  repo: https://nvidia.github.io/k8s-device-plugin\n", "")
    _write(
        tmp_path,
        {
            "fixed/kustomization.yaml": _kustomization(PLUGIN_CHART + fixed),
            "merge/kustomization.yaml": _kustomization(PLUGIN_CHART + "  valuesMerge: merge\n" + broken),
            "local/kustomization.yaml": _kustomization(local + broken),
            **{f"{d}/namespace.yaml": NAMESPACE for d in ("fixed", "merge", "local")},
        },
    )
    assert _findings(tmp_path) == []


def test_kustomize_values_file_makes_the_operator_cluster_policy(tmp_path: Path) -> None:
    operator = "- name: gpu-operator\n  repo: https://helm.ngc.nvidia.com/nvidia\n  valuesFile: values.yaml\n"
    _write(
        tmp_path,
        {
            "gpu/kustomization.yaml": _kustomization(operator),
            "gpu/namespace.yaml": NAMESPACE,
            "gpu/values.yaml": "mig:\n  strategy: single\n",
            "jobs/finetune.yaml": JOB,
        },
    )
    found = _findings(tmp_path)
    assert len(found) == 1 and "kustomize helmChart" in " ".join([found[0]["message"], *found[0].get("notes", [])])


def test_config_in_a_values_file_is_checked_at_the_line_naming_the_file(tmp_path: Path) -> None:
    """The kustomization names values.yaml (as vehagn/homelab infra/nvidia-device-plugin did): the file is linted as
    Helm values, where nothing is an object, so the configuration it embeds is checked at `valuesFile:`."""
    _write(
        tmp_path,
        {
            "gpu/kustomization.yaml": _kustomization(PLUGIN_CHART + "  valuesFile: values.yaml\n"),
            "gpu/namespace.yaml": NAMESPACE,
            "gpu/values.yaml": _config_map(BROKEN).removeprefix("- "),
        },
    )
    found = _findings(tmp_path)
    assert [(f["severity"], f["line"]) for f in found] == [("warning", 11), ("error", 11)]
    assert "'default' (in values.yaml): 'replicas' is not a field" in found[0]["message"]
    _write(tmp_path, {"gpu/values.yaml": _config_map(FIXED).removeprefix("- ")})
    assert _findings(tmp_path) == []


def test_kustomization_named_alone_gives_its_folders_findings(tmp_path: Path, monkeypatch) -> None:
    """Pre-commit names only the changed kustomization.yaml, from the repository's root: its helmCharts are read as
    when its folder is checked (the overlay itself is still rendered), once however often it is named."""
    inline = "  valuesInline:\n" + textwrap.indent(_config_map(BROKEN).removeprefix("- "), " " * 4)
    _write(
        tmp_path,
        {
            "infra/nvidia-device-plugin/kustomization.yaml": _kustomization(PLUGIN_CHART + inline),
            "infra/nvidia-device-plugin/namespace.yaml": NAMESPACE,
        },
    )
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    monkeypatch.chdir(tmp_path)

    def found(*args: str) -> list[tuple[str, str, int]]:
        run = run_cli("check", *args, "--format", "json")
        assert run.exit_code in (0, 1), run.stderr
        return [
            (f["path"], f["severity"], f["line"])
            for f in json.loads(run.stdout)["findings"]
            if f["rule"] == "device-plugin-config"
        ]

    named = "infra/nvidia-device-plugin/kustomization.yaml"
    expected = [(named, "warning", 18), (named, "error", 20)]
    assert found("infra/nvidia-device-plugin") == expected
    assert found(named) == expected
    assert found("infra/nvidia-device-plugin", named, "./" + named) == expected
    fixed = "  valuesInline:\n" + textwrap.indent(_config_map(FIXED).removeprefix("- "), " " * 4)
    _write(tmp_path, {named: _kustomization(PLUGIN_CHART + fixed)})
    assert found(named) == []


RENAMING = """\
version: v1
sharing:
  timeSlicing:
    renameByDefault: true
    resources:
      - name: nvidia.com/gpu
        replicas: 4
"""


def test_helmfile_rename_by_default_renames_the_resource_pods_ask_for(tmp_path: Path) -> None:
    """Issue #29's time-slicing with renameByDefault, given as a helmfile release's values: the plugin advertises
    nvidia.com/gpu.shared, and a Job asking for nvidia.com/gpu waits; with a `set:` on the config the helmfile
    release's configuration is not known, and nothing is said."""
    job = JOB.replace("nvidia.com/mig-3g.40gb", "nvidia.com/gpu")
    _write(tmp_path, {"helmfile.yaml": _helmfile(_config_map(RENAMING)), "jobs/train.yaml": job})
    found = _findings(tmp_path)
    assert len(found) == 1 and "shares it as nvidia.com/gpu.shared (renameByDefault: true)" in found[0]["message"]
    assert found[0]["path"].endswith("train.yaml")
    set_default = "    set:\n      - name: config.default\n        value: other\n"
    _write(tmp_path, {"helmfile.yaml": _helmfile(_config_map(RENAMING), extra=set_default)})
    assert _findings(tmp_path) == []
