"""A seeded generator of synthetic SkillRefiner-format corpora with a known cause of failure.

Every trace is a spreadsheet-editing run written as a plain-text transcript inside one span
(`{trace_id, spans:[{name: "agent_rollout", output_text}]}`), with `binary_rewards.json` and a seed
SKILL.md. By construction one behaviour causes most failures (rewriting the workbook through
pandas `to_excel`: 24 of 28 such runs fail at the default size) and another is harmless noise
(paging a notes file with `sed -n`: it fails at the corpus base rate, yet it is in every failure
the first behaviour does not explain, so a failure cluster forms around it). The seed skill
endorses pandas, so a refinement has an instruction to scope. The counts are exact per size, not
sampled; the seed only varies task text, file names, numbers and extra inspection steps.

    python -m habitus.refine.samples OUT_DIR [--traces 72] [--seed 7]
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

SEED = 7
DEFAULT_TRACES = 72
# (causal behaviour, failed, traces per 72, share of them with the noise habit). The noise habit shows
# up in every failure the causal behaviour does not explain, so a failure cluster is made of it; yet
# across the corpus it fails at the base rate (14 of 32 noisy runs fail vs 32 of 72 overall).
_CELLS = ((True, True, 24, 0.25), (True, False, 4, 0.5), (False, True, 8, 1.0), (False, False, 36, 0.45))

SEED_SKILL = """---
name: workbook-edits
description: "Use when the user asks to fill, compute or reshape cells of an Excel workbook and save it."
---

# Workbook edits

Solve one workbook task with Python in the terminal, then save to the output path the task names.

## Workflow

1. **Read the task header.** `input_path`, `output_path` and `target_range` define the contract.
2. **Inspect before editing.** Print the sheet names, the used range and the first rows.
3. **Load the data with pandas.** Use `pandas.read_excel` for table-wide computation and write the
   result back with `to_excel`.
4. **Save to `output_path` exactly.** Never save over the input.
5. **Verify.** Reload the saved file and print the cells you wrote.

## Notes

