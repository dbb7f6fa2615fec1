"""Settings made in a ConfigMap are read from it (issue #29 section 3): a GPU visibility variable or a launcher's
size that a container takes through ``env[].valueFrom.configMapKeyRef`` or ``envFrom[].configMapRef`` is the
ConfigMap's value - from the linted files, else from the inventory (``kubectl get configmaps -A -o yaml``)."""

from __future__ import annotations

from pathlib import Path

from rule_harness import assert_findings

VISIBILITY = "gpu-visibility-override"
PARALLEL = "parallelism-mismatch"

# A training Deployment that takes its settings from a ConfigMap, as the NVIDIA and Run:ai examples write it.
TRAIN = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: trainer, namespace: ml}}
spec:
  selector: {{matchLabels: {{app: trainer}}}}
  template:
    metadata: {{labels: {{app: trainer}}}}
    spec:
      containers:
      - name: train
        image: registry.example.com/train:1
{env}
        resources: {{limits: {{nvidia.com/gpu: 2}}}}
"""
KEY_REF = """\
        env:
        - name: CUDA_VISIBLE_DEVICES
          valueFrom: {configMapKeyRef: {name: gpu-env, key: CUDA_VISIBLE_DEVICES}}"""
ENV_FROM = """\
        envFrom:
        - configMapRef: {name: gpu-env}"""


def config_map(data: str, namespace: str = "ml", name: str = "gpu-env") -> str:
    return f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {namespace}}}\ndata: {data}\n"


def test_a_visibility_variable_from_a_config_map_key_is_read():
    found = assert_findings(
        VISIBILITY,
        TRAIN.format(env=KEY_REF) + config_map('{CUDA_VISIBLE_DEVICES: "2,3"}'),
        [(14, 22, "sets CUDA_VISIBLE_DEVICES=2,3 (from ConfigMap 'gpu-env', key 'CUDA_VISIBLE_DEVICES') but sees 2")],
    )
    assert "so the process gets none" in found[0].message
    assert_findings(VISIBILITY, TRAIN.format(env=KEY_REF) + config_map('{CUDA_VISIBLE_DEVICES: "0,1"}'), [])


def test_a_visibility_variable_from_env_from_is_read_at_the_source():
    found = assert_findings(
        VISIBILITY,
        TRAIN.format(env=ENV_FROM) + config_map("{NVIDIA_VISIBLE_DEVICES: all, NCCL_DEBUG: INFO}"),
        [(13, 11, "sets NVIDIA_VISIBLE_DEVICES=all (from ConfigMap 'gpu-env', key 'NVIDIA_VISIBLE_DEVICES') by hand")],
    )
    assert "replaces the GPUs the device plugin allocated" in found[0].message
    prefixed = ENV_FROM.replace("{name: gpu-env}", "{name: gpu-env}\n          prefix: CUDA_")
    assert_findings(
        VISIBILITY,
        TRAIN.format(env=prefixed) + config_map('{VISIBLE_DEVICES: "0"}'),
        [(13, 11, "CUDA_VISIBLE_DEVICES=0 (from ConfigMap 'gpu-env', key 'VISIBLE_DEVICES') shows the process 1")],
    )


def test_an_env_entry_wins_over_env_from_and_later_sources_over_earlier():
    """The kubelet applies envFrom sources in order, then env: the value the process sees is the last one."""
    written = ENV_FROM + '\n        env:\n        - {name: CUDA_VISIBLE_DEVICES, value: "0,1"}'
    assert_findings(VISIBILITY, TRAIN.format(env=written) + config_map('{CUDA_VISIBLE_DEVICES: "5"}'), [])
    two = ENV_FROM + "\n        - configMapRef: {name: site-env}"
    text = TRAIN.format(env=two) + config_map('{CUDA_VISIBLE_DEVICES: "5"}')
    assert_findings(VISIBILITY, text + config_map('{CUDA_VISIBLE_DEVICES: "0,1"}', name="site-env"), [])


def test_a_config_map_not_held_of_another_namespace_or_in_two_copies_is_unknown():
    text = TRAIN.format(env=KEY_REF)
    assert_findings(VISIBILITY, text, [])
    assert_findings(VISIBILITY, text + config_map('{CUDA_VISIBLE_DEVICES: "2,3"}', namespace="other"), [])
    two = text + config_map('{CUDA_VISIBLE_DEVICES: "2,3"}') + config_map('{CUDA_VISIBLE_DEVICES: "0,1"}')
    assert_findings(VISIBILITY, two, [])
    assert_findings(VISIBILITY, TRAIN.format(env=ENV_FROM) + config_map("{NCCL_DEBUG: INFO}"), [])


def inventory(tmp_path: Path, *config_maps: str) -> Path:
    """The inventory as `kubectl get configmaps -A -o yaml` writes it."""
    items = "".join(f"- apiVersion: v1\n  kind: ConfigMap\n  {item}\n" for item in config_maps)
    path = tmp_path / "configmaps.yaml"
    path.write_text(f"apiVersion: v1\nkind: List\nitems:\n{items}", encoding="utf-8")
    return path


def test_a_config_map_only_the_inventory_holds_is_read(tmp_path: Path):
    cluster = inventory(
        tmp_path,
        'metadata: {name: gpu-env, namespace: ml}\n  data: {CUDA_VISIBLE_DEVICES: "2,3"}',
        'metadata: {name: gpu-env, namespace: staging}\n  data: {CUDA_VISIBLE_DEVICES: "0,1"}',
    )
    text = TRAIN.format(env=KEY_REF)
    assert_findings(VISIBILITY, text, [(14, 22, "sets CUDA_VISIBLE_DEVICES=2,3 (from ConfigMap")], inventory=cluster)
    # the change under review replaces the cluster's copy
    assert_findings(VISIBILITY, text + config_map('{CUDA_VISIBLE_DEVICES: "0,1"}'), [], inventory=cluster)
    assert_findings(VISIBILITY, text.replace("namespace: ml", "namespace: staging"), [], inventory=cluster)


def test_an_inventory_config_map_holding_a_file_is_not_kept(tmp_path: Path):
    """A ConfigMap with a long value (a file, a certificate) keeps no values: what its envFrom defines is unknown,
    so an env entry of the same name in an earlier source is not taken as the value."""
    long = "x" * 2048
    cluster = inventory(
        tmp_path,
        f'metadata: {{name: gpu-env, namespace: ml}}\n  data: {{CUDA_VISIBLE_DEVICES: "2,3", ca.crt: "{long}"}}',
    )
    assert_findings(VISIBILITY, TRAIN.format(env=KEY_REF), [], inventory=cluster)


VLLM = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: inference}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "$(TP)"]
        env: [{name: TP, valueFrom: {configMapKeyRef: {name: vllm-config, key: tensor-parallel}}}]
        resources: {limits: {nvidia.com/gpu: 4}}
"""


