"""gpulint never crashes: random YAML-ish text, random bytes, random manifests."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulint.lint.config import Config
from gpulint.lint.run import LintRun
from gpulint.lint.sources import Source

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

YAMLISH = st.lists(
    st.sampled_from(
        [
            "apiVersion: v1",
            "kind: Pod",
            "kind: List",
            "items:",
            "- ",
            "  ",
            "spec:",
            "containers:",
            "resources:",
            "requests:",
            "limits:",
            "nvidia.com/gpu: ",
            "0.5",
            "1",
            "'2'",
            "{",
            "}",
            "[",
            "]",
            ":",
            "---",
            "...",
            "&a ",
            "*a",
            "<<: *a",
            "!!binary",
            "!custom",
            "# gpulint: disable=all",
            "{{ .Values.x }}",
            "\t",
            "\n",
            '"',
            "'",
            "? ",
            "|",
            ">-",
            "yes",
            "null",
            "~",
            "1e3",
            "\x07",
            "é",
            "metadata: {name: x, annotations: {gpulint.io/ignore: a}}",
        ]
    ),
    max_size=60,
).map("".join)


def lint(raw: bytes):
    return LintRun(Config(), [Source("random.yaml", content=raw)]).report().files[0]


def assert_sane(report):
    for finding in report.findings:
        assert finding.line >= 1 and finding.column >= 1
        assert finding.message and finding.rule
        assert "internal error" not in finding.message, finding.message


@pytest.mark.slow
@FAST
@given(YAMLISH)
def test_yamlish_text_never_crashes(text):
    assert_sane(lint(text.encode()))


@FAST
@given(st.binary(max_size=400))
def test_random_bytes_never_crash(raw):
    assert_sane(lint(raw))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
QUANTITY = st.one_of(
    st.integers(-5, 10),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.sampled_from(["1", "0.5", "500m", "1e-1", "1Ki", "abc", "", " 2 ", "1e999999", "9" * 200]),
)
CONTAINER = st.fixed_dictionaries(
    {"name": st.text(max_size=5), "image": st.just("i")},
    optional={
        "resources": st.fixed_dictionaries(
            {},
            optional={
                "requests": st.one_of(
                    JSON_VALUES,
                    st.dictionaries(st.sampled_from(["nvidia.com/gpu", "cpu", "x.io/y"]), QUANTITY, max_size=3),
                ),
                "limits": st.one_of(
                    JSON_VALUES,
                    st.dictionaries(st.sampled_from(["nvidia.com/gpu", "amd.com/gpu"]), QUANTITY, max_size=2),
                ),
            },
        )
    },
)
POD_SPEC = st.fixed_dictionaries(
    {},
    optional={
        "containers": st.one_of(JSON_VALUES, st.lists(CONTAINER, max_size=3)),
        "initContainers": st.lists(CONTAINER, max_size=2),
    },
)
MANIFEST = st.one_of(
    st.fixed_dictionaries(
        {
            "apiVersion": st.just("v1"),
            "kind": st.just("Pod"),
            "metadata": st.one_of(JSON_VALUES, st.just({"name": "p"})),
            "spec": POD_SPEC,
        }
    ),
    st.fixed_dictionaries(
        {
            "apiVersion": st.sampled_from(["apps/v1", "batch/v1", "kubeflow.org/v1", "ray.io/v1"]),
            "kind": st.sampled_from(["Deployment", "Job", "PyTorchJob", "RayCluster", "CronJob"]),
            "spec": st.one_of(
                JSON_VALUES,
                st.fixed_dictionaries(
                    {
                        "replicas": JSON_VALUES,
                        "template": st.fixed_dictionaries({"spec": POD_SPEC}),
                        "pytorchReplicaSpecs": st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=2),
                        "workerGroupSpecs": st.lists(JSON_VALUES, max_size=2),
                    }
                ),
            ),
        }
    ),
    st.fixed_dictionaries(
        {"apiVersion": st.just("v1"), "kind": st.just("List"), "items": st.lists(JSON_VALUES, max_size=3)}
    ),
)


@pytest.mark.slow
@FAST
@given(st.lists(MANIFEST, min_size=1, max_size=3))
def test_random_manifests_never_crash(manifests):
    text = "\n---\n".join(json.dumps(m) for m in manifests)
    report = lint(text.encode())
    assert_sane(report)


# The same random manifests, and random DRA and gang objects, against a real inventory:
# every inventory, DRA and gang rule runs on them and none may fail internally.
from conftest import DATA  # noqa: E402

from gpulint.lint.inventory import load_inventory  # noqa: E402

CLAIM = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["resource.k8s.io/v1", "resource.k8s.io/v1beta1", "resource.k8s.io/v1alpha3"]),
        "kind": st.sampled_from(["ResourceClaim", "ResourceClaimTemplate", "DeviceClass"]),
        "metadata": st.just({"name": "c", "namespace": "ml"}),
        "spec": st.one_of(
            JSON_VALUES,
            st.fixed_dictionaries(
                {
                    "devices": st.fixed_dictionaries(
                        {
                            "requests": st.lists(
                                st.fixed_dictionaries(
                                    {"name": st.sampled_from(["a", "b"])},
                                    optional={
                                        "exactly": st.fixed_dictionaries(
                                            {"deviceClassName": st.sampled_from(["gpu.nvidia.com", "x", ""])},
                                            optional={
                                                "count": st.one_of(st.integers(-1, 12), JSON_VALUES),
                                                "allocationMode": st.sampled_from(["All", "ExactCount", "?"]),
                                                "selectors": st.lists(
                                                    st.fixed_dictionaries(
                                                        {
                                                            "cel": st.fixed_dictionaries(
                                                                {
                                                                    "expression": st.sampled_from(
                                                                        [
                                                                            'device.attributes["gpu.nvidia.com"].type == "gpu"',
                                                                            "device.x",
                                                                            "1 +",
                                                                            "true",
                                                                            'quantity("1") == 1',
                                                                        ]
                                                                    )
                                                                }
                                                            )
                                                        }
                                                    ),
                                                    max_size=2,
                                                ),
                                            },
                                        ),
                                        "firstAvailable": st.lists(JSON_VALUES, max_size=2),
                                    },
                                ),
                                max_size=3,
                            ),
                            "constraints": st.lists(
                                st.fixed_dictionaries(
                                    {},
                                    optional={
                                        "requests": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2),
                                        "matchAttribute": st.sampled_from(["resource.kubernetes.io/pcieRoot", "x", ""]),
                                    },
                                ),
                                max_size=2,
                            ),
                        }
                    )
                }
            ),
        ),
    }
)
GANG = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["batch.volcano.sh/v1alpha1", "scheduling.k8s.io/v1beta1", "kubeflow.org/v1"]),
        "kind": st.sampled_from(["Job", "PodGroup", "Workload", "PyTorchJob"]),
        "metadata": st.just({"name": "g", "namespace": "ml"}),
        "spec": st.one_of(
            JSON_VALUES,
            st.fixed_dictionaries(
                {},
                optional={
                    "minAvailable": st.one_of(st.integers(-1, 80), JSON_VALUES),
                    "schedulingPolicy": st.one_of(JSON_VALUES, st.just({"gang": {"minCount": 3}})),
                    "schedulingConstraints": st.just({"topology": [{"key": "topology.kubernetes.io/rack"}]}),
                    "runPolicy": st.just({"schedulingPolicy": {"minAvailable": 2}}),
                    "tasks": st.lists(
                        st.fixed_dictionaries(
                            {
                                "replicas": st.integers(0, 70),
                                "template": st.fixed_dictionaries(
                                    {
                                        "metadata": st.just(
                                            {
                                                "annotations": {
                                                    "kueue.x-k8s.io/podset-required-topology": "topology.kubernetes.io/rack"
                                                }
                                            }
                                        ),
                                        "spec": POD_SPEC,
                                    }
                                ),
                            }
                        ),
                        max_size=2,
                    ),
                },
            ),
        ),
    }
)


@pytest.mark.slow
@FAST
@given(st.lists(st.one_of(MANIFEST, CLAIM, GANG), min_size=1, max_size=4))
def test_random_objects_against_an_inventory_never_crash(manifests):
    text = "\n---\n".join(json.dumps(m) for m in manifests)
    source = Source("random.yaml", content=text.encode())
    inventory = load_inventory([str(DATA / "dra"), str(DATA / "racks")])
    assert_sane(LintRun(Config(), [source], inventory).report().files[0])


RESOURCE_NAME = st.text(alphabet="abcgimnpuvd.-/*?[]!0123", max_size=24)


@pytest.mark.slow
@FAST
@given(RESOURCE_NAME, st.lists(RESOURCE_NAME, max_size=3))
def test_gpu_resource_names_match_as_the_globs_do(name, extra):
    """is_gpu matches all the patterns in one compiled regex: the same answer as fnmatch, pattern by pattern
    (configured patterns included, with their [sets], ? and * and the odd unbalanced bracket)."""
    import fnmatch

    from gpulint.kube.resources import DEFAULT_GPU_RESOURCES, is_gpu

    for candidate in (name, "nvidia.com/" + name, "gpu.intel.com/" + name, "amd.com/gpu"):
        expected = any(fnmatch.fnmatchcase(candidate, pattern) for pattern in (*DEFAULT_GPU_RESOURCES, *extra))
        assert is_gpu(candidate, extra) == expected, (candidate, extra)


@pytest.mark.slow
@FAST
@given(YAMLISH)
def test_the_loader_builds_the_same_with_or_without_the_alias_count(text):
    """A text without ``*`` has no alias, so the loader skips the alias-bomb count (a walk of its own)
    and checks the nesting depth while it builds: every document composed from such a text builds to
    the same value, duplicate keys and depth refusal (message and position) either way."""
    import yaml

    from gpulint.lint.loader import LoadError, _Builder

    if "*" in text:
        return
    try:
        roots = [root for root in yaml.compose_all(text, Loader=yaml.CSafeLoader) if root is not None]
    except (yaml.YAMLError, RecursionError):
        return  # the loader reports the syntax error before building anything

    def built(root, aliases):
        builder = _Builder("doc.yaml")
        try:
            value = builder.build(root, aliases)
        except LoadError as exc:
            return ("refused", exc.message, exc.line, exc.column)
        return repr(value), [(p.message, p.line, p.column) for p in builder.duplicates]

    for root in roots:
        assert built(root, aliases=False) == built(root, aliases=True)
