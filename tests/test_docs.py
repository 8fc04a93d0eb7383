"""Build the documentation site (`tools/build_docs.py`) and open every notebook's page in headless Chromium.

Each page must show its notebook's title, the API sections of its exported functions and classes, as many tables
and figures as its executed notebook has, and no error text or leftover nbdev directive; no page may show the build
machine's folders, warnings or progress bars. Skipped when Chromium is not installed (Debian: `apt-get install -y
chromium`).
"""
import ast, json, os, re, shutil, subprocess, sys, tempfile
from html.parser import HTMLParser
from pathlib import Path
import pytest
from browser import Browser

ROOT = Path(__file__).resolve().parents[1]
SITE, SRC = ROOT/'_site', ROOT/'.docs_cache'/'src'
CHROMIUM = next((shutil.which(b) for b in ('chromium', 'chromium-browser', 'google-chrome') if shutil.which(b)), None)
NBS = sorted(p for p in (ROOT/'nbs').glob('*.ipynb') if not p.name.startswith(('_', '.')))

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None, reason='Chromium is not installed (Debian: apt-get install -y chromium); '
                                 'the docs test opens the built pages in a headless browser')]

class _Page(HTMLParser):
    "The parts of a rendered page the checks need: title, visible text, headings, tables, images."
    def __init__(self, html):
        super().__init__()
        self.title, self.text, self.headings, self.tables, self.imgs = '', [], [], 0, 0
        self.shown = []       # visible text but the notebook's own code (cell inputs, API signatures): prose and outputs
        self._skip, self._in, self._heading, self._divs, self._pre = 0, None, None, [], 0
        self.feed(html)
    def handle_starttag(self, tag, attrs):
        if tag == 'div': self._divs.append('cell_output' in (dict(attrs).get('class') or '').split())
        elif tag == 'pre': self._pre += 1
        if tag in ('script', 'style', 'svg'): self._skip += 1
        elif tag == 'title' and not self.title: self._in = 'title'
        elif tag in ('h1', 'h2', 'h3', 'h4'): self._heading = []
        elif tag == 'table': self.tables += 1
        elif tag == 'img' and 'logo' not in (dict(attrs).get('class') or ''): self.imgs += 1
    def handle_endtag(self, tag):
        if tag == 'div' and self._divs: self._divs.pop()
        elif tag == 'pre': self._pre = max(self._pre - 1, 0)
        if tag in ('script', 'style', 'svg'): self._skip -= 1
        elif tag == 'title': self._in = None
        elif tag in ('h1', 'h2', 'h3', 'h4') and self._heading is not None:
            self.headings.append(''.join(self._heading).strip().rstrip('#¶').strip()); self._heading = None
    def handle_data(self, data):
        if self._skip: return
        if self._in == 'title': self.title += data
        if self._heading is not None: self._heading.append(data)
        self.text.append(data)
        if not self._pre or any(self._divs): self.shown.append(data)

def _title(nb):
    "The notebook's H1."
    for c in nb['cells']:
        m = c['cell_type'] == 'markdown' and re.match(r'\s*# (.+)', ''.join(c['source']))
        if m: return m.group(1).strip()

