#!/usr/bin/env python
"""Build the documentation site from the notebooks in `nbs/` with Sphinx + MyST-NB: `python tools/build_docs.py`.

1. Library notebooks run cell by cell the way `nbdev_test` runs them (cells flagged with a `tst_flags` flag or
   `#| eval: false` are shown but not run), with a `show_doc` cell after every exported function or class, so each
   page shows its outputs, tables and figures and the signature and parameter comments (docments) of its API.
2. Result notebooks (`nbs/run_*.ipynb`) run through papermill on their smoke parameters (`-p smoke True`, or the
   defaults of a notebook without `smoke`) with `STANCE_NB_OUTPUTS` in a temporary folder; each page says so at the top.
   Both run with progress bars off (`STANCE_NB_QUIET`, `TQDM_DISABLE`, `HF_HUB_DISABLE_PROGRESS_BARS`).
3. nbdev's own processors then apply nbdev's conventions: `#| hide` cells, exported source and `#| ...` directive
   comment lines are removed; `show_doc` outputs become the page's API sections.
4. The pages keep a cell's results, not its diagnostics: stderr (warnings, progress bars, log lines) is dropped, and
   the build machine's folders in the outputs are written portably: the repository as `.`, `$STANCE_NB_DATA`,
   temporary folders as `<tmp>`, the home folder as `~`.
5. Sphinx renders the processed notebooks (MyST-NB, no execution) into `_site/`.

Executed notebooks are cached in `.docs_cache/` under a hash of the notebook, the package source and this script,
so a rebuild runs only the notebooks whose inputs changed. `docs/README.md` says why Sphinx + MyST-NB.
"""
import argparse, hashlib, json, os, re, shutil, subprocess, sys, tempfile, time
from concurrent.futures import ProcessPoolExecutor, as_completed
from configparser import ConfigParser
from multiprocessing import get_context
from pathlib import Path
from stance_nb.core import available_cpus   # a light module: the heavy ones are imported in the fork server

ROOT = Path(__file__).resolve().parents[1]
NBS, CACHE, CONF = ROOT/'nbs', ROOT/'.docs_cache', ROOT/'docs'
NOTE = ('> **Rendered from a smoke run.** This page was executed with {how}, on tiny synthetic fixtures and models: '
        'its numbers show the notebook working, not the published results. The README says how to run '
        '`nbs/{name}` with papermill on the real data.')

# nbdev_clean strips these; MyST-NB needs them to highlight the code cells
KERNELSPEC = {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}
LANGUAGE_INFO = {'name': 'python', 'pygments_lexer': 'ipython3'}

_SITE_MARK = '# --- ' + 'site:'   # spelt in two parts so that only the section heading below matches

def _package_modules() -> list[str]:
    "Every module of the package (not `__main__`), by file: each notebook's process would otherwise import them again (about 4 s each)."
    return sorted('.'.join(p.relative_to(ROOT).with_suffix('').parts).removesuffix('.__init__')
                  for p in (ROOT/'stance_nb').rglob('*.py') if p.stem != '__main__')

# imported once, in the fork server
PRELOAD = ['torch', 'transformers', 'pandas', 'sklearn', 'execnb.shell', 'nbdev.process', 'nbdev.showdoc', *_package_modules()]
# progress bars off in every executed notebook (the result notebooks' kernels inherit it): the package's own bars,
# any other tqdm bar, and transformers'/huggingface_hub's ("Loading weights", "Writing model shards")
QUIET_ENV = {'STANCE_NB_QUIET': '1', 'TQDM_DISABLE': '1', 'HF_HUB_DISABLE_PROGRESS_BARS': '1'}

class DocsBuildError(RuntimeError): "A notebook could not be executed or rendered for the documentation site."

def settings():
    "The `[DEFAULT]` section of `settings.ini`."
    cfg = ConfigParser(delimiters=['='])
    cfg.read(ROOT/'settings.ini', encoding='utf-8')
    return cfg['DEFAULT']

def doc_notebooks():
    "Notebooks that become pages: `index` first, library notebooks, then result notebooks (`_` ones are scratch)."
    nbs = sorted(p for p in NBS.glob('*.ipynb') if not p.name.startswith(('_', '.')))
    return sorted(nbs, key=lambda p: (p.stem != 'index', p.name.startswith('run_'), p.name))

