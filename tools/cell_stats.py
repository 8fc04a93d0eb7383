"""Export cells of the library notebooks: how many, their mean length and definitions per cell, the largest.

    python tools/cell_stats.py            # the summary
    python tools/cell_stats.py --top 10   # and the ten longest export cells
"""
import argparse, ast, json, statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPORT = ('#| export', '#|export', '#| exporti', '#|exporti', '#| exports', '#|exports')

def library_notebooks(root:Path=ROOT) -> list:
    "The notebooks that export into the package: `nbs/*.ipynb` except result notebooks, `index` and scratch."
    return [p for p in sorted((root/'nbs').glob('*.ipynb')) if not p.name.startswith(('run_', '_', 'index'))]

def export_cells(path:Path) -> list:
    "(notebook, cell index, code lines without directives, top-level definitions) for each export cell of `path`."
    out = []
    for i, c in enumerate(json.loads(path.read_text(encoding='utf-8'))['cells']):
        if c['cell_type'] != 'code': continue
        lines = ''.join(c['source']).splitlines()
        if not any(l.strip().startswith(EXPORT) for l in lines if l.startswith('#|')): continue
        body = [l for l in lines if not l.startswith('#|')]
        defs = sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in ast.parse('\n'.join(body)).body)
        out.append((path.name, i, len(body), defs))
    return out

def summary(root:Path=ROOT) -> dict:
    "Count, mean lines and mean definitions of every export cell of the library notebooks."
    cells = [c for p in library_notebooks(root) for c in export_cells(p)]
    return {'cells': len(cells), 'mean_lines': statistics.mean(c[2] for c in cells),
            'mean_definitions': statistics.mean(c[3] for c in cells), 'longest': sorted(cells, key=lambda c: -c[2])}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--top', type=int, default=0, help='also list the N longest export cells')
    s = summary()
    print(f"{s['cells']} export cells: {s['mean_lines']:.1f} lines and {s['mean_definitions']:.2f} definitions per cell on average")
    for nb, i, n, d in s['longest'][:ap.parse_args().top]: print(f"  {nb} cell {i}: {n} lines, {d} definitions")
