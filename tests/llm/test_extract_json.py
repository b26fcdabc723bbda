"""Tolerant JSON extraction from model answers."""

from __future__ import annotations

import pytest

from habitus.llm.providers import extract_json
from habitus.llm.types import InvalidJSON, strip_think


@pytest.mark.parametrize(("text", "expected"), [
    ('{"a": 1}', {"a": 1}),
    ("[1, 2]", [1, 2]),
    ('```json\n{"a": 1}\n```', {"a": 1}),
    ('```\n{"a": 1}\n```', {"a": 1}),
    ('Sure! Here it is:\n```json\n{"a": [1, 2]}\n```\nAnything else?', {"a": [1, 2]}),
    ('<think>maybe {"wrong": 1}</think>{"right": 2}', {"right": 2}),
    ('<thinking>\nhmm\n</thinking>\n```json\n{"x": "y"}\n```', {"x": "y"}),
    ('reasoning without an opening tag</think> {"ok": true}', {"ok": True}),
    ('The answer is {"k": "v {braces} inside"} as requested.', {"k": "v {braces} inside"}),
    ('noise { not json } then {"n": 3}', {"n": 3}),
    ("42", 42),
])
def test_extract_json_finds_the_value(text, expected) -> None:
    assert extract_json(text) == expected


@pytest.mark.parametrize("text", ["", "no json here", "<think>{\"a\": 1}</think>", "{'single': 'quotes'}", None])
def test_extract_json_raises_when_there_is_no_json(text) -> None:
    with pytest.raises(InvalidJSON):
        extract_json(text)


def test_invalid_json_is_also_a_value_error() -> None:
    with pytest.raises(ValueError):
        extract_json("nothing")


def test_strip_think_drops_an_unterminated_reasoning_block() -> None:
    assert strip_think("<think>still thinking") == ""
    assert strip_think("<think>a</think>answer") == "answer"
