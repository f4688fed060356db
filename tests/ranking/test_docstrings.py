"""The examples in the library's docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "ranking.crowd.model",
    "ranking.crowd.voters",
    "ranking.designs",
    "ranking.designs.round_robin",
    "ranking.evaluation.tied_metrics",
    "ranking.protocol.advice",
    "ranking.protocol.bradley_terry",
    "ranking.protocol.budget",
    "ranking.protocol.repeats",
    "ranking.protocol.scores",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, extraglobs={"np": importlib.import_module("numpy")})
    assert result.attempted > 0
    assert result.failed == 0
