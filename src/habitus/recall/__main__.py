"""`python -m habitus.recall "TASK" --cwd PATH [--json]`: recall without the Typer/Rich start-up cost."""

import sys

from habitus.cli.recall_fast import run_recall

sys.exit(run_recall(sys.argv[1:]))
