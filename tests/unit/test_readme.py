"""The README is the front door: small, and its first screen gives the two commands a new user needs. The
guides live in docs/ (mkdocs.yml; `mkdocs build --strict` in .ci/run fails on a broken link or anchor)."""

import re

import yaml
from conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_readme_stays_small():
    assert len(README.encode("utf-8")) <= 20_000, "move the new prose to a page in docs/ and link it"


def test_the_first_screen_gives_the_install_and_test_commands():
    first_block = README[README.index("```sh\n") + 6 : README.index("\n```\n")]
    assert first_block.splitlines() == [
        "# Install, then lint the examples against the example cluster inventory (Python >= 3.11):",
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/gpulint check examples/ --inventory examples/inventory",
        "",
        "# Install with the test extra and run the tests (on two cores; those that time themselves run alone after):",
        "python3 -m venv .venv && .venv/bin/pip install '.[test]' && .venv/bin/pytest -n 2 -m \"not timed\" && "
        ".venv/bin/pytest -m timed",
    ]
    assert README.index("```sh\n") < len(README.splitlines()[0]) + 400  # within the first screen


def test_ci_runs_the_readmes_test_command():
    """.ci/run's pytest lines are the README's, with only CI's quiet output and no cache directory added."""
    first_block = README[README.index("```sh\n") + 6 : README.index("\n```\n")]
    readme_runs = first_block.splitlines()[-1].split(" && ")[2:]
    ci_runs = [line for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines() if "bin/pytest" in line]
    assert [run.replace(" -q -p no:cacheprovider", "") for run in ci_runs] == readme_runs


def test_the_readmes_links_into_docs_name_pages_that_exist():
    targets = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", README)
    assert targets
    missing = sorted({target for target in targets if not (REPO / target).is_file()})
    assert missing == []


def test_every_guide_page_is_in_the_site_navigation():
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)

    def pages(nav):
        for entry in nav:
            for value in entry.values():
                yield from pages(value) if isinstance(value, list) else [value]

    listed = set(pages(config["nav"]))
    guides = {path.name for path in (REPO / "docs").glob("*.md")}
    assert guides - listed == set(), "add the page to mkdocs.yml's nav"
    assert "rules/index.md" in listed
