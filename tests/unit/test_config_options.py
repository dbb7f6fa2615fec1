"""The options table is the one place a configuration key is defined: it parses .gpulint.yaml, writes the
configuration page and the JSON schema editors complete from. The schema never marks a value gpulint
accepts (hypothesis), every example parses, and the generated files are fresh."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import REPO, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulint.lint.config import _CLUSTER_KEYS, _SUPPRESSION_KEYS, OPTIONS, ConfigError, from_mapping, load
from gpulint.lint.inputs.render.options import _CHART_KEYS, _KEYS
from gpulint.lint.registry import all_rules

RULE_IDS = set(all_rules())


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("config_docs", REPO / "scripts" / "config_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["config_docs"] = module
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()
SCHEMA = json.loads((REPO / "gpulint.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft7Validator(SCHEMA)


def test_the_page_and_the_schema_are_what_the_table_writes(tmp_path):
    GENERATOR.main(["config_docs.py", str(tmp_path)])
    for name, committed in (
        ("configuration.md", REPO / "docs" / "configuration.md"),
        ("gpulint.schema.json", REPO / "gpulint.schema.json"),
    ):
        assert (tmp_path / name).read_text(encoding="utf-8") == committed.read_text(encoding="utf-8"), (
            f"{committed} is stale: run python scripts/config_docs.py"
        )


def test_the_schema_is_a_valid_draft_7_schema():
    jsonschema.Draft7Validator.check_schema(SCHEMA)


def _example_file(tmp_path: Path) -> Path:
    """The page's example, every key at once, as a user would save it."""
    (tmp_path / "schemas").mkdir()
    lines = [f"{option.key}: {option.example}" for option in OPTIONS]
    path = tmp_path / ".gpulint.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_every_example_parses_and_the_schema_accepts_it(tmp_path):
    path = _example_file(tmp_path)
    policies = {"require-gpu-memory-limit"}
    config = load(path, RULE_IDS | policies)
    assert config.fail_on.name == "WARNING" and config.kubernetes_version == "1.36"
    assert [scope.name for scope in config.clusters] == ["prod"]
    assert list(VALIDATOR.iter_errors(yaml.safe_load(path.read_text()))) == []


def test_an_unknown_key_is_refused_by_both_with_the_known_keys_named():
    with pytest.raises(ConfigError, match=r"unknown key 'fail_on' \(known keys: baseline, clusters, complete"):
        from_mapping({"fail_on": "warning"}, "x.yaml", RULE_IDS)
    assert not VALIDATOR.is_valid({"fail_on": "warning"})


def test_the_nested_keys_are_the_parsers_own():
    properties = SCHEMA["properties"]
    assert set(properties["render"]["properties"]) == _KEYS
    charts = properties["render"]["properties"]["charts"]["additionalProperties"]["properties"]
    assert set(charts) == _CHART_KEYS
    assert tuple(properties["suppressions"]["properties"]) == _SUPPRESSION_KEYS
    assert tuple(properties["clusters"]["additionalProperties"]["properties"]) == _CLUSTER_KEYS


def test_every_flag_the_page_names_is_a_flag_of_check():
    help_text = run_cli("check", "--help").stdout
    for option in OPTIONS:
        if option.flag:
            assert f"{option.flag} " in help_text or f"{option.flag}\n" in help_text, option.flag


WORDS = (
    "", " ", "all", "error", "Warning", " info ", "auto", "TRUE", "false", "1.36", "v1.37", "1.30.2", "1.29",
    "nvidia", "Nvidia", "a,b", ",", "x/*", "LocalQueue", "gpu-non-integer", "A=true", "A=maybe", "true", "60",
)  # fmt: skip


def _fragments(value: Any) -> tuple[list[Any], list[str]]:
    """The scalars and mapping keys of an example, and each list also as one comma-separated string (as
    gpulint reads it): what a user of that key plausibly writes, to recombine."""
    scalars: list[Any] = []
    keys: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            keys.append(str(key))
            more_scalars, more_keys = _fragments(item)
            scalars += more_scalars
            keys += more_keys
    elif isinstance(value, list):
        scalars.append(",".join(str(item) for item in value))
        for item in value:
            more_scalars, more_keys = _fragments(item)
            scalars += more_scalars
            keys += more_keys
    else:
        scalars.append(value)
    return scalars, keys


@st.composite
def key_and_value(draw: st.DrawFn) -> tuple[str, Any]:
    option = draw(st.sampled_from(OPTIONS))
    example = yaml.safe_load(option.example)
    own_scalars, own_keys = _fragments(example)
    scalars = st.one_of(
        st.sampled_from(own_scalars),
        st.none(),
        st.booleans(),
        st.integers(-2, 4000),
        st.sampled_from((1.3, 1.31, 1.36, 0.5, 60.0, 4000.0)),
        st.sampled_from(WORDS),
    )
    keys = st.sampled_from((*own_keys, *WORDS)) if own_keys else st.sampled_from(WORDS)
    values = st.recursive(
        scalars,
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3)),
        max_leaves=8,
    )
    # the example's own scalars alone are a third of the draws: a list key given one string is the
    # commonest shape a schema gets wrong
    return option.key, draw(st.one_of(st.just(example), st.sampled_from(own_scalars), values))


@pytest.fixture(scope="module")
def config_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("config")
    (root / "schemas").mkdir()
    return root


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key_value=key_and_value())
def test_the_schema_never_marks_a_value_gpulint_accepts(config_root, key_value):
    """An editor that underlines a configuration gpulint runs with is a false error in the user's face."""
    key, value = key_value
    root = config_root
    try:
        from_mapping({key: value}, "x.yaml", RULE_IDS | {"all", "require-gpu-memory-limit"}, str(root))
    except ConfigError:
        return
    errors = [error.message for error in VALIDATOR.iter_errors({key: value})]
    assert errors == [], f"{key}: {value!r}"
