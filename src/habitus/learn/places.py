"""Places: where in a file an edit went, as the chain of enclosing blocks (outermost first).

Python files use `ast` (classes, functions, multi-line module-level assignments); Markdown uses
its heading hierarchy; everything else uses indentation, so it works for any language
(`class App › getMenuItems › if (viewMode === "view") {`). Block heads are shortened to what
a reader (and `git grep`) recognises: `class App`, a function or method's bare name, a declared
constant's name; other heads stay verbatim. Blocks the edit itself created are not part of
its place (a new method's place is the class it went into).
"""

from __future__ import annotations

import ast
import re

from habitus.core.workflow import Place

_MAX_LABEL = 80
_CLASS = re.compile(r"^(?:export\s+)?(?:default\s+)?(?:abstract\s+)?(?:public\s+|pub\s+)?class\s+([\w$]+)")
_FUNCTION = re.compile(r"^(?:export\s+)?(?:default\s+)?(?:async\s+)?function\*?\s+([\w$]+)")
_DECL = re.compile(r"^(?:export\s+)?(?:const|let|var|static)\s+([\w$]+)")
_KEYWORD_DECL = re.compile(r"^(?:export\s+)?(?:pub(?:\(\w+\))?\s+)?(interface|enum|struct|trait|impl|module|namespace|"
                           r"type)\s+([\w$:<>]+)")
_FN = re.compile(r"^(?:pub(?:\(\w+\))?\s+)?(?:async\s+)?(?:fn|func|def)\s+(?:\([^)]*\)\s*)?([\w$]+)")
_METHOD = re.compile(r"^(?:(?:public|private|protected|static|async|readonly|override|get|set)\s+)*"
                     r"([\w$]+)\s*(?:<[^>]*>)?\s*\([^;]*\)\s*(?::\s*[^={]+)?\{\s*$")
_NOT_METHODS = frozenset({"if", "for", "while", "switch", "catch", "function", "return", "with", "elif", "else"})
_HEADING = re.compile(r"^(#{1,6})\s+\S")


def head_label(line: str) -> str:
    """A block head as it appears in a chain."""
    text = line.strip()
    for pattern, fmt in ((_CLASS, "class {0}"), (_FUNCTION, "{0}"), (_DECL, "{0}")):
        m = pattern.match(text)
        if m:
            return fmt.format(m.group(1))
    m = _KEYWORD_DECL.match(text)
    if m:
        return f"{m.group(1)} {m.group(2)}"
    m = _FN.match(text)
    if m:
        return m.group(1)
    m = _METHOD.match(text)
    if m and m.group(1) not in _NOT_METHODS:
        return m.group(1)
    return text if len(text) <= _MAX_LABEL else text[:_MAX_LABEL - 1] + "…"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t").replace("\t", "    ")) if line.strip() else -1


