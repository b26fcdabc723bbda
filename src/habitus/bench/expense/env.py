"""The pseudo-ERP itemization form: Decimal state, six tools in three variants, and an event log.

The agent fills itemization lines (subcategory, amount, date) until the remaining amount is exactly
0.00. Tool responses are JSON text. Variants differ only in what responses carry:

- `slim`: add returns ok and the line id;
- `snapshot`: every response carries the full form state plus UI metadata (≈ 3,000 tokens);
- `toolfix`: slim, but add and remove also return the remaining amount and the lines.

Every call is appended to `env.log` (what was asked, what happened, the remaining after it), from
which metrics and the failure taxonomy are computed deterministically.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from habitus.bench.expense.tasks import CENT, Task
from habitus.bench.expense.vocab import SUBCATEGORY_NAMES, guide

VARIANTS = ("slim", "snapshot", "toolfix")
TOOL_NAMES = (
    "open_expense_line", "list_subcategories", "get_form_state",
    "add_itemization_line", "remove_itemization_line", "save_and_close",
)


def _fn(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOLS: list[dict[str, Any]] = [
    _fn("open_expense_line", "Open the expense line to itemize.", {"expense_id": {"type": "string"}}, ["expense_id"]),
    _fn("list_subcategories", "List the hotel subcategories with the receipt labels that map to each.", {}, []),
    _fn("get_form_state", "Show the itemization form: lines, itemized sum and remaining amount.", {}, []),
    _fn(
        "add_itemization_line",
        "Add one itemization line.",
        {
            "subcategory": {"type": "string", "enum": list(SUBCATEGORY_NAMES)},
            "amount": {"type": "string", "description": "decimal amount, e.g. 149.00"},
            "date": {"type": "string", "description": "ISO date of the charge"},
            "description": {"type": "string"},
        },
        ["subcategory", "amount", "date"],
    ),
    _fn("remove_itemization_line", "Remove an itemization line by id.", {"line_id": {"type": "string"}}, ["line_id"]),
    _fn("save_and_close", "Save the itemization and close the expense line.", {}, []),
]


@dataclass
class Line:
    line_id: str
    subcategory: str
    amount: Decimal
    date: str
    description: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"line_id": self.line_id, "subcategory": self.subcategory, "amount": str(self.amount), "date": self.date}


@dataclass
class Event:
    """One tool call as the environment saw it."""

    turn: int
    tool: str
    args: dict[str, Any]
    ok: bool
    error: str | None = None
    line_id: str | None = None
    remaining_after: Decimal | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn, "tool": self.tool, "args": self.args, "ok": self.ok, "error": self.error,
            "line_id": self.line_id,
            "remaining_after": None if self.remaining_after is None else str(self.remaining_after),
        }


def parse_amount(value: Any) -> Decimal:
    """A positive amount with at most two decimals, or ValueError with the reason."""
    try:
        amount = Decimal(str(value).strip().replace(",", ""))
    except (InvalidOperation, AttributeError) as exc:
        raise ValueError(f"amount {value!r} is not a number") from exc
    if not amount.is_finite() or amount <= 0:
        raise ValueError(f"amount must be positive, got {value!r}")
    if amount != amount.quantize(CENT):
        raise ValueError(f"amount {value!r} has more than two decimals")
    return amount.quantize(CENT)


DEPARTMENTS = ("Sales", "Engineering", "Finance", "Operations", "Marketing", "Support", "Legal", "Research")
REGIONS = ("North America", "EMEA", "APAC", "LATAM", "Global")
I18N_KEYS = (
    "expense_line", "itemization", "subcategory", "amount", "date", "description", "remaining", "itemized",
    "total", "save_and_close", "cancel", "add_line", "remove_line", "attach_receipt", "personal_charge",
    "business_purpose", "attendees", "merchant", "check_in", "check_out", "currency", "exchange_rate",
    "cost_center", "project_code", "approver", "submitted_on", "policy_violation", "justification",
)


@lru_cache(maxsize=1)
def ui_metadata_json() -> str:
    """The UI-style metadata a snapshot response carries: layout, field rules, picklist, toolbar, audit."""
    fields = [
        {"field": f, "label": f.replace("_", " ").title(), "type": t, "required": r, "editable": True,
         "validation": v, "width": w, "help": h}
        for f, t, r, v, w, h in (
            ("subcategory", "picklist", True, "one of the picklist values", 220, "Hotel subcategory of the charge"),
            ("amount", "currency", True, "positive, two decimals", 120, "Amount in the expense currency"),
            ("date", "date", True, "within the stay dates", 120, "Date the charge was posted on the folio"),
            ("description", "text", False, "max 120 chars", 300, "Free text shown to the approver"),
        )
    ]
    meta = {
        "ui": {
            "form": "ExpenseItemization", "version": "7.4.2", "locale": "en-US", "theme": "corporate-light",
            "layout": {"columns": 4, "sections": ["header", "lines", "totals", "attachments", "approvals", "audit"]},
            "fields": fields,
            "picklist_subcategory": guide(),
            "toolbar": [{"action": a, "enabled": True, "shortcut": s, "tooltip": t} for a, s, t in (
                ("add_line", "Alt+N", "Add an itemization line"), ("remove_line", "Alt+D", "Remove the selected line"),
                ("save_and_close", "Ctrl+S", "Save the itemization and close the expense line"),
                ("cancel", "Esc", "Discard unsaved changes"), ("attach_receipt", "Alt+A", "Attach a receipt image"),
            )],
            "permissions": {"can_edit": True, "can_approve": False, "can_delete": True, "role": "employee"},
            "policy_messages": [
                "Itemize hotel expenses by night and charge type.",
                "The remaining amount must be exactly 0.00 before the expense can be submitted.",
                "Personal charges must be itemized and marked as personal.",
            ],
            "cost_centers": [
                {"code": f"CC-{1000 + 37 * i}", "name": f"{d} {r}", "active": i % 7 != 3, "owner": f"mgr{i:02d}"}
                for i, (d, r) in enumerate((d, r) for d in DEPARTMENTS for r in REGIONS)
            ],
            "i18n": {f"label.{k}": k.replace("_", " ").capitalize() for k in I18N_KEYS},
            "validation_messages": {f"E{100 + i}": f"The {k.replace('_', ' ')} field is invalid or missing; "
                                    "correct it before saving." for i, k in enumerate(I18N_KEYS[:16])},
            "related_records": [{"type": t, "id": f"{t[:3].upper()}-{4711 + i}", "status": "linked"}
                                for i, t in enumerate(("card_transaction", "trip", "travel_request", "receipt_image",
                                                       "policy_check", "approval", "cost_allocation"))],
            "audit": [{"at": f"2026-01-0{i}T09:1{i}:00Z", "by": "system", "event": e} for i, e in enumerate(
                ("imported from card feed", "receipt matched", "currency confirmed", "policy check passed"), 1)],
        }
    }
    return json.dumps(meta, separators=(",", ":"))


# A snapshot response is `{...payload..., <SNAPSHOT_TAIL>`: the UI metadata object's members and the closing brace.
SNAPSHOT_TAIL = ui_metadata_json()[1:]


@dataclass
class ExpenseEnv:
    """One itemization session over one task, in one tool variant."""

    task: Task
    variant: str = "slim"
    opened: bool = False
    saved: bool = False
    lines: dict[str, Line] = field(default_factory=dict)
    log: list[Event] = field(default_factory=list)
    turn: int = 0
    _next_id: int = 1

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown tool variant {self.variant!r}; choose one of {', '.join(VARIANTS)}")

    @property
    def itemized(self) -> Decimal:
        return sum((line.amount for line in self.lines.values()), Decimal("0.00"))

    @property
    def remaining(self) -> Decimal:
        return (self.task.total - self.itemized).quantize(CENT)

    def state(self) -> dict[str, Any]:
        return {
            "expense_id": self.task.expense_id,
            "status": "saved" if self.saved else ("open" if self.opened else "closed"),
            "total": str(self.task.total),
            "itemized": str(self.itemized),
            "remaining": str(self.remaining),
            "lines": [line.to_dict() for line in self.lines.values()],
        }

    def call(self, name: str, args: dict[str, Any] | None) -> str:
        """Run one tool call; returns the response text. Errors are responses too (ok=false), never raised."""
        args = dict(args or {})
        event = Event(turn=self.turn, tool=name, args=args, ok=True)
        try:
            payload = self._dispatch(name, args, event)
        except ValueError as exc:
            event.ok, event.error = False, str(exc)
            payload = {"ok": False, "error": str(exc)}
        event.remaining_after = self.remaining
        self.log.append(event)
        return self._render(name, payload)

    def _dispatch(self, name: str, args: dict[str, Any], event: Event) -> dict[str, Any]:
        if name not in TOOL_NAMES:
            raise ValueError(f"unknown tool {name!r}")
        if name == "list_subcategories":
            return {"subcategories": guide()}
        if name == "open_expense_line":
            if str(args.get("expense_id", "")).strip() != self.task.expense_id:
                raise ValueError(f"expense line {args.get('expense_id')!r} not found")
            self.opened = True
            return {"ok": True, "expense_id": self.task.expense_id, "merchant": self.task.merchant,
                    "check_in": self.task.check_in, "check_out": self.task.check_out,
                    "currency": self.task.currency, "total": str(self.task.total), "status": "open"}
        if not self.opened:
            raise ValueError("no expense line is open; call open_expense_line first")
        if self.saved:
            raise ValueError("the expense line is saved and closed")
        if name == "get_form_state":
            return {"ok": True, **self.state()}
        if name == "add_itemization_line":
            sub = str(args.get("subcategory", "")).strip()
            if sub not in SUBCATEGORY_NAMES:
                raise ValueError(f"subcategory {sub!r} is not in the picklist")
            amount = parse_amount(args.get("amount"))
            day = str(args.get("date", "")).strip()
            if not (self.task.check_in <= day <= self.task.check_out):
                raise ValueError(f"date {day!r} is outside the stay {self.task.check_in}..{self.task.check_out}")
            line_id = f"L{self._next_id}"
            self._next_id += 1
            self.lines[line_id] = Line(line_id, sub, amount, day, str(args.get("description", ""))[:120])
            event.line_id = line_id
            return {"ok": True, "line_id": line_id}
        if name == "remove_itemization_line":
            line_id = str(args.get("line_id", "")).strip()
            if line_id not in self.lines:
                raise ValueError(f"line {line_id!r} does not exist")
            del self.lines[line_id]
            event.line_id = line_id
            return {"ok": True, "removed": line_id}
        self.saved = True  # save_and_close
        return {"ok": True, "status": "saved"}

    def _render(self, name: str, payload: dict[str, Any]) -> str:
        if self.variant == "snapshot":
            body = {**payload, "form": self.state()} if name != "get_form_state" else payload
            # One JSON document whose constant UI tail lets token counting reuse its count (see SNAPSHOT_TAIL).
            return json.dumps(body, separators=(",", ":"))[:-1] + "," + SNAPSHOT_TAIL
        changes = name in ("add_itemization_line", "remove_itemization_line")
        if self.variant == "toolfix" and payload.get("ok") and changes:
            lines = [ln.to_dict() for ln in self.lines.values()]
            payload = {**payload, "remaining": str(self.remaining), "lines": lines}
        return json.dumps(payload, separators=(",", ":"))
