"""The code's own words (issue 13 §2): symbols each file defines, per commit, cached by blob; retrieval terms.

Real git repos; the cache lives in the test's HABITUS_HOME.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from habitus.index.code import code_index, defined_symbols
from habitus.index.terms import path_terms, stem, terms


@pytest.mark.parametrize(("language", "source", "names"), [
    ("typescript", "export function runAll() {}\nexport const MAX_FILES = 3;\ninterface IOptions {}\n"
                   "export default class Runner {}\ntype Row = {a: 1}\n  const local = 1;\n",
     ["runAll", "IOptions", "Runner", "Row", "MAX_FILES"]),
    ("python", "class Store:\n    def put(self):\n        pass\nasync def fetch():\n    pass\nLIMIT = 4\n",
     ["Store", "put", "fetch", "LIMIT"]),
    ("go", "package x\nfunc (s *Server) Handle(w int) {}\nfunc main() {}\ntype Config struct {}\n",
     ["Handle", "main", "Config"]),
    ("rust", "pub fn parse() {}\npub(crate) struct Token;\nimpl Display for Token {}\nenum Kind {}\n",
     ["parse", "Token", "Display", "Kind"]),
    ("java", "public class App {\n    public static void main(String[] args) {}\n"
             "    private int countItems(List<String> xs) { return 0; }\n}\n", ["App", "main", "countItems"]),
])
def test_defined_symbols_cover_the_common_languages(language: str, source: str, names: list[str]) -> None:
    found = defined_symbols(source)
    assert [n for n in names if n not in found] == [], (language, found)
    assert "local" not in found  # an indented binding is a local variable, not a definition


def test_type_names_imported_inline_are_not_definitions() -> None:
    # TypeScript's inline type imports look like type aliases to a line pattern; a file that imports a type must not
    # be handed over as "defines it"
    source = ("import {\n\ttype IRemediationResult,\n\ttype IStats as Stats\n} from './types';\n"
              "import { type Row } from './row';\nexport type Local = { a: IRemediationResult };\n")
    assert defined_symbols(source) == ("Local",)


def test_a_definition_whose_name_ends_its_line_is_still_a_definition() -> None:
    # brace on the next line (C#, Java, C), an `extends` clause on the next line: the name ends its line
    source = ("public class Foo\n{\n}\nstruct Point\n{\n};\nenum Color\n{ Red }\n"
              "export interface Props\n  extends Base {}\nclass Widget\n")
    assert defined_symbols(source) == ("Foo", "Point", "Color", "Props", "Widget")


@pytest.mark.parametrize(("words", "same"), [
    (("remediation", "remediate", "remediations", "Remediate".lower()), True),
    (("evaluator", "evaluation", "evaluate"), True), (("file", "files"), True), (("run", "running"), True),
    (("history", "histories"), True), (("remediation", "evaluation"), False), (("api", "app"), False),
])
def test_light_stems_bring_prose_and_code_together(words: tuple[str, ...], same: bool) -> None:
    assert (len({stem(w) for w in words}) == 1) is same, [stem(w) for w in words]


def test_short_words_and_numbers_keep_their_form() -> None:
    assert [stem(w) for w in ("api", "cli", "2026", "v1")] == ["api", "cli", "2026", "v1"]


def test_terms_drop_stop_words_urls_hashes_and_split_identifiers() -> None:
    assert terms("Please update the RemediationHistoryCard in https://x.io/a at 3f2a9c1d") == [
        "remediationhistorycard", stem("remediation"), stem("history"), "card"]
    assert path_terms("frontend/src/components/RemediateTab.tsx") == [
        "frontend", "src", stem("components"), "remediatetab", stem("remediate"), "tab"]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


def test_code_index_lists_a_commit_and_reads_only_changed_blobs_later(tmp_path: Path, monkeypatch) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.invalid")
    _git(repo, "config", "user.name", "t")
    (repo / "src").mkdir()
    (repo / "src" / "a.ts").write_text("export function alpha() {}\n")
    (repo / "logo.png").write_bytes(b"\x89PNG\0\0")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "one")
    first = _git(repo, "rev-parse", "HEAD")
    index = code_index(repo, first, cache_key="k")
    assert index is not None and index.files == {"src/a.ts": ("alpha",), "logo.png": None}
    assert index.defines() == {"alpha": ["src/a.ts"]}
    (repo / "src" / "b.ts").write_text("export class Beta {}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "two")
    second = _git(repo, "rev-parse", "HEAD")
    import habitus.index.code as code

    read: list[list[str]] = []
    original = code._read_blobs
    monkeypatch.setattr(code, "_read_blobs", lambda r, oids: read.append(list(oids)) or original(r, oids))
    later = code_index(repo, second, cache_key="k")
    assert later is not None and later.files["src/b.ts"] == ("Beta",)
    assert len(read) == 1 and len(read[0]) == 1  # only the new blob was read; a.ts came from the blob cache
    again = code_index(repo, second, cache_key="k")
    assert again is not None and again.files == later.files and len(read) == 1  # the commit's index is cached
    assert "beta" in again.term_docs()["src/b.ts"]


def test_code_index_of_an_unknown_commit_is_none(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    assert code_index(repo, "0" * 40) is None