- Keep untouched sheets and formatting as they are.
"""

_TASKS = (
    "Fill column {col} with the total of each row's quarterly sales.",
    "Write the running balance of the account ledger into column {col}.",
    "Compute each employee's overtime hours in column {col}.",
    "Flag duplicated invoice numbers in column {col} with 'dup'.",
    "Put each region's share of revenue (as a fraction) into column {col}.",
    "Copy the latest price for every product code into column {col}.",
)
_SHEETS = ("Sales", "Ledger", "Staff", "Invoices", "Regions", "Prices")


def _call(command: str, summary: str, output: str, code: int = 0) -> str:
    args = json.dumps({"command": command, "timeout": 30, "summary": summary}, ensure_ascii=False)
    return (f"ASSISTANT: [tool call] terminal({args})\n---\n"
            f"TOOL: {output}\n[The command completed with exit code {code}.]")


def _transcript(rng: random.Random, index: int, causal: bool, noise: bool, failed: bool) -> str:
    col = rng.choice("DEFGHJK")
    sheet = rng.choice(_SHEETS)
    rows = rng.randint(12, 400)
    work = f"/work/task_{index:03d}"
    src, out = f"{work}/input.xlsx", f"{work}/output.xlsx"
    task = rng.choice(_TASKS).format(col=col)
    blocks = [
        f"USER: ### instruction\n{task}\n\n### input_path\n{src}\n\n### output_path\n{out}\n\n"
        f"### target_range\n{col}2:{col}{rows}",
        _call(f"python3 - <<'PY'\nfrom openpyxl import load_workbook\nwb = load_workbook('{src}')\n"
              f"print(wb.sheetnames)\nws = wb['{sheet}']\nprint(ws.max_row, ws.max_column)\nPY",
              "Inspect workbook sheets and size", f"['{sheet}']\n{rows} 9"),
    ]
    blocks.append(_call(f"python3 - <<'PY'\nfrom openpyxl import load_workbook\nws = load_workbook('{src}')"
                        f"['{sheet}']\nfor row in ws.iter_rows(max_row=4, values_only=True):\n    print(row)\nPY",
                        "Print the first rows", "('id', 'name', 'q1', 'q2')\n(1, 'north', 120, 98)"))
    if noise:  # the harmless habit: same step count as the alternative, so run length carries no signal
        blocks.append(_call(f"sed -n '1,{rng.randint(20, 60)}p' {work}/NOTES.txt", "Read the task notes",
                            "Notes: totals exclude the header row."))
    else:
        blocks.append(_call(f"python3 - <<'PY'\nfrom openpyxl import load_workbook\nws = load_workbook('{src}')"
                            f"['{sheet}']\nprint(ws['{col}1'].value, ws.max_row)\nPY", "Check the target column",
                            f"None {rows}"))
    if causal:
        blocks.append(_call(
            f"python3 - <<'PY'\nimport pandas as pd\ndf = pd.read_excel('{src}', sheet_name='{sheet}')\n"
            f"df['{col}'] = df.iloc[:, 2:6].sum(axis=1)\ndf.to_excel('{out}', index=False)\n"
            f"print('saved', '{out}')\nPY", "Compute with pandas and save", f"saved {out}"))
    else:
        blocks.append(_call(
            f"python3 - <<'PY'\nfrom openpyxl import load_workbook\nwb = load_workbook('{src}')\n"
            f"ws = wb['{sheet}']\nfor r in range(2, ws.max_row + 1):\n"
            f"    ws['{col}' + str(r)] = sum((ws.cell(r, c).value or 0) for c in range(3, 7))\n"
            f"wb.save('{out}')\nprint('saved', '{out}')\nPY", "Write the cells and save", f"saved {out}"))
    blocks.append(_call(f"python3 - <<'PY'\nfrom openpyxl import load_workbook\nws = load_workbook('{out}')"
                        f".active\nprint(ws['{col}2'].value, ws['{col}3'].value)\nPY",
                        "Reload the output and print written cells",
                        f"{rng.randint(100, 999)} {rng.randint(100, 999)}"))
    blocks.append(f"ASSISTANT: Done. I wrote column {col} and saved the workbook to {out}.")
    if failed:
        reason = "Worksheet formatting and other sheets lost" if causal else "Value mismatch"
        blocks.append("SCORING REFERENCE (metadata, NOT part of the agent's output): grader verdict.\n"
                      f"EXPECTED GROUND-TRUTH ANSWER: {reason} at {col}{rng.randint(2, rows)}")
    return "\n---\n".join(blocks)


def _cell_counts(total: int) -> list[tuple[bool, bool, int, float]]:
    base = sum(cell[2] for cell in _CELLS)
    counts = [(causal, failed, max(2, round(c * total / base)), share) for causal, failed, c, share in _CELLS]
    drift = total - sum(cell[2] for cell in counts)
    causal, failed, c, share = counts[-1]
    counts[-1] = (causal, failed, c + drift, share)
    return counts


def build_corpus(n_traces: int = DEFAULT_TRACES, seed: int = SEED) -> tuple[list[dict], dict[str, bool]]:
    """(span JSONL rows, rewards) for a corpus of `n_traces` (>= 16) traces."""
    if n_traces < 16:
        raise ValueError("a sample corpus needs at least 16 traces")
    rng = random.Random(seed)
    plan: list[tuple[bool, bool, bool]] = []
    for causal, failed, count, share in _cell_counts(n_traces):
        noisy = round(count * share)
        plan += [(causal, i < noisy, failed) for i in range(count)]
    rng.shuffle(plan)
    rows, rewards = [], {}
    for index, (causal, noise, failed) in enumerate(plan):
        trace_id = f"sample_{index:03d}_{rng.getrandbits(32):08x}"
        text = _transcript(rng, index, causal, noise, failed)
        rows.append({"trace_id": trace_id, "spans": [{"span_id": f"{trace_id}-s1", "name": "agent_rollout",
                                                      "input_text": "", "output_text": text}]})
        rewards[trace_id] = not failed
    return rows, rewards


def write_corpus(out_dir: Path | str, n_traces: int = DEFAULT_TRACES, seed: int = SEED) -> dict[str, Path]:
    """Write traces.jsonl, binary_rewards.json and SKILL.md into `out_dir`; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows, rewards = build_corpus(n_traces, seed)
    paths = {"traces": out / "traces.jsonl", "rewards": out / "binary_rewards.json", "skill": out / "SKILL.md"}
    paths["traces"].write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    paths["rewards"].write_text(json.dumps(rewards, indent=2) + "\n", encoding="utf-8")
    paths["skill"].write_text(SEED_SKILL, encoding="utf-8")
    return paths


def bundled_sample() -> dict[str, Path]:
    """Paths of the sample shipped in the package (habitus/data/samples/refine)."""
    root = Path(__file__).resolve().parents[1] / "data" / "samples" / "refine"
    return {"traces": root / "traces.jsonl", "rewards": root / "binary_rewards.json", "skill": root / "SKILL.md"}


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        sys.exit("usage: python -m habitus.refine.samples OUT_DIR [--traces N] [--seed S]")
    opts = dict(zip(args[1::2], args[2::2], strict=False))
    written = write_corpus(args[0], int(opts.get("--traces", DEFAULT_TRACES)), int(opts.get("--seed", SEED)))
    print("\n".join(str(p) for p in written.values()))
