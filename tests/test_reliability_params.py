"""Parameters: each result notebook stops at once on an unknown or mistyped parameter, listing the valid
ones, and rejects invalid values (type, range, dataset or model name) before any work starts."""
import functools, json, os, re, time
from pathlib import Path
import pytest

NBS = Path(__file__).resolve().parents[1]/'nbs'
RUN_NBS = sorted(p.stem for p in NBS.glob('run_*.ipynb'))

@functools.cache
def _code_cells(nb:str) -> list[dict]:
    "The notebook's code cells, read once."
    return [c for c in json.loads((NBS/f'{nb}.ipynb').read_text(encoding='utf-8'))['cells'] if c['cell_type'] == 'code']

def _params(nb:str) -> list[str]:
    "The names the notebook's `parameters` cell defines."
    cells = _code_cells(nb)
    assert 'parameters' in cells[0].get('metadata', {}).get('tags', []), f'{nb}: first code cell is not tagged parameters'
    return re.findall(r'^(\w+)\s*[:=]', ''.join(cells[0]['source']), flags=re.M)

class NotebookKernel:
    """One kernel for every notebook, reused across cases (starting one and importing the package takes most of a case): each case resets
    the namespace, runs the notebook's parameters cell, the parameters papermill would inject, then the following code cells up to `upto`;
    it reports the first failing one."""
    def __init__(self, env:dict):
        from jupyter_client.manager import start_new_kernel
        self.km, self.kc = start_new_kernel(kernel_name='python3', cwd=str(NBS), env={**os.environ, **env})
        assert self._exec('get_ipython().clean_names = set(get_ipython().user_ns)')['status'] == 'ok'
    def _exec(self, code:str) -> dict:
        return self.kc.execute_interactive(code, timeout=120, output_hook=lambda msg: None, store_history=False)['content']
    def run(self, nb:str, params:dict, upto:int=2):
        "(index of the first code cell of `nb` that failed or None, ename, evalue) for `params`."
        from papermill.translators import PythonTranslator
        cells = [''.join(c['source']) for c in _code_cells(nb)]
        # the names of the last case go (`%reset -f` does the same and collects garbage too: 0.6 s a case)
        assert self._exec('for _n in set(get_ipython().user_ns) - get_ipython().clean_names: del get_ipython().user_ns[_n]')['status'] == 'ok'
        assert self._exec(cells[0])['status'] == 'ok'
        assert self._exec(PythonTranslator.codify(params))['status'] == 'ok'
        for i in range(1, upto+1):
            r = self._exec(cells[i])
            if r['status'] == 'error': return i, r['ename'], r['evalue']
        return None, None, None
    def close(self): self.kc.stop_channels(); self.km.shutdown_kernel(now=True)

@pytest.fixture(scope='module')
def kernels(tmp_path_factory):
    "The module's one kernel (`kernels.run(nb, params)`), writing under `kernels.outputs`."
    out = tmp_path_factory.mktemp('nb_outputs')
    k = NotebookKernel(dict(STANCE_NB_OUTPUTS=str(out), STANCE_NB_QUIET='1'))
    k.outputs = out
    yield k
    k.close()

# one invalid value per check kind, for each notebook: (parameters, text the error must contain)
INVALID = {
    'run_xstance': [({'seeds': 'one'}, 'seeds'), ({'lr': -1.0}, 'lr=-1.0: expected > 0'), ({'epochs': 2.5}, 'epochs=2.5: expected int'),
                    ({'rows': ['bert']}, "rows: unknown ['bert']"), ({'fasttext_preset': 'nope'}, "fasttext_preset: unknown ['nope']"),
                    ({'smoke': 'yes'}, 'smoke'), ({'tables': ['6']}, "tables: unknown ['6']"), ({'run_name': '../../escape'}, 'no path separators')],
    'run_cheese': [({'seeds': [1, 1]}, 'distinct'), ({'seeds': 'one'}, 'seeds'), ({'n_folds': 1}, 'n_folds=1: expected >= 2'),
                   ({'rows': ['gbert']}, "rows: unknown ['gbert']"), ({'fold_order': 'random'}, "fold_order: unknown ['random']"),
                   ({'lr': 'fast'}, 'lr'), ({'run_name': '../../escape'}, 'no path separators')],
    'run_benchmark': [({'datasets': ['fnc1', 'nope']}, "datasets: unknown ['nope']"), ({'rows': ['BERT']}, "rows: unknown ['BERT']"),
                      ({'n_jobs': 0}, 'n_jobs=0: expected > 0'), ({'seeds': 'one'}, 'seeds'), ({'ratios': [0.0, 1.0]}, 'ratios'),
                      ({'run_name': '../../escape'}, 'no path separators'), ({'lr': float('inf')}, 'lr=inf'), ({'tables': ['9']}, "tables: unknown ['9']"),
                      ({'seeds': [1, 1]}, 'distinct'), ({'fasttext_preset': 'nope'}, "fasttext_preset: unknown ['nope']")],
    'run_ezstance': [({'tables': ['11']}, "tables: unknown ['11']"), ({'models': ['GPT-9']}, "models: unknown ['GPT-9']"),
                     ({'epochs': '4'}, "epochs='4': expected int"), ({'domains': ['XX']}, "domains: unknown ['XX']"),
                     ({'seeds': [1, 1]}, 'distinct'), ({'head': 'old'}, "head: unknown ['old']"), ({'run_name': '../x'}, 'no path separators')],
    'run_robustness': [({'datasets': ['nope']}, "datasets: unknown ['nope']"), ({'n_samples': 0}, 'n_samples=0: expected > 0'),
                       ({'n_samples': 'many'}, 'n_samples'), ({'run_name': '../../escape'}, 'no path separators'), ({'smoke': 1}, 'smoke')],
    'run_leaderboard': [({'models': ['nope']}, "models: unknown ['nope']"), ({'datasets': ['nope']}, "datasets: unknown ['nope']"),
                        ({'seeds': [1, 1]}, 'distinct'), ({'seeds': 'one'}, 'seeds'), ({'run_name': '../../escape'}, 'no path separators'),
                        ({'alpha': 1.5}, "alpha: unknown [1.5]"), ({'n_resamples': 10}, 'n_resamples=10: expected >= 100'),
                        ({'smoke': 'yes'}, 'smoke'), ({'attacks': ['bogus']}, "attacks: unknown ['bogus']"),
                        ({'max_train': 0}, 'max_train=0: expected > 0'), ({'max_train': 50, 'ratios': [0.1]}, 'max_train and ratios'),
                        ({'datasets': ['ezstance']}, "dataset 'ezstance':"), ({'reuse_from': ['/nonexistent/store']}, 'reuse_from: no job store at'),
                        ({'nli_model': 'roberta-large-mnli', 'models': ['majority']}, 'is for nli, nli-ft: add one of them to models'),
                        ({'nli_preset': 'huge', 'models': ['nli-ft']}, "nli_preset: unknown ['huge']"),
                        ({'llm_model': 'meta-llama/Llama-2-7b-chat-hf', 'models': ['majority']}, 'is for llm: add it to models'),
                        ({'llm_endpoint': {'model': 'x'}, 'models': ['llm']}, "an LLM endpoint needs 'base_url' and 'model'"),
                        ({'encoder_preset': 'huge'}, "encoder_preset: unknown ['huge']")],
    'run_transfer': [({'models': ['mdl']}, "models: unknown ['mdl']"), ({'datasets': ['ibmcs']}, 'a transfer needs two datasets or more'),
                     ({'datasets': ['ibmcs', 'csv']}, "parameter datasets: ['csv']: your own files have no label map"), ({'seeds': [1, 1]}, 'distinct'),
                     ({'n_resamples': 10}, 'n_resamples=10: expected >= 100'), ({'run_name': '../../escape'}, 'no path separators'),
                     ({'smoke': 'yes'}, 'smoke'), ({'max_train': 0}, 'max_train=0: expected > 0')],
}
FIRST_CHECK_CELL = 1   # code cell 0 holds the parameters; validation must fail in the next one

