"""A resource.k8s.io object as the API server reads it before it validates it: Go's decoder (a missing or null
field is its zero value; a quantity string it cannot parse ends the request) and the create strategy
(PrepareForCreate drops the fields of disabled gates). Which schema errors that reading makes moot, and what
the decoder itself refuses; schema-invalid words them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube.dra.gates import dropped_on_create
from gpulint.kube.features import FeatureGates
from gpulint.kube.refs import Path
from gpulint.kube.validation.errors import FieldError
from gpulint.kube.validation.resource import ZERO_VALUED_REQUIRED, undecodable_quantities

DRA_GROUP = "resource.k8s.io"
# The schema's rules on values that decoding does not enforce (a missing or null field is a zero value to Go):
# in a field the API server drops before validation they refuse nothing
VALUE_RULES = frozenset(
    {"Required", "Null", "Enum", "Pattern", "Format", "MinLength", "MaxLength", "Minimum", "Maximum"}
)


def moot_on_decode(
    kind: str, api_version: str, data: dict[str, Any], path: Path, rule: str, missing: str, gates: FeatureGates
) -> bool:
    """Whether the API server never raises a schema error (its ``rule``, at ``path``; ``missing``: the field a
    Required error names) on a resource.k8s.io object: it lies in a field the create strategy drops under some
    cluster the gates allow, or Go's decoder reads a zero value there (null; a required plain value whose zero is
    valid), which the DRA validation judges (api-rejected)."""
    if api_version.rpartition("/")[0] != DRA_GROUP:
        return False
    if rule in VALUE_RULES and dropped_on_create(kind, api_version, data, path, gates):
        return True
    return rule == "Null" or (rule == "Required" and missing in ZERO_VALUED_REQUIRED)


def decoding_errors(kind: str, api_version: str, data: dict[str, Any]) -> Iterator[FieldError]:
    """What the decoder refuses before validation (a 400): a resource.k8s.io quantity ParseQuantity refuses."""
    if api_version.rpartition("/")[0] == DRA_GROUP:
        yield from undecodable_quantities(kind, api_version, data)
