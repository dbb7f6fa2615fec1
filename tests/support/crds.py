"""A CustomResourceDefinition and an instance of it, as a platform team ships them beside its manifests: the
linted-CRD tests (test_linted_crds.py) and the webhook's review of a custom resource use them; and crd(), which
writes the CRDs cut from real repositories (Kthena, AIBrix, Seldon) from the properties that matter."""

import textwrap

# A CRD of one served and stored version as controller-gen writes it: apiVersion, kind and metadata listed at the
# schema's root, the names derived from the kind.
_ONE_VERSION = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
spec:
  group: {group}
  names: {{kind: {kind}, listKind: {kind}List, plural: {plural}, singular: {singular}}}
  scope: Namespaced
  versions:
  - name: {version}
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {{type: string}}
          kind: {{type: string}}
          metadata: {{type: object}}
          spec:
"""


def crd(group: str, kind: str, spec: str, version: str = "v1alpha1") -> str:
    """A namespaced CRD of ``group`` and ``kind`` at ``version``, whose spec has the schema ``spec`` (YAML, as it
    stands under ``spec:``, at any indentation); the rest is controller-gen's boilerplate."""
    singular = kind.lower()
    head = _ONE_VERSION.format(group=group, kind=kind, plural=f"{singular}s", singular=singular, version=version)
    return head + textwrap.indent(textwrap.dedent(spec).strip("\n"), " " * 12) + "\n"


# A kubebuilder-generated CRD as a platform team ships it beside its manifests (controller-gen
# layout: apiVersion/kind/metadata listed at the root, status subresource, two versions).
CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: finetunes.ml.example.com
spec:
  group: ml.example.com
  names: {kind: FineTune, listKind: FineTuneList, plural: finetunes, singular: finetune}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: false
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {model: {type: string}}}
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [model, workers]
            properties:
              model: {type: string}
              workers:
                type: integer
                minimum: 1
              maxUnavailable:
                x-kubernetes-int-or-string: true
              strategy:
                type: string
                default: FSDP
                enum: [FSDP, DDP]
              hyperparameters:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              podTemplate:
                type: object
                x-kubernetes-embedded-resource: true
                x-kubernetes-preserve-unknown-fields: true
              output:
                type: object
                required: [bucket]
                properties:
                  bucket: {type: string}
          status:
            type: object
            properties:
              phase: {type: string}
"""


INSTANCE = """
apiVersion: ml.example.com/v1
kind: FineTune
metadata:
  name: llama-sft
  namespace: ml
spec:
  model: meta-llama/Llama-3.1-8B
  workers: 4
  maxUnavailable: 25%
  hyperparameters:
    learning_rate: 0.0002
    lora: {r: 16, alpha: 32}
  podTemplate:
    apiVersion: v1
    kind: PodTemplate
    metadata: {name: worker}
    template:
      spec:
        containers: [{name: trainer, image: nvcr.io/nvidia/pytorch:25.01-py3}]
  output:
    bucket: s3://models/llama-sft
"""
