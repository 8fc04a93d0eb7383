"""CPU work done once: a test set's attack and a dataset's tokenization are computed by the first run or worker that needs them
and read back by every later one (another process, another run), keyed by what determines them, never served to another input."""
import json, os, subprocess, sys, textwrap, warnings
from pathlib import Path
import numpy as np
import pandas as pd
import pytest

from stance_nb.attacks import ATTACKS, apply_attack, attack_texts, register_attack, strings_sha256

CALLS = []

def _counted_upper(texts, seed=0, suffix=''):
    "A test attack that records each call: upper-case every string, then add `suffix`."
    CALLS.append(list(texts))
    return [t.upper() + suffix for t in texts]

@pytest.fixture
def cache(tmp_path, monkeypatch):
    "A cache folder of this test's own, and the counting attack registered for the test alone (the registry every other test reads stays as shipped)."
    from stance_nb.train import batches
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path/'cache'))
    CALLS.clear(); batches._TOKEN_CACHE.clear()
    register_attack('_counted_upper')(_counted_upper)
    yield tmp_path/'cache'/'stance_nb'
    ATTACKS.pop('_counted_upper', None)

FRAME = pd.DataFrame(dict(split='test', id=['1', '2', '3'], target=['wind', 'wind', 'coal'], text=['we want it', 'no', 'we want it'],
                          label=['FAVOR', 'AGAINST', 'FAVOR']))

def test_attack_computed_once_and_read_back(cache):
    "The second run of an attack on the same strings, seed and options calls no attack code and gives the same table."
    first = apply_attack(FRAME, '_counted_upper', seed=1)
    assert len(CALLS) == 2   # target and text, each once over their distinct strings
    again = apply_attack(FRAME, '_counted_upper', seed=1)
    assert len(CALLS) == 2 and again.equals(first) and again.attrs == first.attrs
    assert first.text.tolist() == ['WE WANT IT', 'NO', 'WE WANT IT']
    assert len(list((cache/'attacks').glob('_counted_upper-*.json'))) == 2

def test_attack_cache_keyed_by_seed_options_and_strings(cache):
    "Another seed, other options or other strings are attacked anew, never read from another's file."
    apply_attack(FRAME, '_counted_upper', seed=1)
    n = len(CALLS)
    apply_attack(FRAME, '_counted_upper', seed=2); assert len(CALLS) == n + 2
    out = apply_attack(FRAME, '_counted_upper', seed=1, suffix='!'); assert len(CALLS) == n + 4
    assert out.text.tolist()[0] == 'WE WANT IT!'
    other = FRAME.assign(text=['we want it', 'no', 'yes'])
    apply_attack(other, '_counted_upper', seed=1, columns=('text',)); assert len(CALLS) == n + 5
    apply_attack(FRAME, '_counted_upper', seed=1, cache=False); assert len(CALLS) == n + 7

def test_damaged_attack_cache_is_rebuilt(cache):
    "A cut-short cache file or one with another count of strings: a warning naming it, the attack runs again, the file is replaced."
    first = apply_attack(FRAME, '_counted_upper', seed=1, columns=('text',))
    f, = (cache/'attacks').glob('_counted_upper-*.json')
    for damage in (f.read_text()[:20], json.dumps(dict(out=['ONE']))):
        f.write_text(damage)
        with pytest.warns(UserWarning, match=rf'attack cache {f} is damaged .*attacking again'):
            again = apply_attack(FRAME, '_counted_upper', seed=1, columns=('text',))
        assert again.equals(first) and json.loads(f.read_text())['out'] == ['WE WANT IT', 'NO']

def test_attack_with_options_that_are_not_json_is_not_cached(cache):
    "Options that cannot name a file (an object): the attack runs each time, nothing is written."
    class Odd: pass
    @register_attack('_odd_options')
    def odd(texts, seed=0, thing=None): CALLS.append(texts); return list(texts)
    try:
        attack_texts('_odd_options', ['a'], 1, thing=Odd()); attack_texts('_odd_options', ['a'], 1, thing=Odd())
        assert len(CALLS) == 2 and not (cache/'attacks').exists()
    finally: ATTACKS.pop('_odd_options')

