"Execute every result notebook (`nbs/run_*.ipynb`) with its smoke parameters through papermill's Python API."
import json, os, re
from pathlib import Path
import pytest

NBS = Path(__file__).resolve().parents[1]/'nbs'
RUN_NBS = sorted(NBS.glob('run_*.ipynb'))

def _parameters_cell(nb_path):
    nb = json.loads(nb_path.read_text(encoding='utf-8'))
    code = [c for c in nb['cells'] if c['cell_type'] == 'code']
    return code[0] if code else None

def test_result_notebooks_exist():
    assert {p.name for p in RUN_NBS} >= {'run_xstance.ipynb', 'run_cheese.ipynb', 'run_ezstance.ipynb', 'run_benchmark.ipynb'}

@pytest.mark.parametrize('nb', RUN_NBS, ids=[p.stem for p in RUN_NBS])
def test_parameters_cell_first(nb):
    "papermill injects parameters after the cell tagged `parameters`: it must be the first code cell."
    cell = _parameters_cell(nb)
    assert cell is not None and 'parameters' in cell.get('metadata', {}).get('tags', []), f'{nb.name}: first code cell is not tagged parameters'

@pytest.mark.parametrize('nb', RUN_NBS, ids=[p.stem for p in RUN_NBS])
def test_run_notebook_smoke(nb, tmp_path, monkeypatch):
    "The notebook runs end to end with `smoke=True` (fixtures, tiny models), writing only under a temporary outputs folder."
    import papermill as pm
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'outputs'))
    monkeypatch.setenv('STANCE_NB_QUIET', '1')
    smoke = {'smoke': True} if re.search(r'^smoke\s*[:=]', ''.join(_parameters_cell(nb)['source']), flags=re.M) else {}
    pm.execute_notebook(str(nb), str(tmp_path/nb.name), parameters=smoke, kernel_name='python3', cwd=str(NBS), progress_bar=False)
    assert any((tmp_path/'outputs').rglob('*.json')), f'{nb.name} wrote no run record'

def test_unknown_parameter_fails(tmp_path):
    "A mistyped parameter stops the run at once instead of being silently ignored."
    import papermill as pm
    if not RUN_NBS: pytest.skip('no result notebooks')
    nb = NBS/'run_xstance.ipynb'
    with pytest.raises(Exception, match='lr_typo'):
        pm.execute_notebook(str(nb), str(tmp_path/'out.ipynb'), parameters={'lr_typo': 1e-3}, kernel_name='python3', cwd=str(NBS), progress_bar=False)
