"""Where to look: the files a task's work most likely goes to, each with the evidence for it.

Evidence for a file, gathered without a model:

- **named**: the task names the file (a path, a unique suffix of one, or a unique file name; a
  backticked name that is a file's stem); stronger in a heading, a `File:` line or the title;
- **defines**: the task names a symbol (backticked, or an identifier like `UnifiedFileRow`) that
  the file defines at HEAD, and at most two files do;
- **quoted**: a phrase the task quotes ("Generate Prompts") occurs verbatim in the file (`git grep`);
- **map**: the words of the task meet the words of past tasks that changed the file (BM25 over the
  repo map's file profiles, normalised by the task's own best possible score);
- **code**: the words of the task meet the file's path segments and defined symbols (BM25);
- **base**: the share of past tasks that changed the file.

The repo's most-changed files are candidates for every task (a task that names nothing still has the
repo's prior, and the model decides whether it is worth handing); a file the task names only inside a
negated clause ("do not touch `a.go`") is no candidate at all.

`candidates()` turns these into features; `probabilities()` applies the repo's logistic model
(`RepoMap.model`, fitted on its own history by `habitus.learn.calibrate`) and `pick()` keeps the
files at or above the chance threshold, at most `MAX_FILES`. Only files that exist at HEAD are
candidates: every place is validated against the work tree by construction.
"""

from __future__ import annotations

import math
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from habitus.core.lazyre import lazy_re
from habitus.core.tasktext import CONTEXT_HEADS, TaskText
from habitus.index.code import FileNames

if TYPE_CHECKING:
    from collections.abc import Callable

    from habitus.core.repomap import RepoMap
    from habitus.index.code import CodeIndex
    from habitus.index.snapshot import CodeSnapshot

    Code = CodeIndex | CodeSnapshot  # the commit's files and symbols: in memory, or read from its snapshot
    Names = FileNames | CodeSnapshot  # `code.names()`: the files by the names a task can use for them

FEATURES = ("named", "named_strong", "named_code_only", "named_context_only", "named_count", "named_rate", "defines",
            "quoted", "map", "map_top", "vote", "code", "code_top", "base")
MAX_FILES = 4
MAP_CANDIDATES = 6
CODE_CANDIDATES = 4
SIMILAR_TASKS = 5
HOT_CANDIDATES = 3  # the repo's most-changed files are candidates for any task (their `base` is the prior)
MAP_REASON_MIN = 0.3  # a past-task word score below this is too weak to be stated as why
NAMED = "named in the task"
MIN_VOTE = 0.2  # a file changed by similar tasks holding less of their similarity than this is no candidate
MAX_DEFINERS = 2  # a name defined in more files than this says little about where the work goes
MAX_QUOTE_FILES = 3
MAX_QUOTES = 6
QUOTE_PREFIX_WORDS = 5
GREP_TIMEOUT_S = 2.0
NAMED_PRIOR = 2.0  # pseudo-count pulling a file's named→changed rate towards the repo's rate
# used until a repo's history is long enough to fit its own (see habitus.learn.calibrate): files the task
# names or whose symbols it names are likely; words alone are not enough
DEFAULT_MODEL = {"bias": -3.0, "named": 2.6, "named_strong": 0.8, "named_code_only": -1.0, "named_context_only": -0.5,
                 "named_count": 0.3,
                 "named_rate": 1.0, "defines": 1.6, "quoted": 1.6, "map": 1.0, "map_top": 0.3, "vote": 1.0, "code": 0.3,
                 "code_top": 0.1,
                 "base": 1.0}
_STRONG_LINE = lazy_re(r"^\s*(?:#{1,6}\s|[-*]?\s*\**\s*(?:files?|path|location|in|modify|edit|create|update)"
                          r"\b[^:\n]{0,30}:)", re.I)
