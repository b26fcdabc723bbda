"""Agents for the expense benchmark: the oracle, a context-bound scripted agent, a scripted replay, an LLM agent.

An agent gets the messages its context policy lets it see and returns one `AgentTurn`: tool calls,
or a text that stops (to ask the user or to finish).

- `OracleAgent` knows the answer (the receipt's true subcategories) and ignores its context: it
  must complete every task in every configuration, which checks the environment and the harness.
- `ContextBoundAgent` is scripted but decides only from what its current context shows (the receipt
  in the user turn, the visible tool calls and results, a summary message). It loses what a policy
  evicts, exactly as a model would, so it exercises the policies mechanically. Its numbers describe
  this script, not a model; every report labels them "scripted".
- `ScriptAgent` replays a fixed list of actions (tests script each failure category with it).
- `LLMAgent` asks a `habitus.llm` provider through its tool calling.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from typing import Any, Protocol

from habitus.bench.expense.env import TOOLS
from habitus.bench.expense.tasks import Task
from habitus.bench.expense.vocab import LABEL_TO_SUBCATEGORY, surface_guess
from habitus.core.trace import Usage


@dataclass
class AgentTurn:
    """One agent answer: tool calls [(name, arguments)] or a stopping text; usage for model agents."""

    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    text: str = ""
    usage: Usage | None = None  # None: the runner counts tokens from the messages (scripted agents)
    cost: float | None = None
    call_ids: list[str] | None = None  # the model's tool call ids (None: the runner numbers them)


class Agent(Protocol):
    name: str
    scripted: bool

    def start(self, task: Task, rng: random.Random) -> None: ...

    def act(self, messages: list[dict[str, Any]]) -> AgentTurn: ...


def _add(sub: str, amount: Decimal | str, day: str) -> tuple[str, dict[str, Any]]:
    return ("add_itemization_line", {"subcategory": sub, "amount": str(amount), "date": day})


class OracleAgent:
    """Knows the truth: open, add every receipt line correctly, save. Must score 100%."""

    name = "oracle"
    scripted = True

    def start(self, task: Task, rng: random.Random) -> None:
        self.plan: list[tuple[str, dict[str, Any]]] = [("open_expense_line", {"expense_id": task.expense_id})]
        self.plan += [_add(line.subcategory, line.amount, line.date) for line in task.lines]
        self.plan.append(("save_and_close", {}))
        self.step = 0

    def act(self, messages: list[dict[str, Any]]) -> AgentTurn:
        if self.step >= len(self.plan):
            return AgentTurn(text="Done: the expense line is itemized and saved.")
        call = self.plan[self.step]
        self.step += 1
        return AgentTurn(tool_calls=[call])


class ScriptAgent:
    """Replays `actions` in order: a (name, args) tuple is a tool call, a str is a stopping message."""

    name = "script"
    scripted = True

    def __init__(self, actions: Sequence[tuple[str, dict[str, Any]] | str]) -> None:
        self.actions = list(actions)

    def start(self, task: Task, rng: random.Random) -> None:
        self.step = 0

    def act(self, messages: list[dict[str, Any]]) -> AgentTurn:
        if self.step >= len(self.actions):
            return AgentTurn(text="Done.")
        action = self.actions[self.step]
        self.step += 1
        return AgentTurn(text=action) if isinstance(action, str) else AgentTurn(tool_calls=[action])


# --- the context-bound agent -------------------------------------------------------------------

_RECEIPT_ROW = re.compile(r"^\s*\d+\.\s+(\d{4}-\d{2}-\d{2})\s+(.+?)\s+(\d+\.\d{2})\s*$", re.M)
_EXPENSE_ID = re.compile(r"\b(EXP-\d+)\b")
_SUMMARY_ADD = re.compile(r"- add_itemization_line\((.*?)\)(?: -> failed)?$", re.M)
_FIELD = {k: re.compile(rf'"{k}":\s*"([^"]*)"') for k in ("subcategory", "amount", "date")}
_SUMMARY_REMAINING = re.compile(r"^- (?:form\.)?remaining: (-?\d+\.\d{2})$", re.M)


@dataclass
class View:
    """What the context-bound agent can see right now."""

    receipt: list[tuple[str, str, Decimal]]  # (date, label, amount)
    total: Decimal
    expense_id: str
    any_activity: bool = False
    opened_visible: bool = False  # the open call itself is still in context (the start of the work is visible)
    guide_visible: bool = False
    summary_seen: bool = False
    state_lines: list[tuple[str, Decimal, str]] | None = None  # (line_id, amount, date) of the latest visible form
    state_remaining: Decimal | None = None
    adds_after_state: list[tuple[str | None, Decimal, str]] = field(default_factory=list)
    removes_after_state: list[str] = field(default_factory=list)
    adds: list[tuple[Decimal, str]] = field(default_factory=list)  # every visible ok add, summary ones first
    last_error: str | None = None
    last_was_plug: bool = False


@lru_cache(maxsize=256)
def parse_receipt(text: str) -> tuple[list[tuple[str, str, Decimal]], Decimal, str]:
    rows = [(d, label.strip(), Decimal(a)) for d, label, a in _RECEIPT_ROW.findall(text)]
    total = re.search(r"TOTAL \w+ (\d+\.\d{2})", text)
    eid = _EXPENSE_ID.search(text)
    return rows, Decimal(total.group(1)) if total else Decimal("0"), eid.group(1) if eid else ""


class ContextBoundAgent:
    """Scripted; sees only its context. Probabilities are knobs of the script, not claims about models.

    At the end, when it cannot see the remaining amount, it verifies (`p_verify`), books the
    remainder it computes from what it sees as one balancing line (`p_plug`), asks the user
    (`p_ask_end`) or saves. On every turn it stops to ask with a chance that grows with the size of
    its context (`ask_per_token`, capped at `max_ask`): long contexts make agents stop early.
    """

    name = "context-bound"
    scripted = True

    def __init__(self, p_verify: float = 0.5, p_plug: float = 0.2, p_ask_end: float = 0.15,
                 ask_per_token: float = 5e-7, max_ask: float = 0.2) -> None:
        self.p_verify, self.p_plug, self.p_ask_end = p_verify, p_plug, p_ask_end
        self.ask_per_token, self.max_ask = ask_per_token, max_ask
        self.context_tokens = 0  # set by the runner before each act()
        self._parsed: dict[int, tuple[Any, Any]] = {}

    def start(self, task: Task, rng: random.Random) -> None:
        self.rng = rng
        self._parsed = {}

    def _json(self, msg: dict[str, Any]) -> Any:
        hit = self._parsed.get(id(msg))
        if hit is not None and hit[0] is msg:
            return hit[1]
        try:
            value = json.loads(msg.get("content") or "")
        except ValueError:
            value = None
        self._parsed[id(msg)] = (msg, value)
        return value

    def _calls(self, msg: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
        hit = self._parsed.get(id(msg))
        if hit is not None and hit[0] is msg:
            return hit[1]
        out: dict[str, tuple[str, dict[str, Any]]] = {}
        for c in msg.get("tool_calls") or []:
            fn = c.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = {}
            out[c.get("id")] = (fn.get("name", ""), args if isinstance(args, dict) else {})
        self._parsed[id(msg)] = (msg, out)
        return out

    def observe(self, messages: list[dict[str, Any]]) -> View:
        first_user = next((m for m in messages if m.get("role") == "user"), {"content": ""})
        receipt, total, eid = parse_receipt(str(first_user.get("content") or ""))
        view = View(receipt=receipt, total=total, expense_id=eid)
        calls: dict[str, tuple[str, dict[str, Any]]] = {}
        for msg in messages:
            role = msg.get("role")
            if role == "user" and str(msg.get("content", "")).startswith("[Context summary"):
                self._read_summary(str(msg["content"]), view)
            elif role == "assistant":
                calls.update(self._calls(msg))
            elif role == "tool":
                name, args = calls.get(msg.get("tool_call_id"), ("", {}))
                self._read_result(name, args, self._json(msg), view)
        return view

    def _read_summary(self, text: str, view: View) -> None:
        view.summary_seen = view.any_activity = True
        for m in _SUMMARY_ADD.finditer(text):
            if m.group(0).endswith("-> failed"):
                continue
            got = {k: rx.search(m.group(1)) for k, rx in _FIELD.items()}
            if got["amount"] and got["date"]:
                view.adds.append((Decimal(got["amount"].group(1)), got["date"].group(1)))

    def _read_result(self, name: str, args: dict[str, Any], result: Any, view: View) -> None:
        view.any_activity = True
        if not isinstance(result, dict):
            # The call is visible but its result is not (cleared by the policy): assume it went through.
            result = {"ok": True, "cleared": True}
        if result.get("ok") is False:
            view.last_error = str(result.get("error", "error"))
            return
        view.last_error = None
        view.last_was_plug = False
        if "ui" in result:  # snapshot responses carry the picklist guide
            view.guide_visible = True
        if name == "open_expense_line":
            view.opened_visible = True
        elif name == "list_subcategories" and "subcategories" in result:
            view.guide_visible = True
        form = result.get("form") if isinstance(result.get("form"), dict) else None
        if form is None and "lines" in result and "remaining" in result:
            form = result
        if name == "add_itemization_line":
            try:
                amount = Decimal(str(args.get("amount")))
            except ArithmeticError:
                return
            day = str(args.get("date", ""))
            view.adds.append((amount, day))
            view.last_was_plug = not any(a == amount and d == day for d, _, a in view.receipt)
            if form is None:
                view.adds_after_state.append((result.get("line_id"), amount, day))
        elif name == "remove_itemization_line" and form is None:
            view.removes_after_state.append(str(args.get("line_id")))
        if form is not None:
            view.state_lines = [(ln["line_id"], Decimal(ln["amount"]), ln["date"]) for ln in form.get("lines", [])]
            view.state_remaining = Decimal(str(form.get("remaining")))
            view.adds_after_state, view.removes_after_state = [], []

    def subcategory(self, label: str, view: View) -> str:
        return LABEL_TO_SUBCATEGORY.get(label, surface_guess(label)) if view.guide_visible else surface_guess(label)

    def act(self, messages: list[dict[str, Any]]) -> AgentTurn:
        view = self.observe(messages)
        if not view.any_activity:
            return AgentTurn(tool_calls=[("open_expense_line", {"expense_id": view.expense_id})])
        if not view.guide_visible and (not view.adds or (view.last_error or "").find("picklist") >= 0):
            return AgentTurn(tool_calls=[("list_subcategories", {})])
        if self.rng.random() < min(self.max_ask, self.context_tokens * self.ask_per_token):
            return AgentTurn(text="I have been adding the receipt lines. Should I continue?")
        if view.state_lines is not None:
            return self._from_state(view)
        return self._sequential(view)

    def _line_call(self, i: int, view: View) -> AgentTurn:
        day, label, amount = view.receipt[i]
        return AgentTurn(tool_calls=[_add(self.subcategory(label, view), amount, day)])

    def _from_state(self, view: View) -> AgentTurn:
        present: list[tuple[str | None, Decimal, str]] = [
            ln for ln in (view.state_lines or []) if ln[0] not in set(view.removes_after_state)
        ] + view.adds_after_state
        have = Counter((a, d) for _, a, d in present)
        want = Counter((a, d) for d, _, a in view.receipt)
        for line_id, amount, day in reversed(present):
            if have[(amount, day)] > want[(amount, day)] and line_id:
                return AgentTurn(tool_calls=[("remove_itemization_line", {"line_id": line_id})])
        seen: Counter[tuple[Decimal, str]] = Counter()
        for i, (day, _, amount) in enumerate(view.receipt):
            seen[(amount, day)] += 1
            if seen[(amount, day)] > have[(amount, day)]:
                return self._line_call(i, view)
        remaining = (view.state_remaining or Decimal(0)) - sum((a for _, a, _ in view.adds_after_state), Decimal(0))
        if remaining == 0:
            return AgentTurn(tool_calls=[("save_and_close", {})])
        return AgentTurn(tool_calls=[("get_form_state", {})])

    def _sequential(self, view: View) -> AgentTurn:
        adds = view.adds
        if view.opened_visible and not view.summary_seen:  # the whole run is visible: plain bookkeeping
            have = Counter(adds)
            for i, (day, _, amount) in enumerate(view.receipt):
                key = (amount, day)
                if have[key] > 0:
                    have[key] -= 1
                    continue
                return self._line_call(i, view)
            return AgentTurn(tool_calls=[("save_and_close", {})])
        pointer = self._align(view)
        if pointer < len(view.receipt):
            return self._line_call(pointer, view)
        if view.last_was_plug:
            return AgentTurn(tool_calls=[("save_and_close", {})])
        r = self.rng.random()
        if r < self.p_verify:
            return AgentTurn(tool_calls=[("get_form_state", {})])
        if r < self.p_verify + self.p_plug:
            computed = view.total - sum((a for a, _ in adds), Decimal(0))
            if computed > 0:
                return AgentTurn(tool_calls=[_add("Other Incidentals", computed, view.receipt[-1][0])])
        elif r < self.p_verify + self.p_plug + self.p_ask_end:
            return AgentTurn(text="All receipt lines are added. Shall I save and close the expense?")
        return AgentTurn(tool_calls=[("save_and_close", {})])

    @staticmethod
    def _align(view: View) -> int:
        """Where the visible adds end on the receipt: the earliest position matching the longest visible suffix."""
        keys = [(a, d) for d, _, a in view.receipt]
        adds = [k for k in view.adds if k in set(keys)]
        if not adds:
            return 0
        best, best_len = 0, 0
        for end in range(len(keys)):
            n = 0
            while n < len(adds) and end - n >= 0 and keys[end - n] == adds[-1 - n]:
                n += 1
            if n > best_len:
                best, best_len = end + 1, n
        return best


# --- the LLM agent -----------------------------------------------------------------------------


class LLMAgent:
    """Asks a habitus.llm provider (`.chat(messages, tools=...)`) for the next tool calls."""

    scripted = False

    def __init__(self, provider: Any, max_tokens: int | None = 1024, temperature: float | None = 0.0) -> None:
        self.provider = provider
        self.max_tokens, self.temperature = max_tokens, temperature
        self.tools: list[dict[str, Any]] = list(TOOLS)  # the runner adds edit_context under `self-edit`
        self.name = f"llm:{getattr(provider, 'model', None) or getattr(provider, 'name', 'model')}"

    def start(self, task: Task, rng: random.Random) -> None:
        pass

    def act(self, messages: list[dict[str, Any]]) -> AgentTurn:
        response = self.provider.chat(messages, tools=self.tools, max_tokens=self.max_tokens,
                                      temperature=self.temperature)
        calls = [(c.name, dict(c.arguments or {})) for c in response.tool_calls]
        return AgentTurn(tool_calls=calls, text=response.text or "", usage=response.usage, cost=response.cost,
                         call_ids=[c.id for c in response.tool_calls] or None)