def test_negation_read_back_in_another_process(cache):
    "The negation attack of a test set, computed in one process, is what the next process reads (a marked cache file shows it)."
    code = textwrap.dedent("""
        import json
        import pandas as pd
        from stance_nb.attacks import apply_attack
        texts = [f"the council said plan {i} would cut costs for {i % 7} towns" for i in range(400)]
        df = pd.DataFrame(dict(split='test', id=[str(i) for i in range(400)], target='plans', text=texts, label='FAVOR'))
        print(json.dumps(apply_attack(df, 'negation', seed=3, columns=('text',)).text.tolist()))
    """)
    env = {**os.environ, 'XDG_CACHE_HOME': str(cache.parent), 'STANCE_NB_QUIET': '1'}
    def run(): return json.loads(subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, check=True).stdout.splitlines()[-1])
    first = run()
    assert first[0] != 'the council said plan 0 would cut costs for 0 towns' and len(set(first)) == 400
    f, = (cache/'attacks').glob('negation-*.json')
    d = json.loads(f.read_text()); assert d['out'] == first
    marked = [f'marked {i}' for i in range(400)]
    f.write_text(json.dumps({**d, 'out': marked, 'sha256': strings_sha256(marked)}))   # a file written as the package writes one
    assert run() == marked


# ================================================================ tokenization

def _tok():
    from stance_nb.test_utils import tiny_bert
    return tiny_bert(None)[1]

def test_tokenization_read_back_without_the_tokenizer(cache, monkeypatch):
    "A second run (memory cleared: another process) reads the encodings from the shared folder; the tokenizer is not called."
    from stance_nb.train import batches, token_cache_dir, tokenize_pairs
    assert token_cache_dir() == cache/'tokenized'
    tok = _tok()
    enc = tokenize_pairs(tok, ['we support it', 'bad'], ['wind farms', 'coal'], 16, cache_dir=token_cache_dir())
    batches._TOKEN_CACHE.clear()
    def refuse(*a, **kw): raise AssertionError('tokenized again')
    monkeypatch.setattr(type(tok), '__call__', refuse)
    again = tokenize_pairs(tok, ['we support it', 'bad'], ['wind farms', 'coal'], 16, cache_dir=token_cache_dir())
    assert {k: [r.tolist() for r in v] for k, v in again.items()} == {k: [r.tolist() for r in v] for k, v in enc.items()}

def test_damaged_tokenization_cache_is_rebuilt(cache):
    "A cut-short file, or one whose fields disagree with its offsets: a warning naming it; the encodings are computed and replaced."
    from stance_nb.train import batches, token_cache_dir, tokenize_pairs
    tok = _tok()
    args = (['we support it', 'bad'], ['wind farms', 'coal'], 16)
    enc = tokenize_pairs(tok, *args, cache_dir=token_cache_dir())
    f, = token_cache_dir().glob('*.npz')
    good = f.read_bytes()
    for damage in (good[:len(good)//2], None):
        if damage is None:   # a valid archive whose tokens are fewer than its offsets count
            z = dict(np.load(f)); z['input_ids_flat'] = z['input_ids_flat'][:-1]
            with open(f, 'wb') as fh: np.savez(fh, **z)
        else: f.write_bytes(damage)
        batches._TOKEN_CACHE.clear()
        with pytest.warns(UserWarning, match=rf'tokenized data cache {f} is damaged'):
            again = tokenize_pairs(tok, *args, cache_dir=token_cache_dir())
        assert [r.tolist() for r in again['input_ids']] == [r.tolist() for r in enc['input_ids']]
        assert f.read_bytes() == good

def test_disk_cache_changes_no_run_id():
    "Whether tokenized data is kept on disk is not part of a run's identity (runs made before it keep their ids)."
    from stance_nb.train import TrainConfig
    from stance_nb.systems.mdl import MDLConfig
    for cls in (TrainConfig, MDLConfig):
        a = cls(model='m')
        assert a.disk_cache and a.identity() == cls(model='m', disk_cache=False).identity() and a.identity()['disk_cache'] is False
