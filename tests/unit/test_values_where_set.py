"""A value is read where it is set (issue #28 section 4): Kubernetes' $(VAR) from env and ConfigMaps the
linted files hold, placeholders ($VAR, ${VAR}, {{ }}, <PLACEHOLDER>) as values still to be filled in.
What cannot be read is unknown: never absent (an API default), never a schema error."""

from __future__ import annotations

from rule_harness import assert_findings, findings_of

from gpulint.kube.fields import integer

PARALLEL = "parallelism-mismatch"

PYTORCHJOB = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: llama-finetune
  namespace: ml
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: REPLICAS
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: IMAGE
            command: [torchrun, --nproc-per-node=8, train.py]
            resources:
              limits:
                nvidia.com/gpu: 8
                memory: MEMORY
"""


def job(replicas: str = "2", image: str = "registry.example.com/llama-train:1.4", memory: str = "640Gi") -> str:
    return PYTORCHJOB.replace("REPLICAS", replicas).replace("IMAGE", image).replace("MEMORY", memory)


def rules_of(text: str) -> list[tuple[str, str]]:
    return [(f.rule, f.severity) for f in findings_of(None, text) if f.rule in ("schema-invalid", "not-rendered")]


def test_envsubst_placeholders_are_values_to_fill_in_not_schema_errors():
    """`replicas: $NUM_NODES` (an envsubst template, as the AWS and Azure blueprints write them)."""
    for placeholder in ("$NUM_NODES", "${NUM_NODES}", "<NUM_NODES>", '"{{ num_nodes }}"'):
        assert rules_of(job(replicas=placeholder)) == [("not-rendered", "info")], placeholder
    assert rules_of(job(image="$REGISTRY/llama-train:$TAG")) == [("not-rendered", "info")]
    assert rules_of(job(memory="<MEMORY>")) == [("not-rendered", "info")]


def test_a_wrong_value_is_still_a_schema_error():
    assert rules_of(job(replicas="two")) == [("schema-invalid", "error")]
    assert rules_of(job(memory="lots")) == [("schema-invalid", "error")]
    assert rules_of(job()) == []


def test_prose_with_angle_brackets_is_no_placeholder():
    """A CRD's descriptions say `<namespace>/<name>`; a dashboard's JSON holds $datasource: no template."""
    crd = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: inferencepools.example.com}
spec:
  group: example.com
  names: {kind: InferencePool, plural: inferencepools}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              endpointPicker:
                type: string
                description: The endpoint picker, as <namespace>/<name>.
"""
    assert rules_of(crd) == []


def test_a_controller_s_own_variables_are_no_template():
    """Argo Workflows and Kyverno fill {{ ... }} themselves: the object is applied as written."""
    kyverno = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: require-gpu-limits}
spec:
  rules:
  - name: gpu-limits
    match: {any: [{resources: {kinds: [Pod]}}]}
    preconditions:
      all:
      - key: "{{ request.operation }}"
        operator: NotEquals
        value: DELETE
    validate:
      message: GPU requests need limits
      pattern: {spec: {containers: [{resources: {limits: {nvidia.com/gpu: "?*"}}}]}}
"""
    assert rules_of(kyverno) == []


LWS = """
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm-405b, namespace: inference}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: SIZE
    leaderTemplate:
      spec:
        containers:
        - name: vllm-leader
          image: vllm/vllm-openai:v0.10.1
          command: [sh, -c, "ray start --head && vllm serve m --tensor-parallel-size 8 --pipeline-parallel-size 2"]
          resources:
            limits: {nvidia.com/gpu: "8"}
          volumeMounts: [{name: dshm, mountPath: /dev/shm}]
        volumes: [{name: dshm, emptyDir: {medium: Memory}}]
    workerTemplate:
      spec:
        containers:
        - name: vllm-worker
          image: vllm/vllm-openai:v0.10.1
          command: [sh, -c, "ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"]
          resources:
            limits: {nvidia.com/gpu: "8"}
          volumeMounts: [{name: dshm, mountPath: /dev/shm}]
        volumes: [{name: dshm, emptyDir: {medium: Memory}}]