def source_hash(nb_path):
    "Hash of what a page's outputs depend on: notebook, package files, this script's execution part, settings, data folder."
    h = hashlib.sha256(Path(__file__).read_text(encoding='utf-8').split(_SITE_MARK)[0].encode())  # the execution code
    h.update(os.environ.get('STANCE_NB_DATA', '').encode() + b'\0')    # some cells print statistics of the data mirror
    for p in [nb_path, ROOT/'settings.ini', *sorted((ROOT/'stance_nb').rglob('*'))]:
        if p.is_file() and '__pycache__' not in p.parts: h.update(str(p.relative_to(ROOT)).encode() + b'\0' + p.read_bytes())
    return h.hexdigest()

# --- processing (runs inside a worker process) ---------------------------------------------------------------------

def _skip(cell, flags):
    "Cells `nbdev_test` would not run: flagged with a skipped flag, `#| eval: false`, or the `nbdev_export()` call."
    d = getattr(cell, 'directives_', {}) or {}
    return (cell.cell_type != 'code' or 'nbdev_export' + '(' in cell.source
            or d.get('eval:', [''])[0].lower() == 'false' or bool(flags & d.keys()))

class _Execute:
    "An nbdev processor that runs every cell of a library notebook in one shell, as `nbdev_test` does."
    def __init__(self, nb, path, flags): self.nb, self.path, self.flags = nb, path, flags
    def begin(self):
        from execnb.shell import CaptureShell
        self.k = CaptureShell(self.path)
        self.k.run_cell('from nbdev.showdoc import show_doc')
    def __call__(self, cell):
        if _skip(cell, self.flags): return
        self.k.cell(cell)
        if self.k.exc is not None:
            raise DocsBuildError(f'{self.path.name}: cell {cell.idx_} raised {type(self.k.exc).__name__}: {self.k.exc}\n{cell.source}')

def _showdoc_to_markdown(cell):
    "Turn an executed `show_doc(...)` cell into the markdown it printed (signature, docstring, parameter comments)."
    if cell.cell_type != 'code' or not re.match(r'^show_doc\(', cell.source or ''): return
    md = [o['data']['text/markdown'] for o in cell.get('outputs', []) if 'text/markdown' in o.get('data', {})]
    if not md: raise DocsBuildError(f'`{cell.source}` printed no markdown: {cell.get("outputs")}')
    text = md[0] if isinstance(md[0], str) else ''.join(md[0])
    text = re.sub(r'^\s*---\s*\n', '', text)                     # a section may not begin with a rule
    cell.cell_type, cell.source = 'markdown', re.sub(r'#LNone\)', ')', text)   # nbdev gives no line for some symbols
    for k in ('outputs', 'execution_count'): cell.pop(k, None)

def _quarto_options(cell):
    "nbdev/quarto cell options that MyST-NB spells as tags: `echo: false`, `output: false`, `include: false`."
    d = getattr(cell, 'directives_', {}) or {}
    if d.get('include:', [''])[0].lower() == 'false': del cell['source']; return
    tags = cell.setdefault('metadata', {}).setdefault('tags', [])
    if d.get('echo:', [''])[0].lower() == 'false': tags.append('remove-input')
    if d.get('output:', [''])[0].lower() == 'false': tags.append('remove-output')

def _drop_papermill(cell):
    "Remove papermill's injected-parameters cell and its execution metadata."
    if 'injected-parameters' in cell.get('metadata', {}).get('tags', []): del cell['source']; return
    cell.get('metadata', {}).pop('papermill', None)

def _nbdev_filters():
    "nbdev's processors that apply its conventions to an executed notebook (the quarto-specific ones left out)."
    from nbdev.processors import (hide_line, strip_ansi, rm_header_dash, rm_export, clean_magics, hide_,
                                  strip_hidden_metadata, mv_exports)
    return [hide_line, strip_ansi, rm_header_dash, _showdoc_to_markdown, _quarto_options, rm_export, clean_magics,
            hide_, strip_hidden_metadata, mv_exports]

def _title_index(nb):
    "Index just after the notebook's H1 cell (0 if it has none)."
    for i, c in enumerate(nb.cells):
        if c.cell_type == 'markdown' and re.match(r'\s*# ', c.source): return i + 1
    return 0