def _is_head(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith(("}", ")", "]", "//", "#", "/*", "*", "<!--", "--")) and not s.startswith("@")


def indentation_chain(lines: list[str], index: int, new_lines: frozenset[int] = frozenset()) -> list[str]:
    """Chain of block heads enclosing line `index` (0-based) by indentation."""
    i = index
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        i = index
        while i >= 0 and not lines[i].strip():
            i -= 1
        if i < 0:
            return []
    level = _indent(lines[i])
    heads: list[str] = []
    for j in range(i - 1, -1, -1):
        if level == 0:
            break
        line = lines[j]
        ind = _indent(line)
        if ind < 0 or ind >= level:
            continue
        level = ind
        if j in new_lines or not _is_head(line):
            continue
        heads.append(head_label(line))
    return list(reversed(heads))


def markdown_chain(lines: list[str], index: int, new_lines: frozenset[int] = frozenset()) -> list[str]:
    heads: list[str] = []
    level = 7
    for j in range(min(index, len(lines) - 1), -1, -1):
        m = _HEADING.match(lines[j])
        if m and len(m.group(1)) < level:
            level = len(m.group(1))
            if j not in new_lines:
                heads.append(lines[j].strip())
            if level == 1:
                break
    return list(reversed(heads))


def _python_blocks(text: str) -> list[tuple[int, int, int, str]] | None:
    """(first line, last line, head line, label) of Python blocks, 1-based; None when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    blocks = []
    stack: list[ast.stmt] = list(tree.body)
    while stack:  # statements only: expressions cannot hold the blocks a chain names
        node = stack.pop()
        if isinstance(node, ast.ClassDef):
            blocks.append((node.lineno, node.end_lineno or node.lineno, node.lineno, f"class {node.name}"))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            blocks.append((node.lineno, node.end_lineno or node.lineno, node.lineno, node.name))
        for name in ("body", "orelse", "finalbody"):
            stack.extend(getattr(node, name, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            stack.extend(handler.body)
        for case in getattr(node, "cases", None) or []:
            stack.extend(case.body)
    for node in tree.body:  # module-level multi-line assignments such as a route table
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if targets and isinstance(targets[0], ast.Name) and (node.end_lineno or node.lineno) > node.lineno:
            blocks.append((node.lineno, node.end_lineno or node.lineno, node.lineno, targets[0].id))
    return blocks


def python_chain(blocks: list[tuple[int, int, int, str]], index: int, new_lines: frozenset[int]) -> list[str]:
    line = index + 1
    around = sorted((b for b in blocks if b[0] <= line <= b[1] and b[2] != line), key=lambda b: (b[0], -b[1]))
    return [label for _, _, head, label in around if head - 1 not in new_lines]


def chains_for_lines(file: str, text: str, changed: list[int]) -> list[list[str]]:
    """Distinct chains of the changed lines (0-based indexes into `text`), outermost kept when nested."""
    lines = text.split("\n")
    new = frozenset(changed)
    blocks = _python_blocks(text) if file.endswith(".py") else None
    picked = [i for i in changed if 0 <= i < len(lines) and lines[i].strip()] or [i for i in changed if i >= 0]
    chains: list[list[str]] = []
    for i in picked[:200]:
        if blocks is not None:
            chain = python_chain(blocks, i, new)
        elif file.lower().endswith((".md", ".markdown", ".mdx")):
            chain = markdown_chain(lines, i, new)
        else:
            chain = indentation_chain(lines, i, new)
        if chain not in chains:
            chains.append(chain)
    # keep the outermost: drop a chain that extends another one
    return [c for c in chains if not any(o != c and c[:len(o)] == o for o in chains)]


def changed_lines(after: str, new_string: str, old_string: str = "") -> list[int] | None:
    """0-based indexes in `after` of the lines `new_string` changed relative to `old_string`; None if absent."""
    if not new_string:
        return None
    pos = after.find(new_string)
    if pos < 0:
        return None
    first = after.count("\n", 0, pos)
    new_lines, old_lines = new_string.split("\n"), old_string.split("\n") if old_string else []
    pre = 0
    while pre < min(len(new_lines), len(old_lines)) and new_lines[pre] == old_lines[pre]:
        pre += 1
    suf = 0
    while (suf < min(len(new_lines), len(old_lines)) - pre
           and new_lines[len(new_lines) - 1 - suf] == old_lines[len(old_lines) - 1 - suf]):
        suf += 1
    span = range(pre, len(new_lines) - suf)
    if not span:  # a pure deletion: the place is where the text was
        return [first + min(pre, len(new_lines) - 1)]
    return [first + k for k in span]


def edit_places(file: str, after: str, new_string: str, old_string: str = "") -> tuple[list[Place], list[str]]:
    """(places, added lines) of one replacement already applied to `after`; ([], added) when not found."""
    changed = changed_lines(after, new_string, old_string)
    if changed is None:
        return [], _added_lines(new_string, old_string)
    lines = after.split("\n")
    added = [lines[i].strip() for i in changed if 0 <= i < len(lines) and lines[i].strip()]
    return [Place(file=file, chain=c) for c in chains_for_lines(file, after, changed)], added


def _added_lines(new_string: str, old_string: str) -> list[str]:
    old = set(old_string.split("\n"))
    return [ln.strip() for ln in new_string.split("\n") if ln.strip() and ln not in old]