"""


def test_a_placeholder_group_size_is_unknown_not_one_pod():
    """size: $NUM_NODES was read as the default 1: the leader's 16 ranks were compared with its own 8 GPUs."""
    assert_findings(PARALLEL, LWS.replace("SIZE", "$NUM_NODES"), [])
    assert_findings(PARALLEL, LWS.replace("SIZE", "${NUM_NODES}"), [])
    assert_findings(PARALLEL, LWS.replace("SIZE", "2"), [])
    assert_findings(
        PARALLEL,
        LWS.replace("SIZE", "1"),
        [(13, 86, "vLLM starts 16 GPU processes (tensor-parallel-size 8 x pipeline-parallel-size 2)")],
    )


def test_integer_fields_absent_default_other_types_unknown():
    assert integer(None, 1) == 1
    assert integer(3, 1) == 3
    assert integer("$NUM_NODES", 1) is None
    assert integer(True, 1) is None


def vllm(args: str, env: str = "", config_map: str = "", namespace: str = "inference") -> str:
    server = f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm, namespace: inference}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        {args}
        {env or "ports: [{containerPort: 8000}]"}
        resources:
          limits: {{nvidia.com/gpu: 4}}
        volumeMounts: [{{name: dshm, mountPath: /dev/shm}}]
      volumes: [{{name: dshm, emptyDir: {{medium: Memory}}}}]
"""
    if not config_map:
        return server
    return (
        server
        + f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: vllm-config, namespace: {namespace}}}\n"
        + (f"data: {config_map}\n")
    )


ARGS = 'args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "$(TP)"]'
KEY_REF = "env: [{name: TP, valueFrom: {configMapKeyRef: {name: vllm-config, key: tensor-parallel}}}]"


def test_a_config_map_key_the_linted_files_hold_is_read():
    assert_findings(
        PARALLEL,
        vllm(ARGS, KEY_REF, '{tensor-parallel: "8"}'),
        [(12, 91, "vLLM starts 8 GPU processes (tensor-parallel-size 8) but container 'vllm' has 4 nvidia.com/gpu")],
    )
    assert_findings(PARALLEL, vllm(ARGS, KEY_REF, '{tensor-parallel: "4"}'), [])


def test_a_config_map_not_held_or_of_another_namespace_is_unknown():
    assert_findings(PARALLEL, vllm(ARGS, KEY_REF), [])
    assert_findings(PARALLEL, vllm(ARGS, KEY_REF, '{tensor-parallel: "8"}', namespace="staging"), [])
    assert_findings(PARALLEL, vllm(ARGS, KEY_REF, '{other-key: "8"}'), [])


def test_two_differing_copies_of_a_config_map_are_unknown():
    two = vllm(ARGS, KEY_REF, '{tensor-parallel: "8"}')
    two += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: vllm-config, namespace: inference}\n"
    two += 'data: {tensor-parallel: "4"}\n'
    assert_findings(PARALLEL, two, [])


def test_env_from_a_config_map_the_linted_files_hold():
    env_from = "envFrom: [{configMapRef: {name: vllm-config}, prefix: VLLM_}]"
    args = ARGS.replace("$(TP)", "$(VLLM_TP)")
    assert_findings(PARALLEL, vllm(args, env_from, '{TP: "8"}'), [(12, 91, "vLLM starts 8 GPU processes")])
    assert_findings(PARALLEL, vllm(args, env_from), [])  # not held: any name, no value


def test_a_flag_whose_value_is_unknown_is_given_not_absent():
    """--tensor-parallel-size=$(TP) with TP from a ConfigMap gpulint does not hold was read as no flag (1)."""
    env_from = "envFrom: [{configMapRef: {name: vllm-settings}}]"
    for command in (
        'command: [python3, -m, vllm.entrypoints.openai.api_server, "--tensor-parallel-size=$(TP)"]',
        'command: [sh, -c, "vllm serve m --tensor-parallel-size=$(TP)"]',
        'command: [sh, -c, "vllm serve m $EXTRA_ARGS"]',
        'command: [sh, -c, "exec vllm serve m $(VLLM_ARGS)"]',
    ):
        assert_findings(PARALLEL, vllm(command, env_from), [])
    # an unknown value of another flag hides nothing: no flag gives the parallelism, 3 GPUs idle
    assert_findings(
        PARALLEL,
        vllm('command: [sh, -c, "vllm serve $(MODEL) --max-num-seqs=$(SEQS)"]', env_from),
        [(12, 28, "vLLM starts 1 GPU process (no parallelism flag: 1) but container 'vllm' holds 4 nvidia.com/gpu")],
    )