def test_all_notebooks_covered():
    assert set(RUN_NBS) == set(INVALID), f'result notebooks without parameter tests: {sorted(set(RUN_NBS) - set(INVALID))}'

def test_unknown_parameter_papermill(tmp_path, monkeypatch):
    "Through papermill itself: a mistyped parameter stops the run in the cell after the parameters, writing nothing."
    import papermill as pm
    nb = 'run_xstance'
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'outputs')); monkeypatch.setenv('STANCE_NB_QUIET', '1')
    with pytest.raises(pm.PapermillExecutionError) as ei:
        pm.execute_notebook(str(NBS/f'{nb}.ipynb'), str(tmp_path/'out.ipynb'), parameters={'seed': 3}, kernel_name='python3',
                            cwd=str(NBS), progress_bar=False)
    assert ei.value.ename == 'NameError' and "unknown parameter(s) ['seed']" in ei.value.evalue and "'seeds'" in ei.value.evalue
    executed = json.loads((tmp_path/'out.ipynb').read_text(encoding='utf-8'))
    code = [c for c in executed['cells'] if c['cell_type'] == 'code' and 'injected-parameters' not in c['metadata'].get('tags', [])]
    assert [i for i, c in enumerate(code) if any(o.get('output_type') == 'error' for o in c.get('outputs', []))] == [FIRST_CHECK_CELL]
    assert not any(p.is_file() for p in (tmp_path/'outputs').rglob('*'))

@pytest.mark.parametrize('nb', RUN_NBS)
def test_unknown_parameter(nb, kernels):
    "A mistyped name stops in the cell after the parameters with the list of valid names."
    valid = _params(nb)
    typo = valid[0] + '_typo'
    cell, ename, evalue = kernels.run(nb, {typo: 1})
    assert ename == 'NameError' and typo in evalue, (ename, evalue)
    for v in valid: assert repr(v) in evalue, f'{nb}: the message does not list the valid parameter {v!r}: {evalue}'
    assert cell == FIRST_CHECK_CELL, f'{nb}: stopped in code cell {cell}, not right after the parameters'

@pytest.mark.parametrize('nb,params,want', [(nb, p, w) for nb, cases in INVALID.items() for p, w in cases],
                         ids=[f"{nb}-{'-'.join(p)}={list(p.values())[0]}" for nb, cases in INVALID.items() for p, _ in cases])
def test_invalid_value(nb, params, want, kernels):
    "A wrong type, an out-of-range number or an unknown dataset/model name stops before any work, with a clear message."
    if nb not in RUN_NBS: pytest.skip(f'{nb} does not exist')
    cell, ename, evalue = kernels.run(nb, params)
    assert cell is not None, f'{nb} {params}: accepted (the first cells after the parameters ran without error)'
    assert ename in ('ValueError', 'TypeError', 'KeyError'), f'{nb} {params}: {ename}: {evalue}'
    assert want in evalue, f'{nb} {params}: {evalue}'
    assert cell == FIRST_CHECK_CELL, f'{nb} {params}: validation failed only in code cell {cell}, not right after the parameters'

def test_nothing_written(kernels):
    "No case above wrote a file before failing."
    assert not any(p.is_file() for p in kernels.outputs.rglob('*')), sorted(kernels.outputs.rglob('*'))
