"""gpulint never crashes: random YAML-ish text, random bytes, random manifests."""

import json

import pytest
from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.strategies import CLAIM, GANG, MANIFEST

from gpulint.lint.config import Config
from gpulint.lint.inputs.sources import Source
from gpulint.lint.run import LintRun
from gpulint.lint.world.inventory import load_inventory

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


@pytest.mark.slow
@FAST
@given(st.lists(MANIFEST, min_size=1, max_size=3))
def test_random_manifests_never_crash(manifests):
    text = "\n---\n".join(json.dumps(m) for m in manifests)
    report = lint(text.encode())
    assert_sane(report)


# The same random manifests, and random DRA and gang objects, against a real inventory:
# every inventory, DRA and gang rule runs on them and none may fail internally.
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

    from gpulint.lint.inputs.loader import LoadError, _Builder

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