def process_library(path, flags):
    "Execute library notebook `path` with `show_doc` cells added and apply nbdev's conventions."
    from execnb.nbio import read_nb
    from fastcore.xtras import working_directory
    from nbdev.process import NBProcessor
    from nbdev.processors import populate_language, add_show_docs
    os.environ['IN_TEST'] = '1'                                   # progress bars off, as under nbdev_test
    nb = read_nb(path)
    with working_directory(path.parent):
        NBProcessor(nb=nb, procs=[populate_language, add_show_docs, _Execute(nb, path, flags), *_nbdev_filters()],
                    process=True)
    return nb

def process_result(path, tmp):
    "Execute result notebook `path` with papermill (`smoke=True` when it has that parameter) and apply nbdev's conventions."
    import logging, papermill as pm
    from execnb.nbio import read_nb, mk_cell
    from nbdev.process import NBProcessor
    logging.getLogger('papermill').setLevel(logging.ERROR)       # papermill warns about every comment it cannot parse
    params = {'smoke': True} if 'smoke' in pm.inspect_notebook(str(path)) else {}
    how = '`-p smoke True`' if params else 'its default parameters'
    out = Path(tmp)/path.name
    try: pm.execute_notebook(str(path), str(out), parameters=params, kernel_name='python3', cwd=str(NBS), progress_bar=False)
    except Exception as e: raise DocsBuildError(f'{path.name}: the run with {how} failed: {e}') from e
    nb = read_nb(out)
    NBProcessor(nb=nb, procs=[_drop_papermill, *_nbdev_filters()], process=True)
    nb.cells.insert(_title_index(nb), mk_cell(NOTE.format(name=path.name, how=how), 'markdown'))
    nb.metadata.pop('papermill', None)
    return nb

def keep_run_outputs(outputs:Path, dest:Path):
    """Keep the tables and records a result notebook's smoke run wrote (not its fixtures, models or job folders) in `dest`, so that
    `tests/test_run_notebooks.py` checks them against the committed tables instead of running the notebook a second time."""
    shutil.rmtree(dest, ignore_errors=True)
    for f in outputs.rglob('*'):
        rel = f.relative_to(outputs)
        if f.is_file() and f.suffix in ('.csv', '.json', '.md') and not {'.smoke', 'runs'} & set(rel.parts):
            (dest/rel).parent.mkdir(parents=True, exist_ok=True); shutil.copy2(f, dest/rel)

def render(path, dest, flags):
    "Worker: execute and process one notebook, write it to `dest`; return (name, seconds)."
    from execnb.nbio import write_nb
    path, dest, start = Path(path), Path(dest), time.time()
    os.environ.update(QUIET_ENV)                                  # set before any cell imports tqdm or huggingface_hub
    with tempfile.TemporaryDirectory(prefix='stance_nb_docs_') as tmp:
        os.environ['STANCE_NB_OUTPUTS'] = str(Path(tmp)/'outputs')   # runs never write into the repository
        nb = process_result(path, tmp) if path.name.startswith('run_') else process_library(path, set(flags))
        if path.name.startswith('run_'): keep_run_outputs(Path(tmp)/'outputs', CACHE/'outputs'/path.stem)
    for c in nb.cells:
        if c.cell_type == 'code': c.setdefault('outputs', []); c.setdefault('execution_count', None)
        else: c.pop('outputs', None); c.pop('execution_count', None)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp_dest = dest.with_suffix('.tmp')
    write_nb(nb, tmp_dest)
    tmp_dest.replace(dest)
    return path.name, time.time() - start

# --- site: nothing below changes what is executed, so it is left out of the cache key ---------------------------

_CELL_KEYS = {'markdown': {'id', 'cell_type', 'metadata', 'source', 'attachments'}, 'raw': {'id', 'cell_type', 'metadata', 'source'},
              'code': {'id', 'cell_type', 'metadata', 'source', 'outputs', 'execution_count'}}

# show_doc puts its `[source](...)` link, floated right by quarto, before the heading; here it goes under it
_SOURCE_LINK = re.compile(r'^\[source\]\(([^)]*)\)\{[^}]*\}\s*\n\s*\n(#+ [^\n]*)\n', flags=re.M)

