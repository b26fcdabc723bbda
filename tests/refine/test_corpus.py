"""Acceptance on the real SkillRefiner corpus (SpreadsheetBench rollouts with rewards and a seed skill)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from habitus.refine.merge import split_frontmatter
from habitus.refine.pipeline import refine

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

# A sentence that endorses each behaviour the gate may accept on this corpus, to construct a conflict.
ENDORSING = {
    "sheet-surgery": "- Create a new worksheet for intermediate results and rename sheets to match the task.",
    "python-inline": "- Run quick checks with python -c one-liners.",
    "script-file-heredoc": "- Write the script to a file with cat > fix.py and run it.",
    "repeated-saves": "- Save often: save after each change.",
    "text-normalisation": "- Normalize labels with strip and lower-case before writing them.",
    "pandas": "- Use pandas for table-wide computation.",
}


_RUNS: dict[str, object] = {}  # one refinement per session; `corpus` is function-scoped, so cache by hand


@pytest.fixture
def golden(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Rewards derived from the golden folders' polarity (positive/negative); no corpus file is copied."""
    if "golden" in _RUNS:
        return _RUNS["golden"]
    root = corpus / "skillrefiner" / "golden"
    rewards = {d.name: polarity == "positive" for polarity in ("positive", "negative")
               for d in sorted((root / polarity).iterdir()) if (d / "raw_content.txt").is_file()}
    out = tmp_path_factory.mktemp("golden")
    (out / "binary_rewards.json").write_text(json.dumps(rewards))
    _RUNS["golden"] = {"traces": root, "rewards": out / "binary_rewards.json", "out": out,
                       "skill": corpus / "skillrefiner" / "examples" / "minimal" / "seed_skill.md"}
    return _RUNS["golden"]


@pytest.fixture
def result(golden):
    if "result" not in _RUNS:
        _RUNS["result"] = refine(golden["skill"], golden["traces"], golden["rewards"], golden["out"] / "run")
    return _RUNS["result"]


def raw_text(golden: dict[str, Path], trace_id: str) -> str:
    matches = list(golden["traces"].glob(f"*/{trace_id}/raw_content.txt"))
    assert len(matches) == 1, trace_id
    return matches[0].read_text(encoding="utf-8", errors="replace")


def shows(raw: str, snippet: str) -> bool:
    """The snippet is in the transcript verbatim, or as the JSON-escaped text the tool call carries."""
    if snippet in raw or json.dumps(snippet, ensure_ascii=False)[1:-1] in raw:
        return True
    count = re.fullmatch(r"(\d+) (tool calls|commands save output)", snippet)
    if count:  # count-based evidence: count it ourselves
        pattern = r"\[tool call\] terminal\(" if count.group(2) == "tool calls" else r"\.save\("
        return len(re.findall(pattern, raw)) >= int(count.group(1))
    return False


def test_clusters_per_polarity(result):
    clusters = [c for c in result.manifest["clusters"] if not c["noise"]]
    assert {c["polarity"] for c in clusters} == {"success", "failure"}
    assert result.manifest["inputs"]["traces"]["with_outcome"] == 14


def test_a_gated_failure_edit_whose_cited_traces_show_the_behaviour(result, golden):
    accepted = [p for p in result.accepted if p["kind"] == "soften" and p["gate"]["gated"]]
    assert accepted, [p["gate"]["reasons"] for p in result.proposals]
    for proposal in accepted:
        assert len(proposal["supporting_trace_ids"]) >= 2
        for trace_id in proposal["supporting_trace_ids"]:
            assert trace_id in proposal["cluster_trace_ids"]
            raw = raw_text(golden, trace_id)
            assert "negative" in str(next(golden["traces"].glob(f"*/{trace_id}")))
            snippets = proposal["evidence"][trace_id]
            assert snippets and all(shows(raw, s) for s in snippets), (trace_id, snippets)


def test_frontmatter_is_unchanged(result, golden):
    seed = golden["skill"].read_text(encoding="utf-8")
    assert split_frontmatter(result.proposed_skill)[0] == split_frontmatter(seed)[0] != ""
    assert (golden["out"] / "run" / "proposed_skill.md").read_text(encoding="utf-8") == result.proposed_skill


def test_conflicting_instruction_is_scoped_not_deleted(result, golden, tmp_path):
    accepted = [p for p in result.accepted if p["kind"] == "soften" and p["behaviour"] in ENDORSING]
    assert accepted, "no accepted guardrail with a constructible conflict"
    behaviour = accepted[0]["behaviour"]
    skill = tmp_path / "SKILL.md"
    skill.write_text(golden["skill"].read_text(encoding="utf-8") + ENDORSING[behaviour] + "\n", encoding="utf-8")
    again = refine(skill, golden["traces"], golden["rewards"])
    entry = next(p for p in again.accepted if p["behaviour"] == behaviour)
    assert entry["merge"]["action"] == "scoped"
    line = next(x for x in again.proposed_skill.splitlines() if x.startswith(ENDORSING[behaviour].rstrip(".")))
    assert "— except" in line
    assert entry["text"].split(";")[0][1:].lower().rstrip(".") in line.lower()


def test_minimal_span_example_runs_end_to_end(corpus, tmp_path):
    example = corpus / "skillrefiner" / "examples" / "minimal"
    run = refine(example / "seed_skill.md", example / "traces.jsonl", example / "binary_rewards.json", tmp_path)
    assert run.manifest["inputs"]["traces"]["with_outcome"] == 12
    assert {c["polarity"] for c in run.manifest["clusters"]} == {"success", "failure"}
    assert (tmp_path / "report.html").stat().st_size > 1000


def test_every_accepted_edit_of_either_kind_passes_the_stated_test_with_citations_that_show_it(result, golden):
    """Issue 12 #6: on this corpus a reinforcement went in ungated (failure lift 0.86, citing an import of
    `openpyxl.styles` and a print of a cell's format as "edits cell styles"). Now both kinds are gated."""
    styles = [p for p in result.proposals if p["behaviour"] == "styles" and p["kind"] == "reinforce"]
    assert styles and not styles[0]["gate"]["passed"], [p["gate"] for p in styles]
    assert len(styles[0]["gate"]["citations"]["dropped"]) == 2  # neither quote edits a style
    for proposal in result.accepted:
        gate = proposal["gate"]
        assert gate["gated"] and gate["support"] >= 2 and (gate["fisher_p"] <= 0.1 or gate["lift"] >= 1.5), gate
        assert gate["citations"]["kept"] == len(proposal["supporting_trace_ids"]) >= 2
