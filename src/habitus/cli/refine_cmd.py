"""CLI command `habitus refine SKILL.md --traces PATH --rewards FILE`: improve a skill from past runs.

Thin: parses options, calls `habitus.refine.pipeline.refine`, prints a summary (or one JSON
document with `--json`). `--install` shows the diff first, then replaces the skill and keeps the
previous version beside it. `--engine ray` (extra `fleet`) reads, summarises and embeds on Ray
workers (`--address` for a cluster); the outputs are the same as with the default `local`.
Heavy imports stay inside the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from habitus.cli.output import JsonOption, RayAddressOption, emit, fail, stderr, stdout
from habitus.refine.cluster import SAMPLE_LIMIT


def _render(data: dict[str, Any]) -> None:
    manifest = data["manifest"]
    clusters = manifest["clusters"]
    per = {p: sum(1 for c in clusters if c["polarity"] == p and not c["noise"]) for p in ("success", "failure")}
    stdout.print(
        f"{manifest['split']['train']} traces used ({manifest['split']['held_out']} held out): "
        f"{per['success']} success and {per['failure']} failure clusters, {len(manifest['proposals'])} proposals, "
        f"[green]{len(data['accepted'])} accepted[/green], [red]{len(data['rejected'])} rejected[/red]",
        highlight=False, soft_wrap=True)
    for proposal in manifest["proposals"]:
        verdict = "[green]accepted[/green]" if proposal["gate"]["passed"] else "[red]rejected[/red]"
        holdout = proposal.get("holdout") or {}
        extra = f" · held-out: {holdout['status']}" if holdout else ""
        stdout.print(f"  {proposal['id']:>4} {proposal['kind']:<9} {verdict} {proposal['observation']} "
                     f"({len(proposal['supporting_trace_ids'])}/{len(proposal['cluster_trace_ids'])} traces){extra}",
                     highlight=False, soft_wrap=True)
        if not proposal["gate"]["passed"]:
            stdout.print(f"         {'; '.join(proposal['gate']['reasons'])}", highlight=False, soft_wrap=True)
    if data["out_dir"]:
        stdout.print(f"wrote {', '.join(Path(p).name for p in data['files'].values())} to {data['out_dir']}",
                     highlight=False, soft_wrap=True)
    if data["installed"]:
        stdout.print(f"installed {data['installed']} (previous version kept as {data['previous']})",
                     highlight=False, soft_wrap=True)


def _llm_parts(name: str | None) -> tuple[Any, Any, Any]:
    """(provider, summarizer, judge) for `--llm NAME`, or (None, None, None) when model-free."""
    if not name:
        return None, None, None
    from habitus.llm.providers import LLMError, get_provider
    from habitus.refine.gate import LLMJudge
    from habitus.refine.summarize import LLMSummarizer

    try:
        provider = get_provider(name)
    except LLMError as exc:
        raise ValueError(str(exc)) from exc
    if getattr(provider, "name", "") == "none":
        raise ValueError(f"--llm {name}: no model configured (see `habitus config`)")
    return provider, LLMSummarizer(provider), LLMJudge(provider)


_NEXT_STAGE = {"read": "summarise", "summarize": "embed", "embed": "cluster", "cluster": "propose",
               "propose": "gate", "gate": "merge", "merge": "held-out check", "holdout": "report"}


def register(app: typer.Typer) -> None:
    """Add `habitus refine`."""

    @app.command("refine")
    def refine_command(
        skill: Path = typer.Argument(..., help="The SKILL.md to refine."),
        traces: str | None = typer.Option(None, "--traces", help="Trace file or folder, or a file:// URL (span "
                                                                 "JSONL, transcripts, Claude Code, Codex, chat "
                                                                 "JSONL)."),
        from_store: bool = typer.Option(False, "--from-store", help="Read traces and outcomes from the store."),
        repo: Path | None = typer.Option(None, "--repo", help="With --from-store: only this repo's traces."),
        rewards: Path | None = typer.Option(None, "--rewards", help="binary_rewards.json: {trace_id: bool}."),
        ground_truth: Path | None = typer.Option(None, "--ground-truth", help="{trace_id: grader diagnosis} map."),
        out: Path = typer.Option(Path("refine-out"), "--out", help="Folder for the four output files."),
        holdout: float = typer.Option(0.0, "--holdout", min=0.0, max=0.9,
                                      help="Share of traces held out (seeded) to check each accepted edit."),
        clusterer: str = typer.Option("umap_hdbscan", "--clusterer", help="umap_hdbscan (default) or single."),
        no_umap: bool = typer.Option(False, "--no-umap", help="Ablation: HDBSCAN on the raw vectors."),
        no_gate: bool = typer.Option(False, "--no-gate", help="Ablation: accept every proposal."),
        fail_open: bool = typer.Option(False, "--gate-fail-open", help="Keep an edit when the gate cannot decide."),
        embedder: str = typer.Option("tfidf", "--embedder", help="Any habitus.index embedder name."),
        llm: str | None = typer.Option(None, "--llm", help="Provider for LLM summaries and the gate's judge."),
        install: bool = typer.Option(False, "--install", help="Show the diff, then replace SKILL.md "
                                                              "(the previous version is kept beside it)."),
        engine: str = typer.Option("local", "--engine", help="local (this process) or ray: read, summarise and "
                                                             "embed on Ray workers (pip install 'habitus\\[fleet]'); "
                                                             "same outputs."),
        address: str | None = RayAddressOption,
        cluster_sample: int = typer.Option(SAMPLE_LIMIT, "--cluster-sample", min=0,
                                           help="Partitions larger than this are clustered by a seeded sample of "
                                                "this size, the rest assigned to the nearest cluster (0: always "
                                                "exact)."),
        as_json: bool = JsonOption,
    ) -> None:
        """Refine a SKILL.md from historical traces and their outcomes, with no new rollouts."""
        import sys

        from habitus.core.extras import MissingExtra, require_extra
        from habitus.fleet.engine import get_engine
        from habitus.fleet.sources import local_path
        from habitus.llm.types import LLMError
        from habitus.refine.pipeline import RefineError, refine
        from habitus.store.sqlite import StoreError

        runner = None
        try:
            require_extra("refine", "habitus refine")
            if (traces is None) == (not from_store):
                raise ValueError("give either --traces PATH or --from-store")
            traces_path = local_path(traces) if traces is not None else None
            runner = get_engine(engine, address)
            stored = None
            if from_store:
                from habitus.refine.pipeline import load_store_traces

                stored = load_store_traces(repo, rewards)
            provider, summarizer, judge = _llm_parts(llm)
            with stderr.status("refine: reading traces") as status:  # shown on a terminal only
                def stage_done(stage: str, seconds: float) -> None:
                    status.update(f"refine: {stage} done in {seconds:.1f} s; next: {_NEXT_STAGE.get(stage, '')}")

                result = refine(skill, traces_path, None if from_store else rewards, out, traces=stored,
                                ground_truth=ground_truth, holdout=holdout, clusterer=clusterer,
                                use_umap=not no_umap, gate=not no_gate, gate_fail_open=fail_open,
                                embedder=embedder, summarizer=summarizer, judge=judge, provider=provider,
                                install=False, engine=runner, cluster_sample=cluster_sample, progress=stage_done)
        except (RefineError, ValueError, OSError, StoreError, LLMError, MissingExtra) as exc:
            fail(str(exc))
        finally:
            if runner is not None:
                runner.close()
        if install and result.diff:
            (sys.stderr if as_json else sys.stdout).write(result.diff)
            from habitus.refine.pipeline import install_skill

            result.installed, result.previous = install_skill(skill, result.proposed_skill)
        emit({**result.to_dict(), "engine": runner.name if runner is not None else engine}, as_json, render=_render)
