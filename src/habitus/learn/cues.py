"""Task text features for induction: task values, blanks with fill rules, and cue phrases.

*Values* are what a task states literally (backticked names, quoted text, key combinations, the
word after a phrase); recall reads them with the same functions (`habitus.recall.fills`), so a
fill rule learned here means the same thing there. *Blanks* are values that also appear in the
lines a run edited. *Cues* are phrases common to a group's tasks and rare in other groups' tasks,
never containing a task's own values.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from habitus.core.workflow import Blank, Fill
from habitus.recall.fills import backticked, key_combos, key_letter, quoted, unnamed, word_after

_STOP = """a an the and or but if then else of to in on at by for with from into onto as is are was were be been
being it its this that these those there here we you i me my our your please can could would should will shall may
might must do does did done make makes so also just very too some any all each every new which who what when where
why how than such via per up down out over under again more most other own same only not no nor let"""
STOPWORDS = frozenset(_STOP.split())
_WORD = re.compile(r"[a-z][a-z0-9'-]*")
_VALUE_SPANS = re.compile(r"`[^`\n]+`|\"[^\"\n]+\"|“[^”\n]+”|「[^」\n]+」|'[^'\n]+'")
_NUMBER = re.compile(r"\b\d[\d.,]*\b")
_VERBISH_WORDS = """add adds added read reads call calls called run runs ran handled handle trigger triggers
shown show shows use uses used set sets get gets expose exposes make makes create creates return returns list lists
bind binds named"""
_VERBISH = frozenset(_VERBISH_WORDS.split())
_PLAIN_VALUE = re.compile(r"[\w.+-]+")
_NAME_BEFORE = re.compile(r"([A-Za-z_][\w]*)\s*[:=]\s*[\"'`]?$")


def task_values(task: str) -> dict[tuple[str, int], str]:
    """(source, n) → value for each literal value the task states."""
    out: dict[tuple[str, int], str] = {}
    for source, values in (("code", backticked(task)), ("quoted", quoted(task)), ("key", key_combos(task))):
        for n, v in enumerate(values, 1):
            out[(source, n)] = v
    return out


def strip_values(task: str) -> str:
    """The task text without its literal values (backticked, quoted, key combos, numbers); a name that only labels
    what the task asks for goes without a break ("a `purge` command" → "a command", `recall.fills.unnamed`)."""
    text = _VALUE_SPANS.sub(" | ", unnamed(task))  # a break, so no phrase spans a removed value
    for combo in key_combos(text):
        text = text.replace(combo, " | ")
    return _NUMBER.sub(" | ", text)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def content_words(task: str) -> set[str]:
    return {w for w in words(strip_values(task)) if w not in STOPWORDS and len(w) > 2}


def phrases(task: str, max_n: int = 3) -> set[str]:
    """Word n-grams (1..max_n) of the task without values; no n-gram starts or ends with a stop word."""
    out: set[str] = set()
    for clause in re.split(r"[.,;:!?()|\n]", strip_values(task).lower()):
        ws = _WORD.findall(clause)
        for n in range(1, max_n + 1):
            for i in range(len(ws) - n + 1):
                gram = ws[i:i + n]
                if gram[0] in STOPWORDS or gram[-1] in STOPWORDS or (n == 1 and len(gram[0]) < 4):
                    continue
                out.add(" ".join(gram))
    return out


def _occurs(value: str, lines: Sequence[str]) -> bool:
    if len(value) < 2:
        return any(re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", ln) for ln in lines)
    return any(value in ln for ln in lines)


def _after_values(task: str) -> dict[str, str]:
    """phrase → the word after it, for single content words of the task (the `after` fill source)."""
    out: dict[str, str] = {}
    for w in content_words(task):
        value = word_after(task, w)
        if value and w not in out and value.lower() not in STOPWORDS and _PLAIN_VALUE.fullmatch(value):
            out[w] = value
    return out


def find_blanks(runs: Sequence[tuple[str, list[str]]], *, min_share: float = 0.5
                ) -> tuple[list[Blank], list[Fill], list[dict[str, str]]]:
    """Blanks and fill rules from (task, edited lines) pairs; also each run's blank → value map.

    A value source (nth backticked name, nth quoted text, nth key or its letter, word after a
    phrase) becomes a blank when, in at least `min_share` of the runs, the value it yields
    appears in that run's edited lines.
    """
    counts: Counter[tuple[str, int, str | None]] = Counter()
    per_run: list[dict[tuple[str, int, str | None], str]] = []
    for task, lines in runs:
        found: dict[tuple[str, int, str | None], str] = {}
        for (source, n), value in task_values(task).items():
            if _occurs(value, lines):
                found[(source, n, None)] = value
            elif source == "key" and _occurs(key_letter(value), lines) and len(key_letter(value)) == 1:
                found[("key-letter", n, None)] = key_letter(value)
        taken = set(found.values())
        for phrase, value in _after_values(task).items():
            if value not in taken and not _NUMBER.fullmatch(phrase) and len(value) >= 1 and _occurs(value, lines):
                found[("after", 1, phrase)] = value
        per_run.append(found)
        counts.update(found.keys())
    need = max(1, -(-len(runs) * min_share // 1))  # ceil
    chosen = []
    for key, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0], kv[0][1], kv[0][2] or "")):
        if c < need:
            continue
        distinct = {found[key] for found in per_run if key in found}
        if len(runs) > 1 and len(distinct) < 2:
            continue  # the same value in every run is part of the pattern, not a blank
        if len(runs) == 1 and key[0] == "after" and not _looks_like_value(next(iter(distinct))):
            continue
        chosen.append(key)
    # one rule per value: an `after` rule that yields the same value as a literal rule is redundant
    blanks: list[Blank] = []
    fills: list[Fill] = []
    maps: list[dict[str, str]] = [{} for _ in runs]
    used_names: set[str] = set()
    for key in chosen:
        source, n, phrase = key
        if source == "after" and any(maps[i] and per_run[i].get(key) in maps[i].values() for i in range(len(runs))):
            continue
        name = _blank_name(key, runs, per_run, used_names)
        used_names.add(name)
        blanks.append(Blank(name=name, meaning=_meaning(source, n, phrase)))
        fills.append(Fill(blank="{" + name + "}", source=source, n=n, phrase=phrase))
        for i, found in enumerate(per_run):
            if key in found:
                maps[i][name] = found[key]
    return blanks, fills, maps


def _looks_like_value(value: str) -> bool:
    return bool(re.search(r"\d|_|[a-z][A-Z]|[./:]", value))


def _ordinal(n: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(n, f"{n}th")


def _meaning(source: str, n: int, phrase: str | None) -> str:
    return {
        "code": f"the {_ordinal(n)} `backticked` name in the task",
        "quoted": f"the {_ordinal(n)} quoted text in the task",
        "key": f"the {_ordinal(n)} key combination in the task",
        "key-letter": f"the letter of the {_ordinal(n)} key combination in the task",
        "after": f"the word after \"{phrase}\" in the task",
    }[source]


def _blank_name(key: tuple[str, int, str | None], runs: Sequence[tuple[str, list[str]]],
                per_run: list[dict[tuple[str, int, str | None], str]], used: set[str]) -> str:
    """A readable blank name: the identifier the value is assigned to in edited lines (`label: "…"` → label)."""
    source, n, phrase = key
    votes: Counter[str] = Counter()
    for (task, lines), found in zip(runs, per_run, strict=True):
        value = found.get(key)
        if not value:
            continue
        for line in lines:
            i = line.find(value)
            if i > 0:
                m = _NAME_BEFORE.search(line[:i])
                if m and m.group(1).lower() not in STOPWORDS and len(m.group(1)) > 1:
                    votes[m.group(1)] += 1
        before, after = _neighbours(task, value)
        for w, weight in ((before, 2), (after, 1)):
            if w and w not in STOPWORDS and w not in _VERBISH and len(w) > 2:
                votes[w] += weight
    if source == "after" and phrase:
        base = re.sub(r"\W+", "_", phrase)
    elif votes:
        base = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    else:
        base = {"code": "name", "quoted": "text", "key": "key", "key-letter": "letter"}.get(source, "value")
    base = re.sub(r"[^\w]", "_", base).strip("_") or "value"
    name, k = base, 2
    while name in used:
        name, k = f"{base}{k}", k + 1
    return name


def _neighbours(task: str, value: str) -> tuple[str | None, str | None]:
    """The content words right before and after a value in the task (other values removed)."""
    i = task.find(value)
    if i < 0:
        return None, None
    start, end = i, i + len(value)
    if start > 0 and task[start - 1] in "`\"“「'":
        start -= 1
    if end < len(task) and task[end] in "`\"”」'":
        end += 1
    left = words(strip_values(task[:start]))
    right = words(strip_values(task[end:]))
    left = [w for w in left if w not in STOPWORDS]
    right = [w for w in right if w not in STOPWORDS]
    return (left[-1] if left else None), (right[0] if right else None)


def generalize(text: str, values: dict[str, str]) -> str:
    """`text` with each value (longest first) replaced by its `{blank}` where it stands as a whole token or as one
    `_`-separated part of an identifier (`cmd_export` → `cmd_{command}`); never inside a word (value `add` leaves
    `added` alone, so a fill cannot write `doneed`)."""
    for name, value in sorted(values.items(), key=lambda kv: -len(kv[1])):
        if not value:
            continue
        left = r"(?<![A-Za-z0-9])" if value[0].isalnum() or value[0] == "_" else ""
        right = r"(?![A-Za-z0-9])" if value[-1].isalnum() or value[-1] == "_" else ""
        text = re.sub(left + re.escape(value) + right, lambda _m, n=name: "{" + n + "}", text)
    return text


_TOKEN = re.compile(r"\S+")


def shared_text(text: str, examples: Sequence[str], share: float = 0.75) -> str:
    """`text` keeping only the words that at least `share` of the `examples` have too (blanks always stay); each
    run of other words becomes "…". What one past task said and the others did not (its own description, a value
    no blank carries) is never handed to another task (issue 20 §4: no fill leaves another task's words)."""
    need = max(1, -(-len(examples) * share // 1))
    seen: Counter[str] = Counter()
    for example in examples:
        seen.update(set(_TOKEN.findall(example)))
    out: list[str] = []
    for token in _TOKEN.findall(text):
        if "{" in token or seen[token] >= need:
            out.append(token)
        elif not out or out[-1] != "…":
            out.append("…")
    return " ".join(out)


def says_something(text: str) -> bool:
    """Whether a text kept by `shared_text` still has words or code (not only "…" and punctuation)."""
    return bool(re.search(r"[A-Za-z0-9{]", text.replace("…", "")))


_LEAD_VERB_WORDS = """implement fix fixes update updates remove removes rename renames introduce register wire need
needs want wants expose exposed provide provides support supports allow allows"""
_LEAD_VERBS = _VERBISH | frozenset(_LEAD_VERB_WORDS.split())


def clause_words(task: str) -> list[list[str]]:
    """The task's clauses (split at punctuation and removed values) as lower-case words."""
    return [_WORD.findall(c) for c in re.split(r"[.,;:!?()|\n]", strip_values(task).lower())]


def _truncated(phrase: str, clauses: Sequence[list[list[str]]]) -> bool:
    """Is `phrase` cut off before its object: in every (≥ 2) occurrence the same content word follows?

    "add a keyboard" is always followed by "shortcut" in the shortcut tasks, so it names half an
    object; "keyboard shortcut" is followed by a value, a clause end or varying words.
    """
    gram = phrase.split()
    nexts: list[str | None] = []
    for task_clauses in clauses:
        for ws in task_clauses:
            for i in range(len(ws) - len(gram) + 1):
                if ws[i:i + len(gram)] == gram:
                    nexts.append(ws[i + len(gram)] if i + len(gram) < len(ws) else None)
    return len(nexts) >= 2 and len(set(nexts)) == 1 and nexts[0] is not None and nexts[0] not in STOPWORDS


_MODIFIERS = frozenset(["new", "another", "extra", "additional", "small", "simple", "single", "second", "separate"])


def _after_verb(gram: list[str], clauses: Sequence[list[list[str]]]) -> bool:
    """Does `gram` follow an action word in some task ("add a keyboard shortcut", "need a new config option")?"""
    for task_clauses in clauses:
        for ws in task_clauses:
            for i in range(len(ws) - len(gram) + 1):
                if ws[i:i + len(gram)] != gram:
                    continue
                j = i - 1
                while j >= 0 and i - j <= 3 and (ws[j] in STOPWORDS or ws[j] in _MODIFIERS) \
                        and ws[j] not in _LEAD_VERBS:
                    j -= 1
                if j >= 0 and ws[j] in _LEAD_VERBS:
                    return True
    return False


def cue_kind(phrase: str, clauses: Sequence[list[list[str]]] = ()) -> str:
    """What a candidate cue is, judged on the group's tasks (`clauses`: each task's clauses as words).

    `head`: the object the tasks ask for, the phrase right after an action word ("add a keyboard
    shortcut"); `object`: another multi-word phrase not led by an action word ("view menu");
    `verb`: led by an action word ("call the handler"); `fragment`: cut off before its object
    ("add a keyboard", always followed by "shortcut"); `word`: a single word.
    """
    ws = phrase.split()
    if clauses and _truncated(phrase, clauses):
        return "fragment"
    if len(ws) == 1:
        return "word"
    if ws[0] in _LEAD_VERBS:
        return "verb"
    return "head" if clauses and _after_verb(ws, clauses) else "object"


def choose_cues(group_tasks: Sequence[str], other_tasks: Iterable[str], *, values: Iterable[str] = (),
                limit: int = 4, extra: int = 2) -> list[str]:
    """Phrases common to the group's tasks and rare in other groups' tasks, never a task's own values.

    First up to `limit` phrases that name the object the tasks ask for (`head` in `cue_kind`:
    "keyboard shortcut", "config option"), each found in at least half of the group's tasks; then
    up to `extra` more (each in at least two tasks) while some of the group's tasks are matched by
    no cue yet, so every way the group's tasks were phrased gets a cue; those may be other phrases
    ("backend config") and, last, phrases led by an action word ("call the handler"). A phrase
    always followed by the same content word is a cut-off fragment ("add a keyboard") and never a
    cue; single words only when no phrase qualifies. Without a head phrase the first pick takes
    any phrase, as before.
    """
    own = [phrases(t) for t in group_tasks]
    own_text = [" ".join(words(t)) for t in group_tasks]
    others = [" ".join(words(t)) for t in other_tasks]
    if not own:
        return []
    clauses = [clause_words(t) for t in group_tasks]
    outside: Counter[str] = Counter(w for t in group_tasks for w in set(words(strip_values(t))))
    value_words = {w for v in values for w in words(v) if outside[w] * 2 < len(group_tasks)}
    value_words |= {v.lower() for v in values}
    df_in: Counter[str] = Counter(p for ps in own for p in ps)
    n_in, n_out = len(own), max(1, len(others))
    min_in = 1 if n_in == 1 else max(2, -(-n_in // 2))
    min_cover = 1 if n_in <= 2 else 2
    scored = []
    for p, c in df_in.items():
        if c < min_cover or set(p.split()) & value_words:
            continue
        # recall matches a cue as a substring of the task, so count it the same way here
        share_in, share_out = c / n_in, sum(p in o for o in others) / n_out
        if share_out > 0.1:
            continue
        kind = cue_kind(p, clauses)
        if kind == "fragment":
            continue
        length_bonus = 0.15 * (len(p.split()) - 1) if kind in ("head", "object") else 0.0
        scored.append((share_in - 2 * share_out + length_bonus, p, c, kind))
    scored.sort(key=lambda x: (-x[0], x[1]))
    by_kind: dict[str, list[tuple[str, int]]] = {}
    for _, p, c, kind in scored:
        by_kind.setdefault(kind, []).append((p, c))
    heads, objects, verbs = by_kind.get("head", []), by_kind.get("object", []), by_kind.get("verb", [])
    # single words match too much by accident ("lists", "menu"); use them only when no phrase qualifies
    ranked = heads + objects + verbs or by_kind.get("word", [])
    # the object the tasks ask for first; other phrases ("view menu", "env var") name parts other tasks
    # share, and action-led ones describe what every kind does: those only cover tasks no head matches
    first = heads or ranked
    picked: list[str] = []
    for p, c in first:
        if c < min_in or any(p in q or q in p for q in picked):  # no phrase inside another one
            continue
        picked.append(p)
        if len(picked) >= limit:
            break
    for _ in range(extra):
        uncovered = [t for t in own_text if not any(q in t for q in picked)]
        if not uncovered:
            break
        best = max(((sum(p in t for t in uncovered), p) for p, _ in ranked
                    if not any(p in q or q in p for q in picked)), default=(0, ""))
        if best[0] < min(2, len(uncovered)):
            break
        picked.append(best[1])
    return picked