def _exported_names(nb):
    "Public functions and classes defined in `#| export` cells: each gets an API section (nbdev's `show_doc`)."
    names = []
    for c in nb['cells']:
        src = ''.join(c['source'])
        if c['cell_type'] != 'code' or not re.match(r'\s*#\|\s*exports?\s*$', src.splitlines()[0] if src else ''): continue
        names += [t.name for t in ast.parse(src).body
                  if isinstance(t, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not t.name.startswith('_')]
    return names

def _norm(s): return ' '.join(s.split())

def _rendered_outputs(nb):
    "Tables, figures and printed lines of the executed, processed notebook: the page must show at least these."
    tables = figures = printed_tables = 0
    printed = []
    for c in nb['cells']:
        src = ''.join(c['source'])
        if c['cell_type'] == 'markdown': tables += len(re.findall(r'^\|?\s*:?-{3,}:?\s*\|', src, flags=re.M)); continue
        for o in c.get('outputs', []):
            data = o.get('data', {})
            if 'image/png' in data or 'image/svg+xml' in data: figures += 1
            elif '<table' in ''.join(data.get('text/html', '')): tables += ''.join(data['text/html']).count('<table')
            elif o.get('output_type') == 'stream':
                text = ''.join(o['text'])
                printed_tables += len(re.findall(r'^\|?\s*:?-{3,}:?\s*\|', text, flags=re.M))
                printed += [_norm(l)[:80] for l in text.splitlines()[:1] if _norm(l)]
    return tables, figures, printed_tables, printed

@pytest.fixture(scope='module')
def site():
    "Build the site (only notebooks whose inputs changed are executed again) and load every page in Chromium."
    r = subprocess.run([sys.executable, str(ROOT/'tools'/'build_docs.py')], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, f'docs build failed:\n{r.stdout[-3000:]}\n{r.stderr[-5000:]}'
    browser = Browser(CHROMIUM)
    try: opened = {p: browser.open((SITE/f'{p.stem}.html').as_uri()) for p in NBS}   # on a laptop's screen, 1366 × 768
    finally: browser.close()
    pages = {p: _Page(o.pop('dom')) for p, o in opened.items()}
    for p, page in pages.items(): page.layout = opened[p]
    return pages

def test_every_notebook_has_a_page(site):
    assert {p.stem for p in NBS} <= {p.stem for p in SITE.glob('*.html')}
    assert any(p.name.startswith('run_') for p in NBS) and len(NBS) > 10

@pytest.mark.parametrize('nb_path', NBS, ids=[p.stem for p in NBS])
def test_page_renders(site, nb_path):
    page, nb = site[nb_path], json.loads(nb_path.read_text(encoding='utf-8'))
    title = _title(nb)
    assert title and page.title.startswith(title), f'{nb_path.stem}: browser title {page.title!r}, expected {title!r}'
    text = ' '.join(page.text)
    for bad in ('Traceback', 'Exception encountered', 'nbdev_export()'):
        assert bad not in text, f'{nb_path.stem}: page shows {bad!r}'
    assert not re.search(r'\bError\b', text), f'{nb_path.stem}: page shows error text: ' + \
        re.search(r'.{0,200}\bError\b.{0,200}', text, flags=re.S).group(0)
    assert not re.search(r'^\s*#\|', text, flags=re.M), f'{nb_path.stem}: an nbdev directive comment is shown'
    missing = [n for n in _exported_names(nb) if n not in page.headings]
    assert not missing, f'{nb_path.stem}: no API section (signature + docments) for {missing}'
    tables, figures, printed_tables, printed = _rendered_outputs(json.loads((SRC/nb_path.name).read_text(encoding='utf-8')))
    if nb_path.name.startswith('run_'): assert tables + printed_tables >= 1, f'{nb_path.stem}: the smoke run showed no table'
    assert page.tables >= tables, f'{nb_path.stem}: {page.tables} tables shown, the notebook has {tables}'
    assert page.imgs >= figures, f'{nb_path.stem}: {page.imgs} figures shown, the notebook has {figures}'
    shown = _norm(text)
    lost = [l for l in printed if l not in shown]
    assert not lost, f'{nb_path.stem}: printed output missing from the page: {lost[:3]}'

@pytest.mark.parametrize('nb_path', NBS, ids=[p.stem for p in NBS])
def test_page_fits_a_laptop_screen(site, nb_path):
    "At a laptop's width (1366 px) no page needs sideways scrolling: a wide table or code line scrolls in its own box."
    lay = site[nb_path].layout
    assert lay['overflow'] <= 0, f"{nb_path.stem}: {lay['overflow']} px wider than the screen: {lay['wide']}"

def _folders():
    "The build machine's folders, as a page could show them: the repository, data, home, temporary and venv folders."
    out = {str(ROOT), os.path.realpath(ROOT), sys.prefix, os.path.realpath(sys.prefix), tempfile.gettempdir() + '/'}
    if os.environ.get('STANCE_NB_DATA'): out |= {os.environ['STANCE_NB_DATA'], os.path.realpath(os.environ['STANCE_NB_DATA'])}
    if len(Path.home().parts) > 1: out.add(str(Path.home()))
    return sorted(out, key=len, reverse=True)

_START = r'(?<![\w.~:/<$-])'      # the start of an absolute path, not the middle of a URL or of a relative path
LEAKS = [('a path of the build machine', re.compile(_START + '(?:' + '|'.join(re.escape(f.rstrip('/')) for f in _folders())
                                                     + r')(?![\w-])')),
         ('an absolute path', re.compile(_START + r'/(?:tmp|home|root|work|Users)/\S')),
         ('warning text', re.compile(r'\b[A-Z]\w*Warning\b:|\b(?:User|Tqdm|Future|Deprecation|Runtime|Pandas\d*)Warning\b|Warning:')),
         ('a progress bar', re.compile(r'\d(?:it|s)/(?:s|it)\]|\?it/s\]|\d+%\|[^|\n]{0,40}\|\s*\d+/\d+'))]

def _leaks(name, text):
    "Where `text` (a page's visible text) shows a folder of the build machine, a warning or a progress bar."
    return [f'{name}: {what}: ...{text[max(m.start() - 100, 0):m.end() + 100]}...'
            for what, rx in LEAKS for m in list(rx.finditer(text))[:3]]

@pytest.mark.parametrize('nb_path', NBS, ids=[p.stem for p in NBS])
def test_page_shows_no_machine_paths_or_warnings(site, nb_path):
    "A page shows prose and results, not the build machine's folders, warnings or progress bars."
    # cell inputs and API signatures, the notebook's own code, are not scanned: `'/tmp/evil.txt'` there is an argument
    found = _leaks(nb_path.stem, ''.join(site[nb_path].shown))
    assert not found, '\n'.join(found)

def test_other_pages_show_no_machine_paths_or_warnings(site):
    "Sphinx's own pages (index of names, search) too."
    pages = sorted(set(SITE.rglob('*.html')) - {SITE/f'{p.stem}.html' for p in NBS})
    assert pages, f'no other page in {SITE}'
    found = [l for p in pages for l in _leaks(str(p.relative_to(SITE)), ''.join(_Page(p.read_text(encoding='utf-8')).shown))]
    assert not found, '\n'.join(found)