def _machine_paths():
    "(regex, placeholder) for each folder of the build machine an output may name, the most specific first."
    folders = {}
    for p, name in [(os.environ.get('STANCE_NB_DATA'), '$STANCE_NB_DATA'), (ROOT, '.'), (sys.prefix, '<venv>'),
                    (Path.home(), '~')]:
        if not p or str(Path(p)) == Path(p).anchor: continue      # never the file system's root
        for v in {str(p), os.path.realpath(p)}:
            if name != '<venv>' or not Path(v).is_relative_to(ROOT): folders.setdefault(v.rstrip('/'), name)
    pats = [(re.escape(f) + r'(?![\w.-]*\w)', name) for f, name in sorted(folders.items(), key=lambda x: -len(x[0]))]
    # temporary folders: tempfile's `tmpXXXXXXXX`, `prefix_XXXXXXXX` (this build's `stance_nb_docs_...`), pytest's
    tmp = '|'.join(sorted({re.escape(t.rstrip('/')) for t in (tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir()), '/tmp')}))
    pats.insert(0, (rf'(?:{tmp})/(?:tmp[a-z0-9_]{{8}}|[\w.-]+_[a-z0-9_]{{8}}|pytest-of-[\w.-]+/[\w.-]+)(?![\w.-]*\w)', '<tmp>'))
    return [(re.compile(r), name) for r, name in pats]

def _portable(text, paths, html=False):
    "`text` with the build machine's folders replaced by their placeholders (escaped when `text` is HTML or markdown)."
    for rx, name in paths: text = rx.sub((name.replace('<', '&lt;').replace('>', '&gt;') if html else name).replace('\\', '\\\\'), text)
    return text

def _page_outputs(outputs, paths):
    "What a page shows of a cell's outputs: no stderr (warnings, progress bars, logs), no machine-specific path."
    kept = []
    for o in outputs:
        if o.get('output_type') == 'stream':
            if o.get('name') == 'stderr': continue
            o['text'] = _portable(''.join(o['text']), paths)
        for mime, v in o.get('data', {}).items():
            if mime in ('text/plain', 'text/html', 'text/markdown'):
                o['data'][mime] = _portable(''.join(v), paths, html=mime != 'text/plain')
        kept.append(o)
    return kept

def _toctree(caption, names):
    return '```{toctree}\n:caption: ' + caption + '\n:maxdepth: 1\n\n' + '\n'.join(names) + '\n```\n'

def _write_if_changed(path, data):
    "Write `data` only when it differs, so Sphinx rebuilds only pages whose source changed."
    if not path.exists() or path.read_bytes() != data: path.write_bytes(data)

CARDS = ROOT/'results'/'cards'   # the committed dataset cards (`stance_nb cards`): the site links them and copies them under cards/

def _cards() -> str:
    "The home page's list of the committed dataset cards, as raw HTML links to `cards/<name>.html` ('' where there are none)."
    names = sorted(p.stem for p in CARDS.glob('*.html'))
    if not names: return ''
    links = ''.join(f'<li><a href="cards/{n}.html">{n}</a></li>' for n in names)
    return ('## Dataset cards\n\nEach registered dataset: source, licence, splits, labels, audits and the shortcut probes\' verdicts '
            '(`stance_nb cards`).\n\n<ul>' + links + '</ul>\n')

def stage(nbs, executed, src):
    "Copy the processed notebooks into the Sphinx source folder `src`, with the contents added to the home page."
    src.mkdir(parents=True, exist_ok=True)
    names = {p.stem for p in nbs}
    for stale in src.glob('*.ipynb'):
        if stale.stem not in names: stale.unlink()
    paths = _machine_paths()
    lib = [p.stem for p in nbs if p.stem != 'index' and not p.name.startswith('run_')]
    res = [p.stem for p in nbs if p.name.startswith('run_')]
    for p in nbs:
        nb = json.loads(executed[p.name].read_text(encoding='utf-8'))
        if p.stem == 'index':
            toc = _toctree('Library', lib) + '\n' + _toctree('Result notebooks', res)
            nb['cells'].append({'cell_type': 'markdown', 'metadata': {}, 'source': toc})
            if cards := _cards(): nb['cells'].append({'cell_type': 'markdown', 'metadata': {}, 'source': cards})
        nb['metadata'].setdefault('kernelspec', KERNELSPEC); nb['metadata'].setdefault('language_info', LANGUAGE_INFO)
        for i, c in enumerate(nb['cells']):                     # nbformat's schema: no extra keys, every cell an id
            if c['cell_type'] == 'markdown': c['source'] = _SOURCE_LINK.sub(r'\2\n\n[source](\1)\n', ''.join(c['source']))
            if c['cell_type'] == 'code': c['outputs'] = _page_outputs(c.get('outputs', []), paths)
            for k in set(c) - _CELL_KEYS[c['cell_type']]: del c[k]
            c.setdefault('id', f'{p.stem[:40]}-{i}'.replace('.', '-'))
        _write_if_changed(src/p.name, json.dumps(nb, indent=1, ensure_ascii=False).encode())

