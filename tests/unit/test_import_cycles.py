"""No import cycle between gpulint's modules (issue #30, step 9).

A cycle makes the import order matter, hides a layer that is missing, and lets a change in one module
break another that seems unrelated. import-linter's layer contracts (pyproject.toml) order the
packages; this test forbids cycles between any two modules, inside a package too. Imports made only for
type checking (``if TYPE_CHECKING:``) never run and are left out, as they are by the interpreter; an
import inside a function counts, since it runs whenever the function does.
"""

from __future__ import annotations

import ast
import re

import grimp
from conftest import TESTS

PACKAGE = "gpulint"


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.find_modules_directly_imported_by(successor)))))
                    break
                if successor in on_stack:
                    low[module] = min(low[module], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _described(graph: grimp.ImportGraph, component: list[str]) -> str:
    members = set(component)
    lines = [" <-> ".join(component)]
    for importer in component:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
            for detail in graph.get_import_details(importer=importer, imported=imported):
                lines.append(f"    {importer}:{detail['line_number']}: {detail['line_contents']}")
    return "\n".join(lines)


def test_no_module_imports_itself_through_others():
    graph = grimp.build_graph(PACKAGE, exclude_type_checking_imports=True)
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(_described(graph, c) for c in cycles)


def test_the_cycle_finder_finds_a_cycle():
    graph = grimp.ImportGraph()
    for module in ("a", "a.b", "a.c", "a.d"):
        graph.add_module(module)
    graph.add_import(importer="a.b", imported="a.c", line_number=1, line_contents="import a.c")
    graph.add_import(importer="a.c", imported="a.b", line_number=2, line_contents="import a.b")
    graph.add_import(importer="a.c", imported="a.d", line_number=3, line_contents="import a.d")
    assert _cycles(graph) == [["a.b", "a.c"]]


def test_tests_import_their_helpers_as_ci_runs_them():
    """CI installs gpulint without -e, so the checkout is not on sys.path and `tests` is no package there: a
    test module imports its helpers as pytest puts them on the path (`from conftest import ...`)."""
    tests = TESTS
    found = [
        f"{path.relative_to(tests.parent)}:{number}: {line.strip()}"
        for path in sorted(tests.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*(from tests[.\s]|import tests\b)", line)
    ]
    assert not found, "\n".join(found)


def imported_test_modules(source: str, test_modules: set[str]) -> list[tuple[int, str]]:
    """The lines of ``source`` that import one of ``test_modules`` (by module name, any dotted prefix),
    function-local imports included."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        else:
            continue
        found += [(node.lineno, name) for name in names if name.rsplit(".", 1)[-1] in test_modules]
    return found


def test_no_test_module_imports_another():
    """A test module imports its fixtures from conftest.py or tests/support, never from another test module:
    that import resolves only while both sit in folders already on sys.path, runs the other module's
    collection-time code, and ties two files that tests/ moves apart (unit, rules, integration)."""
    paths = sorted(TESTS.rglob("*.py"))
    test_modules = {path.stem for path in paths if path.name.startswith("test_")}
    found = [
        f"{path.relative_to(TESTS.parent)}:{line}: imports {name}"
        for path in paths
        for line, name in imported_test_modules(path.read_text(encoding="utf-8"), test_modules)
    ]
    assert not found, "\n".join(found)


def test_a_function_local_import_of_a_test_module_is_found():
    source = "import json\nfrom conftest import run_cli\n\ndef helper():\n    from test_pools import gpu_job\n"
    assert imported_test_modules(source, {"test_pools", "test_cli"}) == [(5, "test_pools")]
    assert imported_test_modules("import hostile.test_cli as c\n", {"test_cli"}) == [(1, "hostile.test_cli")]
    assert imported_test_modules("from support.pools import gpu_job\n", {"test_pools"}) == []
