"""The MIG profiles each NVIDIA GPU offers, by the product name GPU feature discovery labels a node with
(nvidia.com/gpu.product): NVIDIA's MIG user guide (supported profiles), as
GoogleCloudPlatform/container-engine-accelerators pkg/gpu/nvidia/mig/mig.go (gpuPartitionSizeMaxCount) and the
GPU operator's default mig-parted configuration (assets/state-mig-manager/0400_configmap.yaml: A100-40GB,
A100-80GB, A30-24GB) list them. A profile's media-extension variants (``+me``) share its base name.
"""

from __future__ import annotations

import re

_A100_40GB = ("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")
_80GB = ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")  # A100 80GB, H100 80GB
_A30 = ("1g.6gb", "2g.12gb", "4g.24gb")
_H200 = ("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb")
_B200 = ("1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb")
_GB200 = ("1g.23gb", "1g.47gb", "2g.47gb", "3g.93gb", "4g.93gb", "7g.186gb")

# (GFD product pattern, profiles): the first pattern that matches names the GPU; a product none matches is
# not judged.
_PRODUCTS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"A100-(?:SXM4|PCIE)-40GB"), _A100_40GB),
    (re.compile(r"A100-(?:SXM4-80GB|80GB-PCIe)"), _80GB),
    (re.compile(r"H100-(?:80GB-HBM3|SXM5-80GB|PCIe)(?:-|$)"), _80GB),
    (re.compile(r"(?:^|-)A30(?:-|$)"), _A30),
    (re.compile(r"(?:^|-)H200(?:-|$)"), _H200),
    (re.compile(r"(?:^|-)GB200(?:-|$)"), _GB200),
    (re.compile(r"(?:^|-)B200(?:-|$)"), _B200),
)
_SUFFIX = re.compile(r"-(?:SHARED|MIG-.*)$")  # GFD's time-slicing and single-strategy suffixes


def profiles_of(product: str) -> tuple[str, ...] | None:
    """The MIG profiles of the GPU GFD names ``product`` (None: a GPU the table does not hold)."""
    name = _SUFFIX.sub("", product)
    return next((profiles for pattern, profiles in _PRODUCTS if pattern.search(name)), None)


def base_profile(profile: str) -> str:
    """A profile without its extension: 1g.10gb+me -> 1g.10gb."""
    return profile.partition("+")[0]
