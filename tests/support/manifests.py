"""Small manifests that several test modules lint: the command line's three pods (an error, clean, a
warning), a pod with two DRA claims, an Argo Workflow whose podSpecPatch holds a document inside a string, and a
vLLM Deployment as charts and manifests write it."""

from __future__ import annotations

import textwrap

BAD_POD = """
apiVersion: v1
kind: Pod
metadata: {name: bad, namespace: ml}
spec:
  containers:
  - name: c
    image: i
    resources:
      requests: {nvidia.com/gpu: 1}
"""
GOOD_POD = """
apiVersion: v1
kind: Pod
metadata: {name: good}
spec:
  containers:
  - name: c
    image: i
    resources:
      limits: {nvidia.com/gpu: 1}
"""
WARN_POD = """
apiVersion: v1
kind: Pod
metadata: {name: warn}
spec:
  containers:
  - name: c
    image: i
    imagePullPolicy: Always
    resource: {}
"""

# A pod with two claims, from the ResourceClaimTemplates `a` and `b` written beside it: claim-unsatisfiable
# judges the two together on one node
TWO_CLAIM_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  resourceClaims:
  - {name: a, resourceClaimTemplateName: a}
  - {name: b, resourceClaimTemplateName: b}
  containers:
  - name: c
    image: registry.example.com/train:1.0
    resources: {claims: [{name: a}, {name: b}]}
"""

# An Argo Workflow whose podSpecPatch holds YAML inside a string ({patch}): the embedded-document tests
WORKFLOW = textwrap.dedent("""\
    apiVersion: argoproj.io/v1alpha1
    kind: Workflow
    metadata: {{name: train}}
    spec:
      entrypoint: main
      templates:
      - name: main
        podSpecPatch: '{patch}'
        container:
          image: trainer:1
          resources:
            limits: {{nvidia.com/gpu: 1}}
            requests: {{nvidia.com/gpu: 2}}
    """)


def vllm_deployment(metadata: str, container: str) -> str:
    """A vLLM Deployment as charts and manifests write it (substratusai's vllm chart, vLLM's own examples):
    ``metadata`` its metadata as written (``metadata: {name: x}``, or a block), ``container`` the fields of its
    one container after ``- name: vllm`` (dedented here). Lines are those of the text written out, for the tests
    that assert them."""
    fields = textwrap.indent(textwrap.dedent(container).strip("\n") + "\n", " " * 8)
    return (
        "apiVersion: apps/v1\nkind: Deployment\n"
        + textwrap.dedent(metadata).strip("\n")
        + "\nspec:\n  selector:\n    matchLabels: {app: vllm}\n  template:\n    metadata:\n      labels: {app: vllm}\n"
        + "    spec:\n      containers:\n      - name: vllm\n"
        + fields
    )
