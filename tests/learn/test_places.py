"""Places: chains of enclosing blocks by Python ast, indentation (any language) and Markdown headings."""

from __future__ import annotations

import pytest

from habitus.learn.places import chains_for_lines, changed_lines, edit_places, head_label

PY = '''"""doc"""
ROUTES = {
    "/a": "a",
}


class Api:
    def __init__(self):
        self.x = 1

    def get(self, request):
        if request:
            return 1
        return 2


async def main():
    def inner():
        return 3
    return inner
'''

TS = '''export class App {
  viewMode = "edit";

  getMenuItems(viewMode: string): MenuItem[] {
    const items = [];
    if (viewMode) {
      items.push(1);
    }
    return items;
  }
}

export const SHORTCUTS: Shortcut[] = [
  { key: "Ctrl+O", command: "open" },
];

function comboOf(event: KeyboardEvent): string {
  return "";
}
'''

GO = '''package main

func (s *Server) Handle(w http.ResponseWriter) {
	if ok {
		w.Write(nil)
	}
}
'''

MD = '''# Guide

Intro.

## Install

Run it.

### From source

Build it.

## Use

Go.
'''


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.split("\n")) if needle in ln)


@pytest.mark.parametrize(("file", "text", "needle", "chain"), [
    ("api.py", PY, '"/a": "a"', ["ROUTES"]),
    ("api.py", PY, "self.x = 1", ["class Api", "__init__"]),
    ("api.py", PY, "return 1", ["class Api", "get"]),
    ("api.py", PY, "return 3", ["main", "inner"]),
    ("api.py", PY, "return inner", ["main"]),
    ("app.ts", TS, "items.push(1)", ["class App", "getMenuItems", "if (viewMode) {"]),
    ("app.ts", TS, 'viewMode = "edit"', ["class App"]),
    ("app.ts", TS, '{ key: "Ctrl+O"', ["SHORTCUTS"]),
    ("app.ts", TS, 'return "";', ["comboOf"]),
    ("main.go", GO, "w.Write(nil)", ["Handle", "if ok {"]),
    ("guide.md", MD, "Build it.", ["# Guide", "## Install", "### From source"]),
    ("guide.md", MD, "Go.", ["# Guide", "## Use"]),
])
def test_chain_of_a_line(file, text, needle, chain):
    assert chains_for_lines(file, text, [_line(text, needle)]) == [chain]


def test_python_uses_indentation_when_the_file_does_not_parse():
    text = "class A:\n    def f(self):\n        x = (\n"
    assert chains_for_lines("broken.py", text, [2]) == [["class A", "f"]]


def test_a_block_the_edit_created_is_not_part_of_its_place():
    old = "class Api:\n    def a(self):\n        return 1\n"
    new = old + "\n    def b(self):\n        return 2\n"
    places, added = edit_places("api.py", new, new, old)
    assert [p.chain for p in places] == [["class Api"]]
    assert added == ["def b(self):", "return 2"]


def test_nested_chains_keep_the_outermost():
    text = "class A:\n    x = 1\n    def f(self):\n        y = 2\n"
    assert chains_for_lines("a.py", text, [1, 3]) == [["class A"]]


@pytest.mark.parametrize(("line", "label"), [
    ("export default class App extends Base {", "class App"),
    ("export async function loadAll(x) {", "loadAll"),
    ("  private async render(el: HTMLElement): Promise<void> {", "render"),
    ("  if (viewMode === \"view\") {", 'if (viewMode === "view") {'),
    ("export const MENU = [", "MENU"),
    ("pub fn parse(input: &str) -> Result<()> {", "parse"),
    ("impl Display for Token {", "impl Display"),
    ("func (s *Server) Handle(w http.ResponseWriter) {", "Handle"),
    ("interface MenuItem {", "interface MenuItem"),
])
def test_head_label(line, label):
    assert head_label(line) == label


@pytest.mark.parametrize(("after", "new", "old", "expected"), [
    ("a\nb\nX\nc\n", "b\nX\nc", "b\nc", [2]),          # insertion between context lines
    ("a\nY\nc\n", "Y", "b", [1]),                       # replacement
    ("a\nc\n", "a\nc", "a\nb\nc", [1]),                  # pure deletion: where the text was
    ("a\nb\n", "zzz", "b", None),                        # not found
])
def test_changed_lines(after, new, old, expected):
    assert changed_lines(after, new, old) == expected
