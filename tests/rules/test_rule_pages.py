"""docs/rules/ against rules/*.yaml: every page is what scripts/rule_pages.py writes from the rule docs, so a
page is never stale and a rule never lacks one. When this fails, run ``python scripts/rule_pages.py``."""

import importlib.util

from conftest import REPO

from gpulint.lint.registry import all_rules

_spec = importlib.util.spec_from_file_location("rule_pages", REPO / "scripts" / "rule_pages.py")
assert _spec is not None and _spec.loader is not None
rule_pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rule_pages)

DOCS_RULES = REPO / "docs" / "rules"


def test_the_committed_pages_are_what_the_generator_writes():
    wanted = rule_pages.pages()
    committed = {path.name: path.read_text(encoding="utf-8") for path in DOCS_RULES.glob("*.md")}
    assert sorted(committed) == sorted(wanted), "run: python scripts/rule_pages.py"
    stale = sorted(name for name in wanted if committed[name] != wanted[name])
    assert stale == [], f"stale pages {stale}; run: python scripts/rule_pages.py"


def test_every_rule_has_a_page_listed_in_the_index():
    index = (DOCS_RULES / "index.md").read_text(encoding="utf-8")
    for rule_id in all_rules():
        assert (DOCS_RULES / f"{rule_id}.md").is_file()
        assert f"| [{rule_id}]({rule_id}.md) |" in index


def test_writing_replaces_a_stale_page_and_removes_a_removed_rules(tmp_path):
    (tmp_path / "gpu-sharing.md").write_text("# gpu-sharing (warning)\n\nan old summary\n", encoding="utf-8")
    (tmp_path / "gpu-renamed-away.md").write_text("# gone\n", encoding="utf-8")
    rule_pages.write(tmp_path)
    assert not (tmp_path / "gpu-renamed-away.md").exists()
    assert (tmp_path / "gpu-sharing.md").read_text(encoding="utf-8") == (DOCS_RULES / "gpu-sharing.md").read_text(
        encoding="utf-8"
    )


def test_angle_brackets_in_prose_are_text_and_in_code_stay_as_written():
    page = (DOCS_RULES / "gpu-sharing.md").read_text(encoding="utf-8")
    assert "GFD labels &lt;resource>.product" in page  # prose: not an HTML tag
    assert "`-MIG-<profile>`" in page  # a code span is left alone
    assert rule_pages.escape_html("a <b> `c <d>`\n```\n<e>\n```") == "a &lt;b> `c <d>`\n```\n<e>\n```"
