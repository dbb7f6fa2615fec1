"""env-reference-invalid: a GPU pod's environment from a ConfigMap or Secret of another namespace (issue #29
sections 3 and 4). The kubelet reads them in the pod's namespace only; a missing one is CreateContainerConfigError
unless the reference is optional. An error from a complete catalog, info otherwise."""

from __future__ import annotations

from pathlib import Path

from rule_harness import assert_findings, findings_of

from gpulint.lint.inputs.linted_set import secret_outline

RULE = "env-reference-invalid"
SECRETS = {"complete": ["Secret"]}

# A fine-tuning Job copied into a team's namespace, its NCCL settings and Hugging Face token left behind.
JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {{name: finetune, namespace: {namespace}}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: nvcr.io/nvidia/pytorch:24.05-py3
        envFrom:
        - configMapRef: {{name: nccl-env{optional}}}
        env:
        - name: HF_TOKEN
          valueFrom: {{secretKeyRef: {{name: hf-token, key: token{optional}}}}}
        resources:
          limits: {{{resource}: 1}}
"""
SETTINGS = """\
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: nccl-env, namespace: {namespace}}}
data: {{NCCL_DEBUG: INFO}}
---
apiVersion: v1
kind: Secret
metadata: {{name: hf-token, namespace: {namespace}}}
stringData: {{token: hf_xxx}}
"""


def job(namespace: str = "research", settings: str | None = "default", optional: str = "", gpu: bool = True) -> str:
    resource = "nvidia.com/gpu" if gpu else "cpu"
    text = JOB.format(namespace=namespace, optional=optional, resource=resource)
    return text + (SETTINGS.format(namespace=settings) if settings is not None else "")


def test_settings_of_another_namespace_with_a_complete_catalog_are_errors():
    found = assert_findings(
        RULE,
        job(),
        [
            (12, 32, "ConfigMap 'nccl-env' is only in namespace default, not in the pod's namespace research: "),
            (15, 44, "Secret 'hf-token' is only in namespace default, not in the pod's namespace research: "),
        ],
        config={"complete": ["ConfigMap", "Secret"]},
    )
    assert all(f.severity == "error" for f in found)
    assert 'fails to start with CreateContainerConfigError\nconfigmap "nccl-env" not found' in found[0].message
    assert 'secret "hf-token" not found' in found[1].message


def test_settings_of_another_namespace_without_a_catalog_are_info():
    found = findings_of(RULE, job())
    assert [(f.line, f.severity) for f in found] == [(12, "info"), (15, "info")]
    assert "declare the kind complete in .gpulint.yaml (complete: [ConfigMap])" in found[0].message
    assert "give --inventory" not in found[1].message  # no inventory lists Secrets


def test_a_config_map_found_nowhere_is_an_error_when_the_inventory_lists_config_maps(tmp_path: Path):
    listed = tmp_path / "configmaps.yaml"
    listed.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n"
        "  metadata: {name: kube-root-ca.crt, namespace: research}\n  data: {ca.crt: x}\n",
        encoding="utf-8",
    )
    assert_findings(
        RULE,
        job(settings=None),
        [(12, 32, "ConfigMap 'nccl-env' does not exist: container 'train' fails")],
        inventory=listed,
    )
    assert_findings(RULE, job(settings=None), [])  # no catalog: a chart or an operator may make it


def test_a_config_map_in_the_inventory_s_namespace_of_the_pod_resolves(tmp_path: Path):
    listed = tmp_path / "configmaps.yaml"
    listed.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nccl-env, namespace: research}\ndata: {NCCL_DEBUG: WARN}\n",
        encoding="utf-8",
    )
    found = findings_of(RULE, job(), inventory=listed, config=SECRETS)
    assert [(f.line, f.severity) for f in found] == [(15, "error")]  # the Secret only


def test_optional_references_copies_in_the_pod_s_namespace_and_pods_without_gpus_are_silent():
    complete = {"complete": ["ConfigMap", "Secret"]}
    assert_findings(RULE, job(optional=", optional: true"), [], config=complete)
    assert_findings(RULE, job(settings="research"), [], config=complete)
    assert_findings(RULE, job(gpu=False), [], config=complete)
    unnamespaced = job(settings=None) + SETTINGS.format(namespace="default").replace(", namespace: default", "")
    assert_findings(RULE, unnamespaced, [], config=complete)  # applied to whatever namespace the tool targets


def test_a_secret_crosses_files_as_its_name_and_keys_only():
    outline = secret_outline(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s"},
            "data": {"a": "c2VjcmV0"},
            "stringData": {"b": "x"},
        }
    )
    assert outline == {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"a": "", "b": ""}}


def test_a_key_the_config_map_in_the_pod_s_namespace_lacks():
    """A typo in the key: the kubelet's `couldn't find key NCCL_SOCKET_IFNAM in ConfigMap research/nccl-env`."""
    text = (
        JOB.format(namespace="research", optional="", resource="nvidia.com/gpu")
        .replace("        - configMapRef: {name: nccl-env}\n", "")
        .replace("envFrom:\n", "envFrom: []\n")
    )
    text = text.replace(
        "        env:\n",
        "        env:\n        - name: NCCL_SOCKET_IFNAME\n"
        "          valueFrom: {configMapKeyRef: {name: nccl-env, key: NCCL_SOCKET_IFNAM}}\n",
    )
    settings = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: nccl-env, namespace: research}\n"
    secret = "---\napiVersion: v1\nkind: Secret\nmetadata: {name: hf-token, namespace: research}\n"
    found = assert_findings(
        RULE,
        text + settings + "data: {NCCL_SOCKET_IFNAME: eth0, NCCL_DEBUG: INFO}\n" + secret + "data: {token: aGY=}\n",
        [(14, 62, "couldn't find key NCCL_SOCKET_IFNAM in ConfigMap research/nccl-env: container 'train' fails")],
    )
    assert "did you mean 'NCCL_SOCKET_IFNAME'?" in found[0].message
    good = text.replace("key: NCCL_SOCKET_IFNAM}", "key: NCCL_SOCKET_IFNAME}")
    assert_findings(RULE, good + settings + "data: {NCCL_SOCKET_IFNAME: eth0}\n" + secret + "data: {token: aGY=}\n", [])
    # the Secret's key from stringData; an optional key; two differing copies of the ConfigMap: nothing said
    assert_findings(
        RULE, good + settings + "data: {NCCL_SOCKET_IFNAME: eth0}\n" + secret + "stringData: {token: x}\n", []
    )
    optional = text.replace("key: NCCL_SOCKET_IFNAM}", "key: NCCL_SOCKET_IFNAM, optional: true}")
    assert_findings(RULE, optional + settings + "data: {NCCL_DEBUG: INFO}\n" + secret + "data: {token: aGY=}\n", [])
    two = text + settings + "data: {NCCL_DEBUG: INFO}\n" + settings + "data: {NCCL_SOCKET_IFNAM: eth0}\n"
    assert_findings(RULE, two + secret + "data: {token: aGY=}\n", [])
    wrong_secret_key = good + settings + "data: {NCCL_SOCKET_IFNAME: eth0}\n" + secret + "data: {hf-token: aGY=}\n"
    assert_findings(RULE, wrong_secret_key, [(16, 59, "couldn't find key token in Secret research/hf-token")])
