"""A CustomResourceDefinition and an instance of it, as a platform team ships them beside its manifests: the
linted-CRD tests (test_linted_crds.py) and the webhook's review of a custom resource use them."""

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
