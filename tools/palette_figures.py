"""Re-encode committed figures as the figure writer now writes them: each PNG in a palette (`stance_nb.data.explore.palette_png`).

The PNG files and the figures embedded in the HTML pages (`data:image/png;base64,...`) are rewritten in place, each file atomically;
a figure already in a palette stays byte for byte as it is, so running this again changes nothing. With no argument it re-encodes
every PNG and HTML file under `results/`. The tables, records and every other byte of a page are left as they are.

    python tools/palette_figures.py [FILE_OR_FOLDER ...]
"""
import argparse, base64, re, sys
from pathlib import Path
from stance_nb.core import write_bytes
from stance_nb.data.explore import palette_png

ROOT = Path(__file__).resolve().parents[1]
EMBEDDED = re.compile(r'data:image/png;base64,([A-Za-z0-9+/=]+)')


def _page(text:str) -> str:
    "The page with each embedded PNG re-encoded."
    return EMBEDDED.sub(lambda m: 'data:image/png;base64,' + base64.b64encode(palette_png(base64.b64decode(m.group(1)))).decode('ascii'), text)


def files(paths:list) -> list:
    "The PNG and HTML files of `paths` (files, or folders searched below)."
    out = []
    for p in paths:
        out += [p] if p.is_file() else sorted(f for f in p.rglob('*') if f.suffix in ('.png', '.html'))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('paths', nargs='*', type=Path, help='files or folders (default: results/)')
    a = ap.parse_args(argv)
    before = after = 0
    for f in files(a.paths or [ROOT/'results']):
        old = f.read_bytes()
        try: new = palette_png(old) if f.suffix == '.png' else _page(old.decode('utf-8')).encode('utf-8')
        except (OSError, ValueError) as e: raise SystemExit(f"{f}: not a readable figure or page ({type(e).__name__}: {e}); nothing written to it")
        before, after = before + len(old), after + len(new)
        if new != old: write_bytes(f, new)
    print(f"{before:,} bytes -> {after:,} bytes")
    return 0


if __name__ == '__main__':
    sys.exit(main())
