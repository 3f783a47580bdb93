"""No import cycle in core or app: grimp (which import-linter installs) reads every import, a function-level one
included, so a cycle hidden behind a deferred import fails here too."""

from __future__ import annotations

import grimp
import pytest


def cycles(graph, package: str) -> list[list[str]]:
    """The strongly connected groups of more than one module under `package` (Tarjan's algorithm)."""
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(root: str) -> None:
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, edges = work[-1]
            for w in edges:
                if not w.startswith(package):
                    continue
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.find_modules_directly_imported_by(w)))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    group = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        group.append(w)
                        if w == v:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))

    for m in modules:
        if m not in index:
            visit(m)
    return found


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("foldscope", include_external_packages=False)


@pytest.mark.parametrize("package", ["foldscope.core", "foldscope.app"])
def test_no_import_cycle(graph, package):
    assert cycles(graph, package) == []


def test_a_cycle_is_found_when_there_is_one(graph):
    graph.add_import(importer="foldscope.core.model.session", imported="foldscope.core.request.measure")
    try:
        assert any("foldscope.core.model.session" in group for group in cycles(graph, "foldscope.core"))
    finally:
        graph.remove_import(importer="foldscope.core.model.session", imported="foldscope.core.request.measure")
