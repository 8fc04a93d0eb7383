"""Rewrite kept job stores in the layout `--keep-records` writes: one `predictions.jsonl.gz` per job, its record gzip'd (`record.json.gz`).

A store of the per-test-set layout (one `predictions_<key>_<test>.jsonl` per test set) gets one predictions file per job first
(`convert_store`), then each job's record is gzip'd and an `info.json` the record holds too is left out (`compact_store`). Each job is
rewritten on its own: the new file is written and read back identical before the old ones go; an interrupted conversion leaves every job
whole in one layout or the other, and running this again finishes it. With no argument it converts every job store under `results/`.

    python tools/convert_predictions.py [STORE ...]
"""
import argparse, sys
from pathlib import Path
from stance_nb.experiment.store import convert_store, compact_store
from stance_nb.records import job_records

ROOT = Path(__file__).resolve().parents[1]


def job_stores(root:Path) -> list:
    "Every folder under `root` that holds job folders (`<folder>/<job>/record.json`, or `record.json.gz`, with a job's predictions)."
    return sorted(p for p in root.rglob('*') if p.is_dir() and any(any(f.parent.glob('predictions*')) for f in job_records(p)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('stores', nargs='*', type=Path, help='job stores to convert (default: every one under results/)')
    a = ap.parse_args(argv)
    for store in a.stores or job_stores(ROOT/'results'): convert_store(store); compact_store(store)
    return 0


if __name__ == '__main__':
    sys.exit(main())