_STRONG_HEADING = lazy_re(r"\b(?:files?|changes?|modif\w*|implement\w*|approach|fix\w*|steps?|where)\b", re.I)
_FENCE_BLOCK = lazy_re(r"```.*?(?:```|\Z)", re.S)
_COMMAND_LINE = lazy_re(r"^\s*[-*\d.)]*\s*`?(?:\$\s*)?(?:bun|npm|npx|pnpm|yarn|node|deno|python3?|uv|go|cargo|make|"
                           r"bash|sh|git|cd|cat|ls|rg|grep)\s", re.I)


MAX_QUOTE = 90


def quote(text: str, limit: int = MAX_QUOTE) -> str:
    """`text` as quoted data: sanitised (`habitus.core.untrusted`), one line, no backticks or double quotes inside,
    at most `limit` characters."""
    from habitus.core.untrusted import one_line

    return '"' + one_line(text.replace("`", "'").replace('"', "'"), limit) + '"'


@dataclass
class Candidate:
    """A file that some evidence points at, its features and the reasons in words."""

    file: str
    features: dict[str, float] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    chance: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {"file": self.file, "chance": round(self.chance, 3), "why": list(self.reasons),
                "features": {k: round(v, 3) for k, v in self.features.items() if v}}


def _resolve_path(mention: str, names: Names) -> str | None:
    clean = mention.strip("`'\"()[]<>,;:").removeprefix("./").removeprefix("@")
    key = clean.lower()
    exact = names.path_by_lower(key)
    if exact is not None:
        return exact
    if "/" in key:
        hits = names.lower_with_suffix("/" + key, 2)
        if len(hits) == 1:
            return hits[0]
    name = key.rsplit("/", 1)[-1]
    hits = names.with_name(name, 2)
    return hits[0] if len(hits) == 1 else None


@dataclass(frozen=True)
class Mention:
    """How a task names one file: how often, and where."""

    count: int
    strong: bool  # in the title, a heading, a `File:` line, a line that is just the path, or under a heading
    # about files or changes
    code_only: bool  # every mention is inside a fenced block or a shell command line
    context_only: bool  # a plan that names it only under its context/background/problem headings: what the work
    # starts from or is about, not necessarily where it goes

    def merge(self, other: Mention) -> Mention:
        return Mention(self.count + other.count, self.strong or other.strong, self.code_only and other.code_only,
                       self.context_only and other.context_only)


def _mention_kind(text: str, title: str, path: str, mention: str, *, is_plan: bool = False) -> tuple[bool, bool, bool]:
    """(strong, only in code, only in a plan's context sections) for a file's mentions (see `Mention`)."""
    base = path.rsplit("/", 1)[-1]
    strong = base.lower() in title.lower()
    in_prose = False
    outside_context = strong or not is_plan
    masked = _FENCE_BLOCK.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    heading = ""
    for line in masked.split("\n"):
        head = re.match(r"^\s{0,3}#{1,6}\s+(.*)", line)
        if head:
            heading = head.group(1)
        if mention not in line and base not in line:
            continue
        if _COMMAND_LINE.match(line) or not line.strip():
            continue
        in_prose = True
        bare = line.strip().strip("*`-: ").split(" (", 1)[0].strip("*` ")
        if (head or _STRONG_LINE.match(line) or bare in (mention, path, base) or _STRONG_HEADING.search(heading)):
            strong = True
        if not CONTEXT_HEADS.match(heading) or head:
            outside_context = True
    return strong, not in_prose, in_prose and not outside_context


def named_files(tt: TaskText, code: Code, names: Names | None = None) -> dict[str, Mention]:
    """file -> how the task names it, for the files the task names that exist in `code` (`names`: its
    `names()`, when the caller already has them)."""
    names = names or code.names()
    found: dict[str, Mention] = {}
    body = tt.body
    for mention in tt.paths:
        path = _resolve_path(mention, names)
        if path is None:
            continue
        kind = Mention(max(1, body.count(mention)), *_mention_kind(body, tt.title, path, mention, is_plan=tt.is_plan))
        found[path] = found[path].merge(kind) if path in found else kind
    for name in tt.names:
        hits = names.with_stem(name.lower(), 2)
        if len(hits) == 1 and len(name) >= 4 and hits[0] not in found:
            found[hits[0]] = Mention(max(1, body.count(name)),
                                     *_mention_kind(body, tt.title, hits[0], name, is_plan=tt.is_plan))
    return found


