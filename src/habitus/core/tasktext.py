"""What a task's text says: pasted plans, follow-ups, and the names it mentions (pure functions, no I/O).

Real prompts are of a few shapes. Half are pasted plans ("Implement the following plan: # Plan: …
## Context …"): the task is the plan's title and context, while the paths, backticked names and
identifiers further down say where the work goes. Others are short follow-ups ("commit", "yes",
"fix the lint") that continue the task before them, or harness noise (slash commands such as
`/clear`, caveats, interruption markers) that is no task at all. Learning (segmentation, the repo
map) and recall (where to look) read tasks through these functions, so both see the same words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from habitus.core.lazyre import lazy_re

_PLAN_LEAD = lazy_re(r"^\s*(?:please\s+)?implement\s+(?:the\s+following|this)\s+plan\s*:?\s*", re.I)
_HEADING = lazy_re(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$", re.M)
_TITLE_LABEL = lazy_re(r"^(?:plan|fix|bug\s*fix|feature|task|goal|refactor|chore)\s*:\s*", re.I)
CONTEXT_HEADS = lazy_re(r"^(?:context|contexte|background|problem|motivation|summary|overview|why|goal|goals|"
                            r"objective|issue|root cause)\b", re.I)
# Claude Code's note under a plan accepted in plan mode: harness text, not the user's words
_PLAN_TRAILER = lazy_re(r"\n\s*If you need specific details from before exiting plan mode.*\Z", re.S)
_FENCE = lazy_re(r"```.*?(?:```|\Z)", re.S)

# harness commands that start no task (their text is `/name args` after the Claude reader)
NOISE_COMMANDS = frozenset({
    "clear", "compact", "model", "resume", "help", "cost", "config", "login", "logout", "exit", "quit", "status",
    "memory", "permissions", "mcp", "hooks", "agents", "ide", "doctor", "vim", "terminal-setup", "export",
    "add-dir", "bug", "release-notes", "context", "rewind", "todos", "usage", "statusline", "output-style",
    "privacy-settings", "upgrade", "install-github-app", "migrate-installer", "theme", "fast", "plugin",
})
_NOISE_PREFIXES = ("<command-", "<local-command", "Caveat:", "<system-reminder>", "[Request interrupted",
                   "<task-notification", "<user-prompt-submit-hook", "<environment_context", "<user_instructions")
_FOLLOWUP_LEADS = frozenset({
    "commit", "push", "continue", "go", "proceed", "yes", "yep", "yeah", "no", "nope", "ok", "okay", "sure", "do",
    "run", "retry", "try", "thanks", "thank", "great", "good", "perfect", "lgtm", "nice", "again", "now", "then",
    "and", "also", "please", "fix", "merge", "rebase", "amend", "squash", "undo", "revert", "stop", "wait", "next",
})
FOLLOWUP_MAX_WORDS = 8  # a follow-up is a short reply; a new request needs more words than this (or no lead)
PROCESS_MAX_WORDS = 20  # … and a message only about the session's process is not much longer
# words about the session's process (git, the agent, checks running), not about the code: a message made only of
# these (and plain words) asks for no new place to work in
_PROCESS_TEXT = """commit push pull merge rebase squash amend branch main master pr prs request continue proceed go
    ahead wait
    stop agent agents finish finished done context message generate allow verify check double sure again retry
    review open close delete good great fine thanks thank work build fail failing pass test tests lint error
    errors another someone else still everything anything ok okay yes no it all your my our this that the a an and
    or but please now then also you i we he she they them their his her its be is are was were been has have had
    do does did can could would should will with without before after from to of in on at for into up let lets me
    us just look update file files"""
_PROCESS_WORDS = frozenset(_PROCESS_TEXT.split())
_PLAIN_WORDS = frozenset({"t", "s", "don", "doesn", "isn", "re", "ve", "ll", "d", "m"})


@dataclass(frozen=True)
class TaskText:
    """A task's text read for retrieval: `title` and `context` carry its words, `body` the whole text."""

    title: str
    context: str
    body: str
    is_plan: bool = False
    paths: tuple[str, ...] = field(default=())  # path-like names (`src/a.ts`, `README.md`), in order
    names: tuple[str, ...] = field(default=())  # backticked names and code identifiers, in order
    quoted: tuple[str, ...] = field(default=())  # quoted phrases ("Generate Prompts"), in order

    @property
    def words(self) -> str:
        """The text whose words describe the task (title twice: it is the densest statement)."""
        return f"{self.title}\n{self.title}\n{self.context}".strip()


def is_noise(text: str) -> bool:
    """Harness text that is no user request: wrappers, caveats, interruption markers, built-in slash commands."""
    stripped = text.strip()
    if not stripped or stripped.startswith(_NOISE_PREFIXES):
        return True
    if stripped.startswith("/"):
        name = stripped[1:].split(None, 1)[0].lower() if len(stripped) > 1 else ""
        return name in NOISE_COMMANDS or not name
    return False


