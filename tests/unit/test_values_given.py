"""render/values_given: the chart's candidate files are read once per chart, then searched per value."""

from __future__ import annotations

from support.trees import write_tree

from gpulint.lint.inputs.render import values_given
from gpulint.lint.inputs.render.values_given import GivenElsewhere


def _chart(root, values: str, ci_values: str):
    """deploy/charts/inference with its values.yaml and ci/gpu-values.yaml, and deploy/install.sh passing --set."""
    chart = root / "deploy" / "charts" / "inference"
    write_tree(
        root,
        {
            "deploy/charts/inference/Chart.yaml": "apiVersion: v2\nname: inference\nversion: 0.1.0\n",
            "deploy/charts/inference/templates/.keep": "",
            "deploy/charts/inference/values.yaml": values,
            "deploy/charts/inference/ci/gpu-values.yaml": ci_values,
            "deploy/install.sh": "helm install x ./charts/inference --set image.tag=v1\n",
        },
    )
    return chart


def test_each_file_is_read_once_for_all_the_values_judged(tmp_path, monkeypatch):
    chart = _chart(tmp_path, "model:\n  name: ''\n", "model:\n  name: llama\ngpus: 2\n")
    reads: list[str] = []
    real = values_given.read_head

    def counted(path: str, limit: int) -> bytes:
        reads.append(path)
        return real(path, limit)

    monkeypatch.setattr(values_given, "read_head", counted)
    given = GivenElsewhere(str(chart), str(tmp_path))
    assert given.find(["model", "name"], "") == "deploy/charts/inference/ci/gpu-values.yaml"
    assert given.find(["gpus"]) == "deploy/charts/inference/ci/gpu-values.yaml"
    assert given.find(["image", "tag"]) == "deploy/install.sh"
    assert given.find(["image", "tag"], "v1") is None  # the same value as the chart's: not another
    assert given.find(["replicas"]) is None
    assert reads and len(reads) == len(set(reads))  # five questions, each file read once


def test_a_file_ignored_or_excluded_gives_no_value(repo):
    """The candidates are walked as `gpulint check DIR` walks: .gitignore and the configured exclude honoured."""
    chart = _chart(repo, "gpus: 1\n", "gpus: 2\n")
    (repo / "deploy" / "docs").mkdir()
    (repo / "deploy" / "docs" / "guide.md").write_text("helm install x ./charts/inference --set model.name=llama\n")
    assert GivenElsewhere(str(chart), str(repo)).find(["image", "tag"]) == "deploy/install.sh"
    assert GivenElsewhere(str(chart), str(repo)).find(["model", "name"]) == "deploy/docs/guide.md"
    (repo / ".git").mkdir()
    (repo / ".gitignore").write_text("install.sh\ndocs/\n")
    assert GivenElsewhere(str(chart), str(repo)).find(["image", "tag"]) is None
    assert GivenElsewhere(str(chart), str(repo)).find(["model", "name"]) is None
    assert GivenElsewhere(str(chart), str(repo)).find(["gpus"], 1) == "deploy/charts/inference/ci/gpu-values.yaml"
    assert GivenElsewhere(str(chart), str(repo), ["ci"]).find(["gpus"], 1) is None
