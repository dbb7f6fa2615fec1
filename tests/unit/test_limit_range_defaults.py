"""SetDefaults_LimitRangeItem (kubernetes/kubernetes pkg/apis/core/v1/defaults.go), written once in
gpulint.kube.limit_range and read by both the LimitRanger model (limit_items) and ValidateLimitRange
(validation.core.limit_range). Items shaped like the Kubernetes docs' (concepts/policy/limit-range)."""

from __future__ import annotations

from fractions import Fraction

import yaml

from gpulint.kube.limit_range import defaulted_item
from gpulint.kube.queueing.namespace import limit_items
from gpulint.kube.validation.core import limit_range


def test_a_max_without_a_default_makes_the_default_limit_and_the_default_request():
    item = {"max": {"nvidia.com/gpu": "2", "cpu": "4"}, "default": {"cpu": "1"}}
    out = defaulted_item("Container", item)
    assert out["default"] == {"nvidia.com/gpu": "2", "cpu": "1"}  # the written default limit wins over max
    assert out["defaultRequest"] == {"nvidia.com/gpu": "2", "cpu": "1"}


def test_a_default_request_comes_from_the_default_limit_before_the_min():
    item = {"min": {"memory": "1Gi", "cpu": "100m"}, "default": {"memory": "4Gi"}, "defaultRequest": {"cpu": "250m"}}
    out = defaulted_item("Container", item)
    assert out["defaultRequest"] == {"cpu": "250m", "memory": "4Gi"}
    assert item["defaultRequest"] == {"cpu": "250m"}  # the lists given are left as written


def test_only_a_container_item_is_defaulted():
    item = {"max": {"nvidia.com/gpu": "8"}}
    assert defaulted_item("Pod", item) == {"max": {"nvidia.com/gpu": "8"}}
    assert defaulted_item(None, item) == {"max": {"nvidia.com/gpu": "8"}}


LIMIT_RANGE = yaml.safe_load("""
apiVersion: v1
kind: LimitRange
metadata: {name: gpu-defaults, namespace: ml}
spec:
  limits:
  - type: Container
    max: {nvidia.com/gpu: "2"}
    defaultRequest: {nvidia.com/gpu: "1"}
""")


def test_both_readers_see_the_same_defaulted_item():
    (item,) = limit_items(LIMIT_RANGE)
    assert item.default == (("nvidia.com/gpu", Fraction(2)),)  # from max
    assert item.default_request == (("nvidia.com/gpu", Fraction(1)),)  # as written
    # ValidateLimitRange on the same defaulted item: a GPU may not be overcommitted
    (error,) = limit_range(LIMIT_RANGE["spec"], ("spec",))
    assert "default value 2 must equal to defaultRequest value 1 in nvidia.com/gpu" in str(error)