def is_followup(text: str) -> bool:
    """A short reply that continues the task before it ("commit", "yes", "fix the lint", "run the tests"), or a
    message about the session's own process that names nothing of the code ("Another agent finished, update your
    context and continue", "Generate a commit message but don't commit it", "looks good, open a PR")."""
    words = re.findall(r"[\w'-]+", text.lower())
    if not words:
        return True
    if PATH_LIKE.search(text):
        return False
    if len(words) <= 2:
        return True
    if len(words) <= FOLLOWUP_MAX_WORDS and words[0] in _FOLLOWUP_LEADS:
        return True
    content = [w for w in re.findall(r"[a-z]+", text.lower()) if w not in _PLAIN_WORDS]
    return len(words) <= PROCESS_MAX_WORDS and bool(content) and all(_process_word(w) for w in content)


def _process_word(word: str) -> bool:
    return word in _PROCESS_WORDS or any(word.endswith(s) and word[: -len(s)] in _PROCESS_WORDS
                                         for s in ("s", "es", "ed", "d", "ing"))


PATH_LIKE = lazy_re(r"(?<![\w/.@-])((?:[\w@.+-]+/)*[\w@+-][\w@.+-]*\.[A-Za-z][A-Za-z0-9]{0,7}|"
                       r"(?:[\w@.+-]+/)+[\w@.+-]+)(?![\w/])")
_BACKTICK = lazy_re(r"`([^`\n]{2,120})`")
_IDENT = lazy_re(r"(?<![\w$.])([A-Za-z_$][\w$]*(?:[a-z0-9][A-Z]|_[A-Za-z0-9])[\w$]*|[A-Z][a-z0-9]+[A-Z][\w$]*)"
                    r"(?![\w$])")
_QUOTED = lazy_re(r"[\"“”«]([^\"“”«»\n]{3,240})[\"“”»]")
_URLISH = lazy_re(r"^(?:https?:|www\.|[\w.-]+@)")


def _plan_body(text: str) -> str | None:
    """The plan when `text` is a pasted one (a lead-in, or a first line that is a heading), else None."""
    lead = _PLAN_LEAD.match(text)
    if lead:
        return text[lead.end():]
    first = text.lstrip().split("\n", 1)[0]
    if first.startswith("#") and _HEADING.match(first) and text.count("\n") >= 3:
        return text
    return None


def _sections(body: str) -> list[tuple[int, str, str]]:
    """(heading level, heading, text under it) for each heading of a markdown body (code fences ignored)."""
    masked = _FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), body)
    heads = list(_HEADING.finditer(masked))
    out = []
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(body)
        out.append((len(m.group(1)), m.group(2).strip(), body[m.end():end].strip()))
    return out


@lru_cache(maxsize=256)
def read_task(text: str) -> TaskText:
    """Title, context and named things of a task text (a pasted plan or a plain request)."""
    text = _PLAN_TRAILER.sub("", text or "")
    body = _plan_body(text)
    if body is not None:
        sections = _sections(body)
        title = _TITLE_LABEL.sub("", sections[0][1]).strip() if sections else body.strip().split("\n", 1)[0]
        context = next((t for _, h, t in sections if CONTEXT_HEADS.match(h)), "")
        if not context and sections:
            context = sections[0][2]
        return TaskText(title=title[:300], context=_FENCE.sub(" ", context)[:1500], body=text, is_plan=True,
                        **named_things(text))
    plain = text.strip()
    head, _, rest = plain.partition("\n")
    return TaskText(title=head[:300], context=rest[:1200], body=text, **named_things(text))


def named_things(text: str) -> dict[str, tuple[str, ...]]:
    """Paths, names (backticked, identifiers) and quoted phrases mentioned in `text`, each in first-mention order."""
    paths: dict[str, None] = {}
    names: dict[str, None] = {}
    quoted = dict.fromkeys(q.strip() for q in _QUOTED.findall(text) if len(q.strip()) >= 3)
    # a file name inside a quoted sentence is text the task quotes, not a place it names
    text = _QUOTED.sub(lambda m: " " * len(m.group(0)) if len(m.group(1).split()) >= 3 else m.group(0), text)
    for m in _BACKTICK.finditer(text):
        inner = m.group(1).strip()
        if PATH_LIKE.fullmatch(inner) and not _URLISH.match(inner):
            paths.setdefault(inner.strip("./") if inner.startswith("./") else inner, None)
        elif re.fullmatch(r"[A-Za-z_$][\w$]*(?:\(\))?", inner):
            names.setdefault(inner.removesuffix("()"), None)
    for m in PATH_LIKE.finditer(text):
        found = m.group(1).rstrip(".")
        if _URLISH.match(found) or found.count("/") > 12 or "//" in found:
            continue
        paths.setdefault(found.removeprefix("./"), None)
    for m in _IDENT.finditer(text):
        names.setdefault(m.group(1), None)
    return {"paths": tuple(paths), "names": tuple(names), "quoted": tuple(quoted)}


__all__ = ["CONTEXT_HEADS", "FOLLOWUP_MAX_WORDS", "NOISE_COMMANDS", "PATH_LIKE", "TaskText", "is_followup", "is_noise",
           "named_things", "read_task"]
