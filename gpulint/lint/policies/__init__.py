"""Policies as code: team rules in CEL (``gpulint.io/v1alpha1`` Policy), and the cluster's
ValidatingAdmissionPolicies (with their bindings and params) evaluated offline.

A policy becomes a rule like any built-in one: its id is ``metadata.name``, its docs come
from ``spec.docs``, and its findings go through the same suppressions, formats, exit codes
and webhook. Policies are validated when loaded (shape and CEL) with file:line:col errors.
"""

from gpulint.lint.policies.evaluation import (
    evaluate,
    failed_to_evaluate,
    inventory_view,
    parse_field_path,
    pod_specs,
    policy_check,
    policy_engine,
)
from gpulint.lint.policies.loading import (
    BUILTIN_PREFIX,
    LibraryPolicy,
    cached_policies,
    cluster_policies,
    library,
    load_policies,
    policy_signature,
    resolve,
)
from gpulint.lint.policies.matching import resource_name, selector_matches
from gpulint.lint.policies.model import POLICY_API, VAP_API, Expression, Match, Policy, PolicyError, Validation

__all__ = [
    "BUILTIN_PREFIX",
    "LibraryPolicy",
    "library",
    "POLICY_API",
    "VAP_API",
    "Expression",
    "Match",
    "Policy",
    "PolicyError",
    "Validation",
    "cached_policies",
    "cluster_policies",
    "evaluate",
    "failed_to_evaluate",
    "inventory_view",
    "load_policies",
    "parse_field_path",
    "pod_specs",
    "policy_check",
    "policy_engine",
    "policy_signature",
    "resolve",
    "resource_name",
    "selector_matches",
]