def build(out=ROOT/'_site', jobs=2, use_cache=True, only=None):
    "Execute what changed, stage the pages and run Sphinx; return the seconds each step took."
    t0 = time.time()
    flags = settings().get('tst_flags', '').split()
    nbs = doc_notebooks()
    executed, todo = {}, []
    for p in nbs:
        h = source_hash(p)
        dest, stamp = CACHE/'executed'/p.name, CACHE/'executed'/f'{p.stem}.sha256'
        executed[p.name] = dest
        fresh = use_cache and dest.exists() and stamp.exists() and stamp.read_text() == h
        if not fresh and (only is None or p.stem in only): todo.append((p, dest, stamp, h))
        elif not dest.exists(): raise DocsBuildError(f'{p.name}: not executed yet; build without --only first')
    timings = {}
    if todo:
        print(f'executing {len(todo)} of {len(nbs)} notebooks with {jobs} worker(s)', flush=True)
        # every notebook in a fresh process (nothing one notebook sets reaches the next), forked from a server that imported the heavy
        # libraries once: the quiet settings first, since some libraries read them when imported
        os.environ.update(QUIET_ENV)
        # each worker gets its share of the cores: torch's default pool (every core) in two workers at once made the result notebooks
        # seven times slower on two cores (two `run_ezstance` smoke runs side by side: 387 s with the default pool, 56 s with one thread each)
        share = str(max(1, available_cpus() // jobs))
        for var in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS'): os.environ.setdefault(var, share)
        ctx = get_context('forkserver')
        ctx.set_forkserver_preload(PRELOAD)
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, max_tasks_per_child=1) as ex:
            todo.sort(key=lambda t: not t[0].name.startswith('run_'))   # the long result runs first, so no worker idles at the end
            futs = {ex.submit(render, str(p), str(dest), flags): (p, stamp, h) for p, dest, stamp, h in todo}
            errors = []
            for f in as_completed(futs):
                p, stamp, h = futs[f]
                try: name, secs = f.result()
                except Exception as e: errors.append(f'{p.name}: {e}'); print(f'  FAILED {p.name}', flush=True); continue
                stamp.write_text(h); timings[name] = secs
                print(f'  {name}: {secs:.1f} s', flush=True)
        if errors: raise DocsBuildError('notebooks that did not render:\n' + '\n'.join(errors))
    t1 = time.time()
    stage(nbs, executed, CACHE/'src')
    # Sphinx builds inside the cache (MyST-NB writes a `jupyter_execute/` folder next to its output folder)
    cmd = [sys.executable, '-m', 'sphinx', '-b', 'html', '-q', '-c', str(CONF), '-d', str(CACHE/'doctrees'),
           str(CACHE/'src'), str(CACHE/'html')]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    sys.stderr.write(r.stderr)
    if r.returncode: raise DocsBuildError(f'sphinx failed ({r.returncode}): {" ".join(cmd)}\n{r.stdout}')
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(CACHE/'html', out, ignore=shutil.ignore_patterns('.buildinfo', '.doctrees'))
    if CARDS.is_dir(): shutil.copytree(CARDS, out/'cards', ignore=shutil.ignore_patterns('*.md'))   # the pages and the figures they link
    t2 = time.time()
    print(f'site: {out}/index.html ({len(nbs)} pages); execute {t1 - t0:.1f} s, sphinx {t2 - t1:.1f} s', flush=True)
    return {'execute': t1 - t0, 'sphinx': t2 - t1, 'notebooks': timings}

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--out', default=str(ROOT/'_site'), help='folder the site is written to')
    ap.add_argument('--jobs', type=int, default=2, help='notebooks executed at once')
    ap.add_argument('--no-cache', action='store_true', help='execute every notebook again')
    ap.add_argument('--only', default=None, help='comma-separated notebook names to (re)execute, e.g. 02_metrics')
    a = ap.parse_args()
    try: build(Path(a.out), a.jobs, not a.no_cache, set(a.only.split(',')) if a.only else None)
    except DocsBuildError as e: sys.exit(f'docs build failed: {e}')

if __name__ == '__main__': main()
