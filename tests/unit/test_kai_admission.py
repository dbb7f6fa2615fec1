"""KAI Scheduler's admission webhook: the runtimeClassName it writes into a pod, by release."""

from __future__ import annotations

from typing import Any

from gpulint.kube.kai_admission import admission_of, injected_runtime_class


def _config(tag: str | None = None, **admission: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"admission": dict(admission)}
    if tag is not None:
        spec["admission"]["service"] = {"image": {"tag": tag}}
    return {"apiVersion": "kai.scheduler/v1", "kind": "Config", "metadata": {"name": "kai-config"}, "spec": spec}


WHOLE = {
    "schedulerName": "kai-scheduler",
    "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
}
CPU = {"schedulerName": "kai-scheduler", "containers": [{"name": "c"}]}
FRACTION = {"gpu-fraction": "0.5"}


def test_v0_13_gives_every_gpu_pod_the_default_class() -> None:
    kai = admission_of(_config("v0.13.4"))
    assert injected_runtime_class(WHOLE, {}, kai) == "nvidia"
    assert injected_runtime_class(CPU, FRACTION, kai) == "nvidia"
    assert injected_runtime_class(CPU, {}, kai) is None
    assert injected_runtime_class({**WHOLE, "schedulerName": "default-scheduler"}, {}, kai) is None
    assert injected_runtime_class({**WHOLE, "runtimeClassName": "kata"}, {}, kai) is None


def test_an_empty_class_turns_it_off_and_older_releases_have_none() -> None:
    assert injected_runtime_class(WHOLE, {}, admission_of(_config("v0.13.4", gpuPodRuntimeClassName=""))) is None
    assert injected_runtime_class(WHOLE, {}, admission_of(_config("v0.9.3"))) is None


def test_v0_16_gives_fraction_pods_only() -> None:
    kai = admission_of(_config("v0.16.0", gpuPodRuntimeClassName="legacy"))
    assert injected_runtime_class(WHOLE, {}, kai) is None
    assert injected_runtime_class(CPU, FRACTION, kai) == "legacy"
    kai = admission_of(_config("v0.16.1", gpuPodRuntimeClassName="legacy", gpuFractionRuntimeClassName="cdi"))
    assert injected_runtime_class(CPU, FRACTION, kai) == "cdi"


def test_without_a_release_only_a_named_class_for_fraction_pods() -> None:
    assert injected_runtime_class(CPU, FRACTION, admission_of(_config())) is None
    kai = admission_of(_config(gpuPodRuntimeClassName="nvidia"))
    assert injected_runtime_class(CPU, FRACTION, kai) == "nvidia"
    assert injected_runtime_class(WHOLE, {}, kai) is None


def test_the_configs_scheduler_name() -> None:
    config = _config("v0.13.4")
    config["spec"]["global"] = {"schedulerName": "kai"}
    assert injected_runtime_class(WHOLE, {}, admission_of(config)) is None
    assert injected_runtime_class({**WHOLE, "schedulerName": "kai"}, {}, admission_of(config)) == "nvidia"
