"""Rewrite job stores of the per-test-set layout (one `predictions_<key>_<test>.jsonl` per test set) with one `predictions.jsonl.gz` per job.

Each job is converted on its own: the new file is written and read back identical, its record replaced (the one step that switches the job
over), then the old files removed; an interrupted conversion leaves every job whole in one layout or the other, and running this again
finishes it. With no argument it converts every job store under `results/` (each folder holding `*/record.json`).

    python tools/convert_predictions.py [STORE ...]
"""
import argparse, sys
from pathlib import Path
from stance_nb.experiment.store import convert_store

ROOT = Path(__file__).resolve().parents[1]


def job_stores(root:Path) -> list:
    "Every folder under `root` that holds job folders (`<folder>/<job>/record.json` with a job's predictions)."
    return sorted({p.parent.parent for p in root.rglob('*/record.json') if any(p.parent.glob('predictions*'))})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('stores', nargs='*', type=Path, help='job stores to convert (default: every one under results/)')
    a = ap.parse_args(argv)
    for store in a.stores or job_stores(ROOT/'results'): convert_store(store)
    return 0


if __name__ == '__main__':
    sys.exit(main())
