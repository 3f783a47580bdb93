"""The counter's reference (core.request.count_reference) goes through the Counter's public seam, never its private
memo: a change to how the Counter keeps its counts cannot leave the reference reading a field that is gone."""

from __future__ import annotations

import ast
import inspect

from foldscope.core.request import count_reference


def test_the_reference_reads_no_private_attribute_of_the_counter():
    tree = ast.parse(inspect.getsource(count_reference))
    private = [
        f"counter.{node.attr} (line {node.lineno})"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "counter" and node.attr.startswith("_")
    ]
    assert private == []