def defining_files(tt: TaskText, code: Code) -> dict[str, list[str]]:
    """file -> the names the task mentions that it defines (names defined by at most MAX_DEFINERS files)."""
    wanted = {n for n in tt.names if len(n) >= 4}
    if not wanted:
        return {}
    out: dict[str, list[str]] = {}
    for name, files in code.definers(wanted, MAX_DEFINERS + 1):
        if len(files) <= MAX_DEFINERS:
            for f in files:
                out.setdefault(f, []).append(name)
    return out


def quoted_files(tt: TaskText, worktree: Path | None, *, timeout: float = GREP_TIMEOUT_S) -> dict[str, list[str]]:
    """file -> quoted phrases of the task it contains verbatim (a phrase found in more than MAX_QUOTE_FILES
    files is too common to say where the work goes). The searches (each phrase, and its first words for a quote
    that wraps) run at once, all within `timeout` s."""
    return start_quoted(tt, worktree, timeout=timeout)()


def start_quoted(tt: TaskText, worktree: Path | None, *,
                 timeout: float = GREP_TIMEOUT_S) -> Callable[[], dict[str, list[str]]]:
    """Start the searches of `quoted_files` now; the call returned waits for them (until `timeout` after now) and
    answers as `quoted_files`, so other work can run while git searches."""
    phrases = [q for q in tt.quoted if len(q) >= 6 and " " in q.strip()][:MAX_QUOTES]
    if worktree is None or not phrases:
        return dict
    # a long quote may wrap in the source: its first words count when the whole is not found
    needles = {phrase: list(dict.fromkeys([phrase, " ".join(phrase.split()[:QUOTE_PREFIX_WORDS])]))
               for phrase in phrases}
    searches = _start_greps(worktree, [n for group in needles.values() for n in group], timeout)

    def finish() -> dict[str, list[str]]:
        found = searches()
        out: dict[str, list[str]] = {}
        for phrase in phrases:
            hits: list[str] = []
            for needle in needles[phrase]:
                hits = found.get(needle, [])
                if hits:
                    break
            if 0 < len(hits) <= MAX_QUOTE_FILES:
                for f in hits:
                    out.setdefault(f, []).append(phrase)
        return out

    return finish


def _start_greps(worktree: Path, needles: list[str], timeout: float) -> Callable[[], dict[str, list[str]]]:
    """Start one `git grep -l -F -I` per needle; the call returned answers needle -> files of the work tree holding
    it, and a search still running `timeout` s after the start finds nothing."""
    procs: dict[str, subprocess.Popen[str]] = {}
    deadline = time.monotonic() + timeout
    try:
        for needle in dict.fromkeys(needles):
            procs[needle] = subprocess.Popen(["git", "-C", str(worktree), "grep", "-l", "-F", "-I", "-e", needle],
                                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                             stderr=subprocess.DEVNULL, text=True)
    except (OSError, subprocess.SubprocessError):
        pass

    def collect() -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        try:
            for needle, proc in procs.items():
                try:
                    out, _ = proc.communicate(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    continue
                found[needle] = [line for line in out.split("\n") if line]
        except (OSError, subprocess.SubprocessError):
            pass
        finally:
            for proc in procs.values():
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        return found

    return collect


def bm25_normalised(query: list[str], docs: dict[str, dict[str, int]], k1: float = 1.2,
                    b: float = 0.75) -> dict[str, float]:
    """BM25 of each document against the query's distinct terms, divided by the sum of their idf (so a
    document holding every term once scores about 1); documents sharing no term are left out."""
    n = len(docs)
    if not n:
        return {}
    wanted = set(query)
    df: dict[str, int] = dict.fromkeys(wanted, 0)
    lengths = {}
    for key, doc in docs.items():
        lengths[key] = sum(doc.values())
        for term in wanted.intersection(doc):
            df[term] += 1
    avg = sum(lengths.values()) / n or 1.0
    idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items() if c}
    top = sum(idf.values()) or 1.0
    out = {}
    for key, doc in docs.items():
        score = 0.0
        for term in wanted.intersection(doc):
            tf = doc[term]
            score += idf[term] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[key] / avg))
        if score:
            out[key] = score / top
    return out


