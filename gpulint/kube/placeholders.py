"""Text still to be filled in before a program reads it: the one definition of a placeholder.

Two readers look for placeholders, and they differ on purpose:
- A manifest's field (lint/inputs/loader.py): the patterns below. A field that holds one is left out of the
  checks and the file is reported as a template (``not-rendered``).
- A document held in a ConfigMap's data (held_pods.py), which a program reads and makes pods from:
  HELD_FILL_IN, any ``${`` or ``{{`` in a key or value. It is broader than SUBSTITUTION (no name needs to
  follow: the field is dropped, which only makes the held pod not all known) and it leaves ``$name`` alone,
  because a held document's program reads that as written: ARC's hook template names its job container
  ``$job`` (actions/runner-container-hooks v0.8.1, packages/k8s/src/hooks/constants.ts). The documentation forms
  (``<name>``, the marker words) are not looked for in held documents.
"""

from __future__ import annotations

import re

# Values still to be filled in, anywhere in a field's text: envsubst and Flux post-build substitution
# (${VAR}, ${VAR:-default}, and envsubst's bare $VAR), a template expression left in a string ({{ ... }}:
# Argo parameters, a Jinja or Go template quoted in YAML), and a documentation placeholder (<ACCOUNT_ID>,
# <your-bucket>). No Kubernetes field outside free text holds a '$' name, '{{' or '<word>' as a value.
SUBSTITUTION = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=?+][^}]*)?\}")
# The same, in a one-line value of a field (a long or multi-line string is a document of its own: a
# dashboard's JSON with $datasource, a description with <namespace>/<name>), and a double-underscore word that a
# script's sed or a token-replace step fills in (`name: stress-pod-__INDEX__`, `replicas: __REPLICAS__`): no
# Kubernetes name, label or number holds '__' and capitals. An expression in ``${...}`` is one too: kro fills
# ``${schema.spec.appName}`` in from its CEL when it makes the resources of a ResourceGraphDefinition
# (kubernetes-sigs/kro, docs "Simple Schema" and "CEL expressions"), as Terraform's templatefile fills ``${var.name}``.
SHORT_PLACEHOLDER = re.compile(
    r"\$[A-Za-z_][A-Za-z0-9_]*|\$\{[^{}\n]+\}|\{\{[^{}]*\}\}|<[A-Za-z_][-A-Za-z0-9_.]*>|__[A-Z][A-Z0-9_]*__"
)
SHORT = 253
# A fill-in in words, as the whole value (`lun: <ADD LUN ID Here>`, `<your bucket name>`): documentation asks the
# reader to write something there; no Kubernetes value is words in angle brackets.
WORDED_PLACEHOLDER = re.compile(r"<[A-Za-z_][-A-Za-z0-9_.]*(?: [-A-Za-z0-9_.]+)+>")
# A whole value that says it is to be replaced (PLACEHOLDER_NUM_NODES, REPLACE_ME, YOUR_BUCKET, CHANGEME), as
# scripts that sed a manifest before applying it write them: no Kubernetes field holds such a word.
MARKER_WORDS = ("PLACEHOLDER", "REPLACE", "CHANGE", "YOUR", "TODO", "FIXME", "FILL", "FILLED")
MARKER_PLACEHOLDER = re.compile(rf"(?:{'|'.join(MARKER_WORDS)})(?:_?ME)?(?:_[A-Z0-9]+)*")
# The same as a mapping's key (`limits: {"${GPU_RESOURCE}": 1}`, `"FILLED_BY_VALIDATOR": 1`): envsubst and a
# program's string replacement fill keys in as they fill values. `${VAR}` anywhere in the key, the other forms
# as the whole key, and the bare `$NAME` form in capitals only: a schema's `$ref` or `$schema` is a key as written.
KEY_PLACEHOLDER = re.compile(
    rf"\$\{{[A-Za-z_][A-Za-z0-9_]*\}}|\$[A-Z_][A-Z0-9_]*|\{{\{{[^{{}}]*\}}\}}|<[A-Za-z_][-A-Za-z0-9_.]*>|{MARKER_PLACEHOLDER.pattern}"
)
# A key that opens an envsubst expression with one of its operators (drone/envsubst, as clusterctl expands templates:
# `/` replace, `#` and `%` trim, `:` default or substring, `^` and `,` case), whose `}` YAML may read into the value:
# cluster-api-provider-aws's config/rbac annotation `${AWS_CONTROLLER_IAM_ROLE/#arn/eks.amazonaws.com/role-arn: arn}`
# becomes `eks.amazonaws.com/role-arn: arn:...` or nothing. Matched at the key's start.
KEY_EXPRESSION = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*[/#%:^,]")
# A key or value of a held document still to be filled in by whatever renders the ConfigMap (envsubst, Jinja,
# Go templates): see the module's docstring for how it differs from the patterns above.
HELD_FILL_IN = re.compile(r"\$\{|\{\{")
