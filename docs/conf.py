"Sphinx configuration of the documentation site; `python tools/build_docs.py` stages the notebooks and calls Sphinx."
from configparser import ConfigParser
from pathlib import Path

_cfg = ConfigParser(delimiters=['='])
_cfg.read(Path(__file__).resolve().parents[1]/'settings.ini', encoding='utf-8')
_cfg = _cfg['DEFAULT']

project, author, copyright, release = _cfg['title'], _cfg['author'], _cfg['copyright'], _cfg['version']
html_title = f"{project} {release}"
html_theme = 'furo'
html_theme_options = {'source_repository': _cfg['git_url'] + '/', 'source_branch': _cfg['branch'], 'source_directory': 'nbs/'}
extensions = ['myst_nb']
nb_execution_mode = 'off'                          # tools/build_docs.py executes (and caches) the notebooks
nb_merge_streams = True
nb_output_stderr = 'remove'                        # warnings and progress bars are not page content (build_docs drops them too)
nb_render_markdown_format = 'gfm'                  # Markdown outputs (IPython.display.Markdown) as GitHub's, tables included; MyST-NB's default, CommonMark, has none
myst_enable_extensions = ['attrs_inline', 'colon_fence', 'deflist']
myst_heading_anchors = 3
exclude_patterns = ['**.ipynb_checkpoints']
suppress_warnings = ['myst.header', 'misc.highlighting_failure']
smartquotes = False                                # titles and code-like prose exactly as in the notebooks
html_static_path, html_css_files = ['_static'], ['wide.css']   # wide outputs scroll in their own box (docs/_static/wide.css)