def candidates(task: str | TaskText, repomap: RepoMap, code: Code, worktree: Path | None = None,
               *, code_docs: dict[str, dict[str, int]] | CodeSnapshot | None = None,
               names: Names | None = None, grep_timeout: float = GREP_TIMEOUT_S) -> list[Candidate]:
    """Every file some evidence points at, with its features (see the module docstring).

    `code_docs`: the files' retrieval terms (`code.term_docs()`), scored by BM25 for the code evidence;
    `names`: `code.names()` when the caller keeps them; `grep_timeout`: how long the search for the task's
    quoted phrases may take."""
    from habitus.core.tasktext import read_task
    from habitus.index.terms import terms

    tt = read_task(task) if isinstance(task, str) else task
    quoted = start_quoted(tt, worktree, timeout=grep_timeout)  # git searches while the other evidence is read
    query = terms(tt.words)
    found: dict[str, Candidate] = {}
    names = names or code.names()
    refused = negated_files(tt, code, names)

    def cand(path: str) -> Candidate:
        if path not in found:
            found[path] = Candidate(file=path, features=dict.fromkeys(FEATURES, 0.0))
        return found[path]

    repo_rate = _named_rate(repomap)
    for path, mention in named_files(tt, code, names).items():
        if path in refused:
            continue
        c = cand(path)
        c.features.update(named=1.0, named_strong=float(mention.strong), named_code_only=float(mention.code_only),
                          named_context_only=float(mention.context_only), named_count=math.log1p(mention.count))
        prof = repomap.files.get(path)
        named, edited = (prof.named, prof.named_edited) if prof else (0, 0)
        c.features["named_rate"] = _named_log_odds(named, edited, repo_rate)
        c.reasons.append(NAMED if not mention.context_only else "named in the task's context")
    for path, names in defining_files(tt, code).items():
        c = cand(path)
        c.features["defines"] = 1.0
        stem = path.rsplit("/", 1)[-1].split(".", 1)[0].lower()
        told = [n for n in names if n.lower() != stem]  # the file's own name is already "named in the task"
        named_here = c.features["named"] > 0
        if told or not named_here:
            c.reasons.append("defines " + ", ".join(f"`{n}`" for n in (told or names)[:3])
                             + ("" if named_here else ", named in the task"))
    for path, phrases in quoted().items():
        if code.has(path):
            cand(path).features["quoted"] = 1.0
            cand(path).reasons.append(f"contains {quote(phrases[0], 60)}, quoted in the task")
    present = code.existing(repomap.files)
    live = {p: prof for p, prof in repomap.files.items() if p in present}
    map_scores = bm25_normalised(query, {p: prof.terms for p, prof in live.items()}) if query else {}
    for rank, (path, score) in enumerate(sorted(map_scores.items(), key=lambda kv: (-kv[1], kv[0]))):
        if rank < MAP_CANDIDATES or path in found:
            c = cand(path)
            c.features["map"] = score
            c.features["map_top"] = float(rank == 0)
    for path, (share, titles) in similar_votes(query, repomap, live).items():
        c = cand(path)
        c.features["vote"] = share
        c.reasons.append("changed by similar past tasks (" + "; ".join(quote(t, 70) for t in titles[:2]) + ")")
    if code_docs is not None and query:
        # a snapshot scores only the files this loop can keep: the best CODE_CANDIDATES and those already found
        code_scores = bm25_normalised(query, code_docs) if isinstance(code_docs, dict) else \
            code_docs.top(query, CODE_CANDIDATES, found)
        for rank, (path, score) in enumerate(sorted(code_scores.items(), key=lambda kv: (-kv[1], kv[0]))):
            if rank < CODE_CANDIDATES or path in found:
                c = cand(path)
                c.features["code"] = score
                c.features["code_top"] = float(rank == 0)
    for path in prior_files(repomap, live):
        cand(path)
    for path in list(found):
        if path in refused:
            del found[path]
    for path, c in found.items():
        prof = live.get(path)
        if prof is not None and repomap.tasks:
            c.features["base"] = prof.tasks / repomap.tasks
            # the past tasks' words are a reason when they match well and no similar past task already says it
            if (c.features["map_top"] or c.features["map"] >= MAP_REASON_MIN) and not c.features["vote"]:
                c.reasons.append(_map_reason(prof, query))
        if not c.reasons and c.features["code"] > 0:
            c.reasons.append("its path and symbols match the task's words")
        if not c.reasons and prof is not None:
            c.reasons.append(f"often changed here ({prof.tasks} of {repomap.tasks} past tasks): likely, not certain")
    return list(found.values())


