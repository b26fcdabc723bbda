"""CLI: `habitus context simulate SESSION... [--policy P]... [--model M] [--out DIR] [--json]`.

Thin: parse arguments, call `habitus.context.simulate_files`, print a Rich table (or one JSON
document), and with `--out` write report.json, context.png and index.html.
"""

from __future__ import annotations

from pathlib import Path

import typer

from habitus.cli.output import JsonOption, emit, fail, stdout, warn

POLICY_HELP = (
    "Context policy (repeatable): full | keep-last:N | keep-last:N+summary:W (W=-1: all evicted) | "
    "compact:T[:K] | clear-results:N | self-edit. Default: full, keep-last:5, keep-last:5+summary:3, "
    "compact:50000, clear-results:5."
)


def register(app: typer.Typer) -> None:
    """Add `habitus context ...` to the root app."""
    context_app = typer.Typer(help="In-run context policies: replay sessions, compare tokens, cache hits and cost.",
                              no_args_is_help=True)
    app.add_typer(context_app, name="context")

    @context_app.command("simulate")
    def simulate_cmd(
        sessions: list[Path] = typer.Argument(..., help="Session files (Claude Code, Codex, spans, chat, OTel)."),
        policy: list[str] = typer.Option(None, "--policy", "-p", help=POLICY_HELP),
        model: str = typer.Option(None, "--model", "-m", help="Price with this model (default: the session's)."),
        out: Path = typer.Option(None, "--out", "-o", help="Write report.json, context.png and index.html here."),
        summarizer: str = typer.Option("state", "--summarizer",
                                       help="state (model-free, default) or llm (the configured provider)."),
        cache_ttl: str = typer.Option("auto", "--cache-ttl",
                                      help="Anthropic cache TTL: 5m, 1h, or auto (1h when the recording shows "
                                           "cache reads after pauses over 5 minutes)."),
        hidden_prefix: int = typer.Option(None, "--hidden-prefix", min=0,
                                          help="Tokens of harness prefix not in the transcript "
                                               "(default: calibrated from recorded usage)."),
        as_json: bool = JsonOption,
    ) -> None:
        """Replay recorded sessions request by request under each policy, with simulated prompt caching."""
        from habitus.context.policies import PolicyError, parse_policy
        from habitus.context.simulate import DEFAULT_POLICIES, simulate_files

        specs = list(policy or DEFAULT_POLICIES)
        try:
            for spec in specs:
                parse_policy(spec)
        except PolicyError as exc:
            fail(str(exc))
        if cache_ttl not in ("auto", "5m", "1h"):
            fail(f"--cache-ttl must be auto, 5m or 1h, not {cache_ttl!r}")
        chosen = _summarizer(summarizer)
        try:
            reports = simulate_files(sessions, specs, model, summarizer=chosen, anthropic_ttl=cache_ttl,
                                     hidden_prefix=hidden_prefix)
        except (OSError, ValueError) as exc:  # unreadable file, or a format the readers reject
            fail(str(exc))
        if not reports:
            fail("no session in the given files made a model request (nothing to simulate)")
        if getattr(chosen, "fallbacks", 0):
            warn(f"no model configured: {chosen.fallbacks} summaries used the model-free state extractor")
        page = None
        if out is not None:
            from habitus.context.report import write_report

            page = write_report(reports, out)
        data = {"reports": [r.to_dict() for r in reports], "html": str(page) if page else None}
        emit(data, as_json, lambda _: _render(reports, page))


def _summarizer(kind: str):  # -> Summarizer | None
    from habitus.context.summarize import LLMSummarizer, StateExtractorSummarizer

    if kind == "state":
        return None
    if kind != "llm":
        fail(f"--summarizer must be state or llm, not {kind!r}")
    from habitus.llm.providers import get_provider
    from habitus.llm.types import LLMError

    try:
        provider = get_provider()
    except LLMError as exc:
        fail(str(exc))
    return LLMSummarizer(provider, fallback=StateExtractorSummarizer())


def _render(reports, page) -> None:  # noqa: ANN001 - rendering helper
    from habitus.context.report import describe, render_table

    for report in reports:
        stdout.print(render_table(report))
        for line in describe(report):
            stdout.print(line, highlight=False)
        stdout.print()
    if page is not None:
        stdout.print(f"report: {page}", highlight=False)
