"""The refinement pipeline: traces + outcomes + SKILL.md -> proposed skill, diff, manifest and report.

    from habitus.refine.pipeline import refine
    result = refine("SKILL.md", "traces.jsonl", "binary_rewards.json", "out/")
    print(result.to_dict()["accepted"])

Stages (one module each): summarize -> embed -> cluster (per polarity) -> propose -> gate ->
merge, plus the held-out check. Model-free by default; a run with the same input writes
byte-identical files (no clocks, no absolute paths, seeded everything), on either engine:
`engine` (`habitus.fleet.engine`, `local` by default or `ray`) runs the read, summarise and embed
stages over workers in batches and folds the results in input order, so the outputs are the same. `install` copies the
proposed skill over the original after keeping the previous version beside it.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.core.extras import require_extra
from habitus.core.subject import same_repo
from habitus.core.trace import Trace
from habitus.refine import cluster as cluster_stage
from habitus.refine import holdout as holdout_stage
from habitus.refine.behaviours import Behaviour
from habitus.refine.citations import verify_citations
from habitus.refine.embed import embed_texts, get_stage_embedder
from habitus.refine.gate import GateConfig, Judge, evaluate
from habitus.refine.merge import merge, unified_diff
from habitus.refine.propose import CorpusProfile, Proposal, propose_for_cluster
from habitus.refine.summarize import (
    FAILURE,
    SUCCESS,
    RuleSummarizer,
    Summarizer,
    TraceSummary,
    polarity_of,
    summarize_batch,
)

if TYPE_CHECKING:
    from habitus.fleet.engine import Engine

OUTPUT_FILES = ("proposed_skill.md", "skill.diff", "manifest.json", "report.html")
SUMMARY_BATCH = 500  # traces per worker task on an engine other than `local`


class RefineError(ValueError):
    """Bad input to a refinement run (missing file, no traces with outcomes, unreadable skill)."""


@dataclass
class RefineResult:
    out_dir: Path | None
    skill_path: Path
    proposed_skill: str
    diff: str
    manifest: dict[str, Any]
    stage_seconds: dict[str, float] = field(default_factory=dict)
    installed: Path | None = None
    previous: Path | None = None

    @property
    def proposals(self) -> list[dict[str, Any]]:
        return self.manifest["proposals"]

    @property
    def accepted(self) -> list[dict[str, Any]]:
        return [p for p in self.proposals if p["gate"]["passed"]]

    @property
    def rejected(self) -> list[dict[str, Any]]:
        return [p for p in self.proposals if not p["gate"]["passed"]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "out_dir": str(self.out_dir) if self.out_dir else None,
            "skill": str(self.skill_path),
            "files": {name: str(self.out_dir / name) for name in OUTPUT_FILES} if self.out_dir else {},
            "accepted": [p["id"] for p in self.accepted],
            "rejected": [{"id": p["id"], "reasons": p["gate"]["reasons"]} for p in self.rejected],
            "changed": bool(self.diff),
            "installed": str(self.installed) if self.installed else None,
            "previous": str(self.previous) if self.previous else None,
            "stage_seconds": self.stage_seconds,
            "manifest": self.manifest,
        }


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _read_one(work: tuple[Path, dict[str, bool] | None, Path | None]) -> Any:
    from habitus.capture.reader import read_trace_file

    path, rewards, ground_truth = work
    return read_trace_file(path, rewards=rewards, ground_truth=ground_truth)


def load_traces(traces_path: Path, rewards_path: Path | None, ground_truth: Path | None,
                engine: Engine | None = None) -> tuple[list[Trace], dict]:
    """Traces from a file or folder in any format the capture readers accept, with outcomes applied."""
    from habitus.capture.reader import iter_trace_files
    from habitus.fleet.engine import LocalEngine

    if not traces_path.exists():
        raise RefineError(f"traces not found: {traces_path}")
    if rewards_path is not None and not rewards_path.is_file():
        raise RefineError(f"rewards file not found: {rewards_path}")
    if ground_truth is not None and not ground_truth.is_file():
        raise RefineError(f"ground-truth map not found: {ground_truth}")
    rewards = None
    if rewards_path is not None:
        from habitus.capture.spans import load_rewards

        try:
            rewards = load_rewards(rewards_path)
        except ValueError as exc:
            raise RefineError(f"rewards file is not a JSON object of trace_id -> bool: {rewards_path}: {exc}") from exc
    traces: list[Trace] = []
    errors: list[dict] = []
    work = ((path, rewards, ground_truth) for path in iter_trace_files([traces_path]))
    for result in (engine or LocalEngine()).map(_read_one, work):
        traces.extend(result.traces)
        errors.extend(result.errors)
    seen: set[str] = set()
    unique = []
    for trace in traces:
        if trace.id not in seen:
            seen.add(trace.id)
            unique.append(trace)
    return unique, {"files_with_errors": len(errors), "errors": errors[:5]}


def load_store_traces(repo: Path | str | None = None, rewards_path: Path | str | None = None) -> list[Trace]:
    """Traces from the habitus store (all, or those of `repo`), outcomes as stored or from a rewards file."""
    from habitus.capture.subject import repo_subject
    from habitus.store import open_store

    subject = None
    if repo is not None:
        subject = repo_subject(repo)
        if subject is None:
            raise RefineError(f"not a git repository: {repo}")
    rewards: dict[str, bool] = {}
    if rewards_path is not None:
        from habitus.capture.spans import load_rewards

        if not Path(rewards_path).is_file():
            raise RefineError(f"rewards file not found: {rewards_path}")
        rewards = load_rewards(rewards_path)
    store = open_store(readonly=True)
    try:
        traces = [t for t in store.iter_traces()
                  if subject is None or same_repo(t.subject, subject)]
    finally:
        store.close()
    from habitus.core.trace import Outcome, OutcomeSource, OutcomeStatus

    for trace in traces:
        if trace.id in rewards:
            status = OutcomeStatus.SUCCESS if rewards[trace.id] else OutcomeStatus.FAILURE
            trace.outcome = Outcome(status, OutcomeSource.REWARDS, trace.outcome.feedback)
    return traces


def _provider_usage(provider: Any | None) -> dict[str, Any]:
    if provider is not None and hasattr(provider, "ledger"):
        return provider.ledger.to_dict()
    return {"calls": 0, "cache_hits": 0, "input_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0,
            "output_tokens": 0, "total_tokens": 0, "cost": 0.0, "unpriced_calls": 0, "models": [], "stopped": None}


def summarize_all(traces: list[Trace], summarizer: Summarizer, engine: Engine | None = None
                  ) -> tuple[list[TraceSummary], dict[str, Behaviour], int]:
    """Summaries of the traces with a known outcome, in trace-id order; the behaviour registry; unknown count.

    On an engine other than `local`, batches of traces are summarised by workers and their registries
    merged in order (the first definition of a key wins, as in one pass). A model-written summary
    (`LLMSummarizer`) always runs here: its provider, budget and ledger live in this process.
    """
    registry: dict[str, Behaviour] = {}
    summaries: list[TraceSummary] = []
    known = [t for t in sorted(traces, key=lambda t: t.id) if polarity_of(t) is not None]
    unknown = len(traces) - len(known)
    if engine is None or not engine.parallel or not isinstance(summarizer, RuleSummarizer):
        for trace in known:
            summaries.append(summarizer.summarize(trace, registry))
    else:
        from habitus.fleet.engine import batched

        for part, found in engine.map(summarize_batch, ((summarizer, b) for b in batched(known, SUMMARY_BATCH))):
            summaries.extend(part)
            for key, behaviour in found.items():
                registry.setdefault(key, behaviour)
    if not summaries:
        raise RefineError(f"none of the {len(traces)} trace(s) has a known outcome; give --rewards")
    return summaries, registry, unknown


def cluster_by_polarity(train: list[TraceSummary], vectors: Any, clusterer: str, use_umap: bool,
                        sample_limit: int = cluster_stage.SAMPLE_LIMIT
                        ) -> tuple[list[dict[str, Any]], dict[str, int], list[dict[str, Any]]]:
    """Clusters of each polarity (rows in a fixed order), labels by trace id, and the skipped partitions."""
    clusters: list[dict[str, Any]] = []
    labels_by_id: dict[str, int] = {}
    skipped: list[dict[str, Any]] = []
    for polarity in (SUCCESS, FAILURE):
        rows = [i for i, s in enumerate(train) if s.polarity == polarity]
        labels = cluster_stage.cluster_vectors(vectors[rows], clusterer, use_umap, sample_limit) if rows else None
        if labels is None:
            skipped.append({"polarity": polarity, "traces": len(rows),
                            "reason": f"fewer than {cluster_stage.MIN_PARTITION} traces"})
            continue
        for row, label in zip(rows, labels, strict=True):
            labels_by_id[train[row].trace_id] = label
        for label in sorted(set(labels)):
            ids = sorted(train[row].trace_id for row, lab in zip(rows, labels, strict=True) if lab == label)
            clusters.append({"polarity": polarity, "cluster_id": label, "noise": label < 0, "size": len(ids),
                             "trace_ids": ids})
    return clusters, labels_by_id, skipped


def refine(skill_path: Path | str, traces_path: Path | str | None = None, rewards_path: Path | str | None = None,
           out_dir: Path | str | None = None, *, traces: list[Trace] | None = None,
           ground_truth: Path | str | None = None, holdout: float = 0.0, clusterer: str = "umap_hdbscan",
           use_umap: bool = True, gate: bool = True, gate_fail_open: bool = False, embedder: str | Any = "tfidf",
           summarizer: Summarizer | None = None, judge: Judge | None = None, provider: Any | None = None,
           install: bool = False, seed: int = holdout_stage.SEED, engine: Engine | None = None,
           cluster_sample: int = cluster_stage.SAMPLE_LIMIT,
           progress: Callable[[str, float], None] | None = None) -> RefineResult:
    """Run the whole pipeline; writes the four output files when `out_dir` is given.

    `engine` runs reading, summarising and embedding over workers (default: this process);
    `cluster_sample` is the partition size above which clustering samples, then assigns;
    `progress(stage, seconds)` is called as each stage ends. Needs the `refine` extra (`MissingExtra`).
    """
    require_extra("refine", "skill refinement")
    times: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        times[stage] = round(times.get(stage, 0.0) + now - clock, 4)
        clock = now
        if progress is not None:
            progress(stage, times[stage])

    if clusterer not in cluster_stage.METHODS:
        raise RefineError(f"unknown clusterer {clusterer!r}; choose one of {', '.join(cluster_stage.METHODS)}")
    if not 0.0 <= holdout < 1.0:
        raise RefineError(f"--holdout must be in [0, 1), got {holdout}")
    skill_path = Path(skill_path)
    if not skill_path.is_file():
        raise RefineError(f"skill file not found: {skill_path}")
    try:
        skill_text = skill_path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RefineError(f"skill file is not UTF-8: {skill_path}") from exc
    read_info: dict[str, Any] = {}
    if traces is None:
        if traces_path is None:
            raise RefineError("give traces_path or traces")
        traces, read_info = load_traces(Path(traces_path), Path(rewards_path) if rewards_path else None,
                                        Path(ground_truth) if ground_truth else None, engine)
    lap("read")

    summarizer = summarizer or RuleSummarizer()
    summaries, registry, unknown = summarize_all(traces, summarizer, engine)
    lap("summarize")

    held = holdout_stage.split(
        {p: [s.trace_id for s in summaries if s.polarity == p] for p in (SUCCESS, FAILURE)}, holdout, seed
    ) if holdout else set()
    train = [s for s in summaries if s.trace_id not in held]
    test = [s for s in summaries if s.trace_id in held]

    try:
        stage_embedder = get_stage_embedder(embedder) if isinstance(embedder, str) else embedder
        vectors = embed_texts([s.embed_text for s in train], stage_embedder, engine)
    except (ValueError, RuntimeError, ImportError) as exc:  # unknown embedder, no model files, empty input
        raise RefineError(f"embed stage failed: {exc}") from exc
    lap("embed")

    clusters, labels_by_id, skipped = cluster_by_polarity(train, vectors, clusterer, use_umap, cluster_sample)
    lap("cluster")

    by_id = {s.trace_id: s for s in train}
    profile = CorpusProfile.of(train)  # counted once for every cluster
    proposals: list[Proposal] = []
    for entry in clusters:
        if entry["noise"]:
            continue  # noise never yields an edit
        members = [by_id[t] for t in entry["trace_ids"]]
        proposal = propose_for_cluster(entry["polarity"], entry["cluster_id"], members, train, registry,
                                       profile)
        entry["proposal"] = proposal.id if proposal else None
        if proposal:
            proposals.append(proposal)
    lap("propose")

    config = GateConfig(enabled=gate, fail_open=gate_fail_open)
    traces_by_id = {t.id: t for t in traces}
    for proposal in proposals:
        citations = verify_citations(proposal, traces_by_id)
        proposal.gate = evaluate(proposal, train, config, judge, citations)
    accepted = [p for p in proposals if p.accepted]
    lap("gate")

    proposed, merge_log = merge(skill_text, accepted, registry)
    for proposal, entry in zip(accepted, merge_log, strict=True):
        proposal.merge = entry
    diff = unified_diff(skill_text, proposed, skill_path.name)
    lap("merge")

    held_memo: dict[tuple[str, str], dict[str, Any]] = {}  # one check per (behaviour, kind)
    for proposal in accepted:
        proposal.holdout = holdout_stage.check(proposal, test, held_memo) if holdout else {}
    lap("holdout")

    manifest = {
        "format": 1,
        "inputs": {
            "skill": {"name": skill_path.name, "sha256": _sha(skill_path)},
            "traces": {"name": Path(traces_path).name if traces_path else None, "count": len(traces),
                       "with_outcome": len(summaries), "unknown_outcome": unknown, **read_info},
            "rewards": {"name": Path(rewards_path).name, "sha256": _sha(Path(rewards_path))} if rewards_path else None,
        },
        "config": {
            "summarizer": summarizer.name, "summarizer_errors": getattr(summarizer, "errors", 0),
            "embedder": getattr(stage_embedder, "name", type(stage_embedder).__name__),
            "clusterer": clusterer, "umap": use_umap and clusterer != "single",
            "umap_params": "components=min(20,max(1,n-2)), neighbours=min(15,n-1), min_dist=0.1, cosine, seed=42",
            "hdbscan": {"min_cluster_size": 2, "min_samples": 1, "cluster_selection_method": "eom"},
            "cluster_sample": {"limit": cluster_sample, "seed": cluster_stage.SEED,
                               "min_cluster_size": cluster_stage.sampled_min_cluster_size(cluster_sample),
                               "sampled": [p for p in (SUCCESS, FAILURE) if cluster_stage.samples(
                                   sum(s.polarity == p for s in train), cluster_sample)]},
            "gate": {"enabled": gate, "fail_open": gate_fail_open, "min_support": config.min_support,
                     "max_p": config.max_p, "min_lift": config.min_lift, "judge": judge is not None},
            "holdout": holdout, "seed": seed,
        },
        "split": {"train": len(train), "held_out": len(test), "held_out_ids": sorted(held)},
        "clusters": clusters,
        "skipped_partitions": skipped,
        "proposals": [p.to_dict() for p in proposals],
        "accepted": [p.id for p in accepted],
        "rejected": [{"id": p.id, "reasons": p.gate["reasons"]} for p in proposals if not p.accepted],
        "flagged_by_holdout": [p.id for p in accepted if p.holdout.get("status") in holdout_stage.FLAGGED],
        "summaries": [s.to_dict() for s in summaries],
        "usage": _provider_usage(provider),
    }
    result = RefineResult(out_dir=Path(out_dir) if out_dir else None, skill_path=skill_path,
                          proposed_skill=proposed, diff=diff, manifest=manifest, stage_seconds=times)
    if out_dir:
        from habitus.refine.report import write_outputs

        write_outputs(result, vectors, [s.trace_id for s in train], labels_by_id, by_id)
        lap("report")
    if install and diff:
        result.installed, result.previous = install_skill(skill_path, proposed)
    result.stage_seconds = times
    return result


def install_skill(skill_path: Path, proposed: str) -> tuple[Path, Path]:
    """Replace the skill with `proposed`, keeping the previous text as `<name>.prev-<k><suffix>` beside it."""
    k = 1
    while (previous := skill_path.with_name(f"{skill_path.stem}.prev-{k}{skill_path.suffix}")).exists():
        k += 1
    shutil.copy2(skill_path, previous)
    tmp = skill_path.with_name(f".{skill_path.name}.habitus-tmp")
    tmp.write_bytes(proposed.encode("utf-8"))
    tmp.replace(skill_path)
    return skill_path, previous
