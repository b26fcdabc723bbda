"""Update the vendored gitleaks rule set and rebuild the rule book redaction loads.

    python scripts/update_secret_rules.py --version 8.30.1            # download that release's config
    python scripts/update_secret_rules.py --version 8.30.1 --from-file gitleaks.toml
    python scripts/update_secret_rules.py --version 8.30.1 --from-binary ./gitleaks   # the config a release embeds
    python scripts/update_secret_rules.py --rebuild                   # only habitus.toml changed

It writes `src/habitus/data/secrets/gitleaks.toml` (upstream's `config/gitleaks.toml`, unchanged) and
regenerates `src/habitus/data/secrets/rules.json` from it and `habitus.toml`
(`habitus.capture.secret_translate.build_rulebook`), recording for each source its name, version,
URL, licence and SHA-256. Review the diff of `rules.json` and run `tests/capture` (the canary and
the real-history false-positive test) before committing an update.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "habitus" / "data" / "secrets"
UPSTREAM = "https://raw.githubusercontent.com/gitleaks/gitleaks/v{version}/config/gitleaks.toml"
PAGE = "https://github.com/gitleaks/gitleaks/blob/v{version}/config/gitleaks.toml"
START = b"# This file has been auto-generated. Do not edit manually."


def from_binary(path: Path) -> str:
    """The default config a gitleaks binary embeds (Go's `embed` keeps the file's bytes as they are)."""
    data = path.read_bytes()
    start = data.find(START)
    if start == -1:
        raise SystemExit(f"error: {path} holds no embedded gitleaks config")
    end = re.compile(rb"[^\x09\x0a\x0d\x20-\x7e]").search(data, start)
    return data[start:end.start() if end else len(data)].decode("ascii")


def current_meta() -> dict[str, str]:
    book = json.loads((DATA / "rules.json").read_text(encoding="utf-8"))
    return next(s for s in book["sources"] if s["name"] == "gitleaks")


def rebuild(gitleaks_meta: dict[str, str]) -> dict:
    sys.path.insert(0, str(ROOT / "src"))
    from habitus.capture.secret_translate import build_rulebook

    habitus_meta = {"name": "habitus", "version": "local", "url": "src/habitus/data/secrets/habitus.toml",
                    "licence": "MIT"}
    book = build_rulebook([
        (gitleaks_meta, (DATA / "gitleaks.toml").read_text(encoding="utf-8")),
        (habitus_meta, (DATA / "habitus.toml").read_text(encoding="utf-8")),
    ])
    (DATA / "rules.json").write_text(json.dumps(book, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return book


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", help="the gitleaks release, e.g. 8.30.1")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--from-file", type=Path, help="a copy of upstream's config/gitleaks.toml")
    source.add_argument("--from-binary", type=Path, help="a gitleaks release binary (its embedded config)")
    source.add_argument("--rebuild", action="store_true", help="keep the vendored gitleaks.toml; rebuild rules.json")
    args = parser.parse_args(argv)
    if args.rebuild:
        meta = current_meta()
    else:
        if not args.version:
            parser.error("--version is required unless --rebuild")
        if args.from_file:
            text = args.from_file.read_text(encoding="utf-8")
        elif args.from_binary:
            text = from_binary(args.from_binary)
        else:
            with urllib.request.urlopen(UPSTREAM.format(version=args.version), timeout=60) as response:  # noqa: S310
                text = response.read().decode("utf-8")
        if not text.startswith(START.decode()):
            raise SystemExit("error: that is not gitleaks' generated config/gitleaks.toml")
        (DATA / "gitleaks.toml").write_text(text, encoding="utf-8")
        meta = {"name": "gitleaks", "version": args.version, "url": PAGE.format(version=args.version),
                "licence": "MIT (src/habitus/data/secrets/gitleaks.LICENSE)"}
    book = rebuild(meta)
    for described in book["sources"]:
        print(f"{described['name']} {described['version']}: {described['rules']} rules, sha256 {described['sha256']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