def test_a_launcher_size_from_an_inventory_config_map(tmp_path: Path):
    cluster = inventory(tmp_path, 'metadata: {name: vllm-config, namespace: inference}\n  data: {tensor-parallel: "8"}')
    assert_findings(
        PARALLEL, VLLM, [(12, 91, "vLLM starts 8 GPU processes (tensor-parallel-size 8)")], inventory=cluster
    )
    assert_findings(PARALLEL, VLLM, [])  # without the inventory: unknown


def test_the_values_an_inventory_keeps_are_bounded(monkeypatch, tmp_path: Path):
    """Past the budget of kept characters, a ConfigMap keeps its keys but no values: they read as unknown."""
    import gpulint.lint.world.inventory as inventory_module

    cluster = inventory(tmp_path, 'metadata: {name: gpu-env, namespace: ml}\n  data: {CUDA_VISIBLE_DEVICES: "2,3"}')
    monkeypatch.setattr(inventory_module, "MAX_KEPT_TOTAL", 10)
    assert_findings(VISIBILITY, TRAIN.format(env=KEY_REF), [], inventory=cluster)
    monkeypatch.setattr(inventory_module, "MAX_KEPT_TOTAL", 64)
    assert_findings(VISIBILITY, TRAIN.format(env=KEY_REF), [(14, 22, "CUDA_VISIBLE_DEVICES=2,3")], inventory=cluster)