def negated_files(tt: TaskText, code: Code, names: Names | None = None) -> set[str]:
    """Files the task names only inside negated clauses ("do not touch `a.go`", "leave README.md alone" is not
    caught: only *not / never / no / without / n't* clauses): the task says where its work does not go."""
    from habitus.core.tasktext import read_task
    from habitus.recall.negation import strip_negated

    kept = strip_negated(tt.body)
    if kept == tt.body:
        return set()
    names = names or code.names()
    return set(named_files(tt, code, names)) - set(named_files(read_task(kept), code, names))


def prior_files(repomap: RepoMap, live: dict[str, object]) -> list[str]:
    """The HOT_CANDIDATES files in the work tree that the most past tasks changed: candidates for any task, so a
    task that names nothing still meets the repo's prior (the model decides whether it is worth handing). A
    window of the *last* tasks was tried as well and left out: it helps while the map is fresh and misleads once
    it is a few sessions old (docs/bench-replay.md)."""
    return sorted(live, key=lambda p: (-repomap.files[p].tasks, p))[:HOT_CANDIDATES]


def similar_tasks(query: list[str], past: list[object], k1: float = 1.2, b: float = 0.75) -> list[tuple[int, float]]:
    """(index, score) of the past tasks sharing a term with the query, best first: BM25 over each task's set of
    terms, normalised like `bm25_normalised` (one pass over the tasks; no per-task dictionaries)."""
    from habitus.core.repomap import PastTask

    wanted = set(query)
    hits: list[tuple[int, set[str], int]] = []
    df: dict[str, int] = {}
    total = 0
    for i, task in enumerate(past):
        assert isinstance(task, PastTask)
        total += len(task.terms)
        shared = wanted.intersection(task.terms)
        if shared:
            hits.append((i, shared, len(task.terms)))
            for term in shared:
                df[term] = df.get(term, 0) + 1
    if not hits:
        return []
    n, avg = len(past), total / len(past) or 1.0
    idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
    top = sum(idf.values()) or 1.0
    scored = [(i, sum(idf[t] for t in shared) * (k1 + 1) / (1 + k1 * (1 - b + b * length / avg)) / top)
              for i, shared, length in hits]
    return sorted(scored, key=lambda pair: (-pair[1], pair[0]))


def similar_votes(query: list[str], repomap: RepoMap, live: dict[str, object]) -> dict[str, tuple[float, list[str]]]:
    """file -> (share of the similarity of the SIMILAR_TASKS most similar past tasks that changed it, their titles)."""
    if not query or not repomap.past:
        return {}
    top = similar_tasks(query, repomap.past)[:SIMILAR_TASKS]
    total = sum(s for _, s in top)
    votes: dict[str, tuple[float, list[str]]] = {}
    for index, sim in top:
        past = repomap.past[index]
        for path in past.files:
            if path in live:
                share, titles = votes.get(path, (0.0, []))
                votes[path] = (share + sim / total, titles + [past.title] if past.title else titles)
    return {p: v for p, v in votes.items() if v[0] >= MIN_VOTE}


