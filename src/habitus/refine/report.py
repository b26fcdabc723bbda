"""Outputs of a refinement run: proposed_skill.md, skill.diff, manifest.json and report.html.

The report shows a 2-D map of the clusters (PCA of the trace embeddings, drawn with matplotlib and
embedded as a base64 PNG) and each edit with its evidence, gate verdict and held-out figures.
Everything is written deterministically: sorted JSON, no clocks, PNG without software metadata.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any


def project_2d(vectors: Any) -> Any:
    """PCA to two dimensions with a fixed sign convention (deterministic across runs)."""
    import numpy as np

    data = np.asarray(vectors, dtype=np.float64)
    if len(data) == 0:
        return np.zeros((0, 2))
    centred = data - data.mean(axis=0)
    if len(data) < 2 or not np.any(centred):
        return np.zeros((len(data), 2))
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    components = vt[:2]
    for row in components:
        if row[np.argmax(np.abs(row))] < 0:
            row *= -1
    points = centred @ components.T
    if points.shape[1] < 2:
        points = np.hstack([points, np.zeros((len(points), 2 - points.shape[1]))])
    return points


def cluster_map_png(vectors: Any, ids: list[str], labels_by_id: dict[str, int],
                    polarity_by_id: dict[str, str]) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = project_2d(vectors)
    fig, ax = plt.subplots(figsize=(6.4, 4.8), dpi=100)
    colours = {"success": "#2a9d8f", "failure": "#e76f51"}
    for polarity in ("success", "failure"):
        for noise in (False, True):
            rows = [i for i, t in enumerate(ids) if polarity_by_id[t] == polarity
                    and (labels_by_id.get(t, -1) < 0) == noise]
            if rows:  # traces that embed identically share one marker, sized by how many they are
                stacked = Counter((round(float(points[i, 0]), 6), round(float(points[i, 1]), 6)) for i in rows)
                xy = sorted(stacked)
                ax.scatter([x for x, _ in xy], [y for _, y in xy], c=colours[polarity], marker="x" if noise else "o",
                           s=[36 * stacked[k] ** 0.5 for k in xy], alpha=0.85,
                           label=f"{polarity}{' (noise/unclustered)' if noise else ''} ({len(rows)})")
    groups: dict[tuple[str, int], list[int]] = {}
    for i, t in enumerate(ids):
        label = labels_by_id.get(t, -1)
        if label >= 0:
            groups.setdefault((polarity_by_id[t], label), []).append(i)
    for (polarity, label), rows in sorted(groups.items()):
        x, y = points[rows, 0].mean(), points[rows, 1].mean()
        ax.annotate(f"{polarity[0].upper()}{label}", (x, y), fontsize=9, weight="bold", color=colours[polarity])
    ax.set_title("Trace clusters (PCA of the embeddings; marker area = traces)")
    ax.set_xticks([])
    ax.set_yticks([])
    if ids:
        ax.legend(loc="best", fontsize=8)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()


def _e(value: Any) -> str:
    from habitus.core.untrusted import sanitise  # trajectories and skill text come from traces

    return html.escape(sanitise(str(value)))


def _proposal_html(p: dict[str, Any]) -> str:
    gate = p["gate"]
    state = "accepted" if gate["passed"] else "rejected"
    rows = [
        f"<h3 class='{state}'>{_e(p['id'])} · {_e(p['kind'])} · {state}</h3>",
        f"<p><b>Edit:</b> {_e(p['text'])}</p>",
        f"<p><b>Behaviour:</b> {_e(p['observation'])} (<code>{_e(p['behaviour'])}</code>) — in "
        f"{len(p['supporting_trace_ids'])}/{len(p['cluster_trace_ids'])} traces of the cluster "
        f"({p['cluster_rate']:.0%}) vs {p['other_rate']:.0%} of the other polarity</p>",
        f"<p><b>Gate:</b> {_e('; '.join(gate['reasons']))} · table {_e(json.dumps(gate['table']))}</p>",
    ]
    if p.get("merge"):
        rows.append(f"<p><b>Merge:</b> {_e(p['merge'].get('action'))}</p>")
    if p.get("holdout"):
        rows.append(f"<p><b>Held-out:</b> {_e(json.dumps(p['holdout'], sort_keys=True))}</p>")
    quotes = "".join(
        f"<li><code>{_e(tid)}</code>: {' | '.join(f'<code>{_e(s)}</code>' for s in snips)}</li>"
        for tid, snips in sorted(p["evidence"].items())
    )
    rows.append(f"<details><summary>Evidence ({len(p['evidence'])} traces)</summary><ul>{quotes}</ul></details>")
    return "<section>" + "\n".join(rows) + "</section>"


def render_html(manifest: dict[str, Any], diff: str, png: bytes) -> str:
    clusters = "".join(
        f"<tr><td>{_e(c['polarity'])}</td><td>{'noise' if c['noise'] else c['cluster_id']}</td><td>{c['size']}</td>"
        f"<td>{_e(c.get('proposal') or '')}</td></tr>" for c in manifest["clusters"]
    )
    flagged = manifest["flagged_by_holdout"]
    image = base64.b64encode(png).decode("ascii")
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>habitus refine: {_e(manifest['inputs']['skill']['name'])}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2rem .5rem}}
.accepted{{color:#1d6f5f}}.rejected{{color:#b5452a}}pre{{background:#f6f6f6;padding:1rem;overflow-x:auto}}
section{{border-top:1px solid #ddd;margin-top:1rem}}</style></head><body>
<h1>Skill refinement: {_e(manifest['inputs']['skill']['name'])}</h1>
<p>{manifest['inputs']['traces']['with_outcome']} traces with outcomes ({manifest['split']['train']} used,
{manifest['split']['held_out']} held out) · {len(manifest['proposals'])} proposals ·
{len(manifest['accepted'])} accepted · {len(manifest['rejected'])} rejected ·
model calls {manifest['usage']['calls']}</p>
{f"<p class='rejected'><b>Flagged by the held-out check:</b> {_e(', '.join(flagged))}</p>" if flagged else ""}
<h2>Cluster map</h2><img alt="2-D map of the trace clusters" src="data:image/png;base64,{image}">
<h2>Clusters</h2><table><tr><th>polarity</th><th>cluster</th><th>traces</th><th>proposal</th></tr>{clusters}</table>
<h2>Edits</h2>{''.join(_proposal_html(p) for p in manifest['proposals']) or '<p>No proposals.</p>'}
<h2>Diff</h2><pre>{_e(diff) or 'No change.'}</pre>
</body></html>
"""


def write_outputs(result: Any, vectors: Any, ids: list[str], labels_by_id: dict[str, int],
                  by_id: dict[str, Any]) -> None:
    """Write the four output files of a run into `result.out_dir`."""
    out = Path(result.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "proposed_skill.md").write_bytes(result.proposed_skill.encode("utf-8"))
    (out / "skill.diff").write_bytes(result.diff.encode("utf-8"))
    manifest_text = json.dumps(result.manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    (out / "manifest.json").write_bytes(manifest_text.encode("utf-8"))
    png = cluster_map_png(vectors, ids, labels_by_id, {t: by_id[t].polarity for t in ids})
    (out / "report.html").write_bytes(render_html(result.manifest, result.diff, png).encode("utf-8"))
