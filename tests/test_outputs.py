"What is committed under `results/` and `outputs/bench/`: results a reader can trust, with no trace of the machine that made them."
import re, subprocess
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
ABSOLUTE = re.compile(r"(?<![\w.~:/<$-])/(?:home|root|tmp|work|Users|mnt|opt|var|usr|private|scratch|data|srv)/")   # a machine's absolute path

def committed(*folders:str) -> list[Path]:
    "The files git tracks under `folders` (default: the committed results and benchmarks; text files, not figures)."
    out = subprocess.run(['git', 'ls-files', *(folders or ('results', 'outputs'))], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0: pytest.skip('not a git checkout')
    return [ROOT/f for f in out.stdout.split() if not f.endswith(('.png', '.pdf'))]

def test_the_path_finder_finds_paths():
    assert ABSOLUTE.search('"model": "/work/main/.venv/m"') and ABSOLUTE.search("cannot read /tmp/x/argmin: missing")
    assert not ABSOLUTE.search('see https://huggingface.co/work/x and ../shared/data/argmin; F1m / accuracy')

def test_no_absolute_path_in_committed_outputs():
    "Tables, conditions, records and benchmarks name paths relative to the repository (or the data root), never as on the machine that made them."
    files = committed()
    assert len(files) > 50
    bad = {str(f.relative_to(ROOT)): ABSOLUTE.findall(f.read_text(errors='replace'))[:2] for f in files if ABSOLUTE.search(f.read_text(errors='replace'))}
    assert bad == {}
