"""Re-encode committed figures as the figure writer now writes them: each PNG in a palette (`stance_nb.data.explore.palette_png`).

The PNG files are rewritten in place, each file atomically (the pages link them by name, so no page changes); a figure already in a
palette stays byte for byte as it is, so running this again changes nothing. With no argument it re-encodes every PNG file under
`results/`.

    python tools/palette_figures.py [FILE_OR_FOLDER ...]
"""
import argparse, sys
from pathlib import Path
from stance_nb.core import write_bytes
from stance_nb.data.explore import palette_png

ROOT = Path(__file__).resolve().parents[1]

def files(paths:list) -> list:
    "The PNG files of `paths` (files, or folders searched below)."
    out = []
    for p in paths:
        out += [p] if p.is_file() else sorted(p.rglob('*.png'))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('paths', nargs='*', type=Path, help='files or folders (default: results/)')
    a = ap.parse_args(argv)
    before = after = 0
    for f in files(a.paths or [ROOT/'results']):
        old = f.read_bytes()
        try: new = palette_png(old)
        except (OSError, ValueError) as e: raise SystemExit(f"{f}: not a readable figure ({type(e).__name__}: {e}); nothing written to it")
        before, after = before + len(old), after + len(new)
        if new != old: write_bytes(f, new)
    print(f"{before:,} bytes -> {after:,} bytes")
    return 0


if __name__ == '__main__':
    sys.exit(main())
