"""Seeded hotel receipts with difficulty knobs: the tasks of the expense-itemization benchmark.

A receipt covers several nights, so the same label repeats with the same or different amounts;
knobs set how many lines, how many labels are confusable, how often a charge repeats on the same
day (the case that makes "did I already add this one?" hard), and how often the nightly rate varies.
`Difficulty.level(k)` is the ladder the `--calibrate` loop climbs.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from habitus.bench.expense.vocab import BY_NAME

CENT = Decimal("0.01")
MERCHANTS = (
    "Harbor View Hotel", "Grand Meridian", "Hotel Lindenhof", "Parkside Suites", "Alpine Lodge Resort",
    "Citadel Plaza", "Seaside Inn & Spa", "The Foundry Hotel",
)
# Extras a guest may run up, with a plausible price range.
EXTRAS: tuple[tuple[str, float, float], ...] = (
    ("Breakfast", 14, 32), ("Restaurant", 28, 140), ("Room Service", 18, 75), ("Lounge / Bar", 9, 60),
    ("Parking", 12, 45), ("Internet", 5, 20), ("Laundry", 8, 55), ("Telephone", 2, 25), ("Minibar", 4, 38),
    ("In-Room Entertainment", 9, 22), ("Business Center", 3, 30), ("Fitness / Spa", 25, 160),
    ("Meeting Room", 90, 400), ("Gift Shop", 4, 45), ("Hotel Transportation", 15, 70), ("Gratuity", 5, 30),
    ("Other Incidentals", 2, 40),
)


@dataclass(frozen=True)
class Difficulty:
    """Knobs of the receipt generator (the defaults are the benchmark's standard setting)."""

    min_lines: int = 4
    max_lines: int = 23
    max_nights: int = 5
    confusable_rate: float = 0.3  # chance a subcategory's label on this receipt is a confusable one
    same_day_repeat_rate: float = 0.15  # chance an extra is charged twice the same day, same amount
    rate_variation: float = 0.3  # chance the nightly rate differs between nights

    @classmethod
    def level(cls, k: int) -> Difficulty:
        """Level 0 (easy) … 10 (hard): more lines, more confusable labels, more same-day repeats."""
        k = max(0, min(10, int(k)))
        return cls(
            min_lines=4 + k // 2,
            max_lines=min(23, 8 + 2 * k),
            max_nights=min(7, 2 + k // 2),
            confusable_rate=min(0.9, 0.05 * k + 0.15),
            same_day_repeat_rate=min(0.6, 0.05 * k),
            rate_variation=min(0.8, 0.1 + 0.07 * k),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ReceiptLine:
    label: str
    amount: Decimal
    date: str  # ISO date
    subcategory: str  # ground truth (never shown to agents)

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "amount": str(self.amount), "date": self.date, "subcategory": self.subcategory}


@dataclass(frozen=True)
class Task:
    task_id: str
    seed: int
    expense_id: str
    merchant: str
    check_in: str
    check_out: str
    currency: str
    lines: tuple[ReceiptLine, ...] = field(default_factory=tuple)

    @property
    def total(self) -> Decimal:
        return sum((line.amount for line in self.lines), Decimal("0.00"))

    def receipt_text(self) -> str:
        """The receipt as the agent sees it: labels, dates, amounts — no subcategories."""
        rows = [f"{i + 1:>2}. {line.date}  {line.label:<28} {line.amount:>9}" for i, line in enumerate(self.lines)]
        return (
            f"RECEIPT — {self.merchant}\nStay: {self.check_in} to {self.check_out}\n"
            + "\n".join(rows)
            + f"\nTOTAL {self.currency} {self.total}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id, "seed": self.seed, "expense_id": self.expense_id, "merchant": self.merchant,
            "check_in": self.check_in, "check_out": self.check_out, "currency": self.currency,
            "total": str(self.total), "lines": [line.to_dict() for line in self.lines],
        }


def _money(rng: random.Random, lo: float, hi: float) -> Decimal:
    return Decimal(str(round(rng.uniform(lo, hi), 2))).quantize(CENT)


def generate_task(seed: int, difficulty: Difficulty | None = None, index: int = 0) -> Task:
    """One receipt, fully determined by (seed, difficulty)."""
    d = difficulty or Difficulty()
    rng = random.Random(seed)
    target = rng.randint(max(1, d.min_lines), max(d.min_lines, d.max_lines))
    nights = rng.randint(1, max(1, d.max_nights))
    # Each nightly charge is room charge + room tax (+ maybe a city tax and a resort fee).
    nightly = ["Room Charge", "Room Tax"]
    if rng.random() < 0.5:
        nightly.append("Non-Room Tax")
    if rng.random() < 0.35:
        nightly.append("Resort Fee")
    nights = max(1, min(nights, target // len(nightly) or 1))
    # One label per subcategory per receipt, as a hotel folio prints it.
    labels: dict[str, str] = {}

    def label_for(sub: str) -> str:
        if sub not in labels:
            s = BY_NAME[sub]
            pool = s.confusable_labels if s.confusable_labels and rng.random() < d.confusable_rate else s.plain_labels
            labels[sub] = rng.choice(pool)
        return labels[sub]

    start = date(2026, 1, 5) + timedelta(days=rng.randint(0, 300))
    base_rate = _money(rng, 89, 420)
    lines: list[ReceiptLine] = []
    for night in range(nights):
        day = (start + timedelta(days=night)).isoformat()
        rate = _money(rng, 89, 420) if night and rng.random() < d.rate_variation else base_rate
        for sub in nightly:
            if sub == "Room Charge":
                amount = rate
            elif sub == "Room Tax":
                amount = (rate * Decimal("0.12")).quantize(CENT)
            elif sub == "Non-Room Tax":
                amount = Decimal("4.50") if rate < 200 else Decimal("7.25")
            else:
                amount = Decimal("35.00")
            lines.append(ReceiptLine(label_for(sub), amount, day, sub))
    extras: list[ReceiptLine] = []
    while len(lines) + len(extras) < target:
        sub, lo, hi = rng.choice(EXTRAS)
        day = (start + timedelta(days=rng.randrange(nights))).isoformat()
        amount = _money(rng, lo, hi)
        extras.append(ReceiptLine(label_for(sub), amount, day, sub))
        if len(lines) + len(extras) < target and rng.random() < d.same_day_repeat_rate:
            extras.append(ReceiptLine(label_for(sub), amount, day, sub))
    all_lines = sorted(lines + extras, key=lambda line: line.date)  # stable: nightly charges first per day
    all_lines = all_lines[: max(d.min_lines, min(d.max_lines, 23))]
    check_out = (start + timedelta(days=nights)).isoformat()
    return Task(
        task_id=f"T{index:03d}-{seed}",
        seed=seed,
        expense_id=f"EXP-{seed % 100000:05d}",
        merchant=rng.choice(MERCHANTS),
        check_in=start.isoformat(),
        check_out=check_out,
        currency="USD",
        lines=tuple(all_lines),
    )


def generate_tasks(n: int, seed: int = 0, difficulty: Difficulty | None = None) -> list[Task]:
    """`n` receipts; task i uses seed `seed * 100003 + i`, so subsets of a larger set are stable."""
    if n < 1:
        raise ValueError(f"need at least one task, got {n}")
    return [generate_task(seed * 100003 + i, difficulty, index=i) for i in range(n)]

