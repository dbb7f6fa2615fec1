"""KAI Scheduler's admission webhook: the runtimeClassName it writes into a pod, by release.

The Configs are shaped as the KAI operator's singleton (NVIDIA/KAI-Scheduler pkg/apis/kai/v1 Config,
``kai-config``: the chart writes admission.service.image.tag from its release), the pods as KAI's examples
submit them (a queue label, ``schedulerName: kai-scheduler``, ``gpu-fraction`` for a shared GPU)."""

from __future__ import annotations

from typing import Any

import yaml

from gpulint.kube.kai_admission import KaiAdmission, admission_of, injected_runtime_class


def _config(admission: str, spec: str = "") -> KaiAdmission:
    """A KAI Config with these lines under spec.admission (and these other spec lines)."""
    text = f"""\
apiVersion: kai.scheduler/v1
kind: Config
metadata:
  name: kai-config
spec:
  namespace: kai-scheduler
{spec}  admission:
    replicas: 1
    gpuSharing: true
{admission}"""
    return admission_of(yaml.safe_load(text))


def _tagged(tag: str, *lines: str) -> str:
    return "".join(f"    {line}\n" for line in (f"service: {{image: {{name: admission, tag: {tag}}}}}", *lines))


def _pod(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(spec, annotations) of a Pod."""
    pod = yaml.safe_load(text)
    return pod["spec"], pod["metadata"].get("annotations") or {}


WHOLE = _pod("""\
apiVersion: v1
kind: Pod
metadata: {name: gpu-pod, labels: {kai.scheduler/queue: team-a}}
spec:
  schedulerName: kai-scheduler
  containers:
  - name: main
    image: ubuntu
    args: [sleep, infinity]
    resources: {limits: {nvidia.com/gpu: "1"}}
""")
FRACTION = _pod("""\
apiVersion: v1
kind: Pod
metadata: {name: gpu-sharing, labels: {kai.scheduler/queue: team-a}, annotations: {gpu-fraction: "0.5"}}
spec:
  schedulerName: kai-scheduler
  containers:
  - {name: main, image: ubuntu, args: [sleep, infinity]}
""")
CPU = (FRACTION[0], {})


def _class(pod: tuple[dict[str, Any], dict[str, Any]], kai: KaiAdmission, **spec: Any) -> str | None:
    return injected_runtime_class({**pod[0], **spec}, pod[1], kai)


def test_v0_13_gives_every_gpu_pod_the_default_class() -> None:
    kai = _config(_tagged("v0.13.4"))
    assert _class(WHOLE, kai) == "nvidia"
    assert _class(FRACTION, kai) == "nvidia"
    assert _class(CPU, kai) is None
    assert _class(WHOLE, kai, schedulerName="default-scheduler") is None
    assert _class(WHOLE, kai, runtimeClassName="kata") is None


def test_an_empty_class_turns_it_off_and_older_releases_have_none() -> None:
    assert _class(WHOLE, _config(_tagged("v0.13.4", 'gpuPodRuntimeClassName: ""'))) is None
    assert _class(WHOLE, _config(_tagged("v0.9.3"))) is None


def test_v0_16_gives_fraction_pods_only() -> None:
    kai = _config(_tagged("v0.16.0", "gpuPodRuntimeClassName: legacy"))
    assert _class(WHOLE, kai) is None
    assert _class(FRACTION, kai) == "legacy"
    kai = _config(_tagged("v0.16.1", "gpuPodRuntimeClassName: legacy", "gpuFractionRuntimeClassName: cdi"))
    assert _class(FRACTION, kai) == "cdi"


def test_without_a_release_only_a_named_class_for_fraction_pods() -> None:
    assert _class(FRACTION, _config("")) is None
    kai = _config("    gpuPodRuntimeClassName: nvidia\n")
    assert _class(FRACTION, kai) == "nvidia"
    assert _class(WHOLE, kai) is None


def test_the_configs_scheduler_name() -> None:
    kai = _config(_tagged("v0.13.4"), spec="  global:\n    schedulerName: kai\n")
    assert _class(WHOLE, kai) is None
    assert _class(WHOLE, kai, schedulerName="kai") == "nvidia"