def _named_log_odds(named: int, edited: int, repo_rate: float) -> float:
    """How much more (> 0) or less (< 0) often naming this file meant changing it than naming any file did, in
    log-odds, the file's counts shrunk towards the repo's rate by NAMED_PRIOR pseudo-tasks: evidence a logistic
    model can add (a file named ten times and never changed is strong evidence against, one named once is not)."""
    rate = (edited + NAMED_PRIOR * repo_rate) / (named + NAMED_PRIOR)
    return math.log(rate / (1 - rate)) - math.log(repo_rate / (1 - repo_rate))


def _named_rate(repomap: RepoMap) -> float:
    named = sum(p.named for p in repomap.files.values())
    edited = sum(p.named_edited for p in repomap.files.values())
    return (edited + 1.0) / (named + 2.0)


def _map_reason(prof: object, query: list[str]) -> str:
    """'changed in N past tasks, e.g. "<title>"' (the title quoted as data: it is a past task's words)."""
    from habitus.core.repomap import FileProfile

    assert isinstance(prof, FileProfile)
    example = f", e.g. {quote(prof.examples[0], 70)}" if prof.examples else ""
    return f"changed in {prof.tasks} past task{'s' if prof.tasks != 1 else ''}{example}"


def chance(features: dict[str, float], model: dict[str, float]) -> float:
    """The logistic model's chance that the work goes to this file."""
    z = model.get("bias", 0.0) + sum(model.get(k, 0.0) * v for k, v in features.items())
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def probabilities(cands: list[Candidate], model: dict[str, float] | None) -> list[Candidate]:
    """`cands` with `chance` set, best first."""
    weights = model or DEFAULT_MODEL
    for c in cands:
        c.chance = chance(c.features, weights)
    return sorted(cands, key=lambda c: (-c.chance, c.file))


def is_named(features: dict[str, float]) -> bool:
    """The task names this file in its prose (not only in a code block, a command line or a plan's context
    section): such a file is always handed. On the real histories' past tasks a file named in prose was the task's
    in 219 of 321 candidates, one named only in code or context in 0 of 15, one merely defining a symbol the task
    names in 5 of 63 (`benchmarks/fit_where_prior.py`), so those stay evidence for the model, not a rule."""
    return bool(features.get("named")) and not features.get("named_code_only") and \
        not features.get("named_context_only")


def choose_files(chances: list[float], named: list[bool], *, min_chance: float, handover_chance: float,
                 max_files: int = MAX_FILES) -> list[int]:
    """Indices of the files to hand over, given their chances best first and whether the task names each.

    Named files are always handed (at most `max_files`). The others are handed when the best of them reaches
    `handover_chance` (else nothing is likely enough: an abstention unless a file is named), those at
    `min_chance` or above, in the room the named ones leave. One calibration and one recall use this, so the
    thresholds chosen on the history are the thresholds applied."""
    must = [i for i, flag in enumerate(named) if flag][:max_files]
    others = [i for i, flag in enumerate(named) if not flag]
    extra: list[int] = []
    if others and chances[others[0]] >= handover_chance:
        extra = [i for i in others if chances[i] >= min_chance][:max_files - len(must)] or \
            ([others[0]] if not must else [])
    return sorted(must + extra)


def pick(cands: list[Candidate], *, min_chance: float, handover_chance: float,
         max_files: int = MAX_FILES) -> list[Candidate]:
    """The files to hand over from candidates sorted best first (see `choose_files`)."""
    chosen = choose_files([c.chance for c in cands], [is_named(c.features) for c in cands], min_chance=min_chance,
                          handover_chance=handover_chance, max_files=max_files)
    return [cands[i] for i in chosen]


__all__ = ["DEFAULT_MODEL", "FEATURES", "MAX_FILES", "Candidate", "FileNames", "Mention", "bm25_normalised",
           "candidates", "chance", "choose_files", "defining_files", "is_named", "named_files", "negated_files", "pick",
           "prior_files", "probabilities", "quoted_files"]
