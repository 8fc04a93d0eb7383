"""The batch size is global: two CPU processes (`ACCELERATE_USE_CPU=true torchrun --nproc_per_node 2`, gloo) train with the same effective
batch and the same number of optimizer steps as one process, each process taking half of every batch: the transformer trainer and
one SDL/MDL job alike."""
import json, os, socket, subprocess, sys, textwrap
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]

_CHILD = textwrap.dedent('''
    import json, sys, torch
    torch.set_num_threads(1)
    from stance_nb.train import TrainConfig, train_classifier
    from stance_nb.test_utils import synthetic_stance
    a = json.loads(sys.argv[1])
    r = train_classifier(synthetic_stance(20, seed=0), TrainConfig(**a['cfg']), name='procs', out_dir=a['out'], save_model=False)
    if r.record is not None and r.fit.accelerator.is_main_process:
        print(json.dumps(dict(batch=r.record.params['batch'], steps=r.fit.steps, examples=r.fit.train_examples,
                              history=r.history, n_test=len(r.predictions))))
''')

_MDL_CHILD = textwrap.dedent('''
    import json, sys, torch
    torch.set_num_threads(1)
    from accelerate import PartialState
    from stance_nb.systems.mdl import MDLConfig, Task, train_mdl
    from stance_nb.test_utils import synthetic_stance
    a = json.loads(sys.argv[1])
    tasks = [Task.from_frame('single', synthetic_stance(20, seed=1, labels=('negative', 'positive')).assign(target='')),
             Task.from_frame('pair', synthetic_stance(13, seed=2, labels=('AGAINST', 'FAVOR', 'NONE')))]
    r = train_mdl(tasks, a['model'], MDLConfig(**a['cfg']), output_dir=a['out'])
    if PartialState().is_main_process:
        print(json.dumps(dict(batch=r.record.params['batch'], steps=r.record.metrics['steps'],
                              n_test={k: len(v) for k, v in r.predictions.items()})))
''')

def _free_port() -> int:
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

def _run(tmp_path, cfg:dict, processes:int, child:str=_CHILD, **kw) -> dict:
    script = tmp_path/'child.py'; script.write_text(child)
    args = json.dumps(dict(cfg=cfg, out=str(tmp_path/f'out{processes}'), **kw))
    env = {**os.environ, 'STANCE_NB_QUIET': '1', 'TOKENIZERS_PARALLELISM': 'false', 'OMP_NUM_THREADS': '1', 'ACCELERATE_USE_CPU': 'true',
           'PYTHONPATH': os.pathsep.join([str(ROOT), os.environ.get('PYTHONPATH', '')])}
    cmd = ([sys.executable, str(script), args] if processes == 1 else
           [sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node', str(processes), '--master_port', str(_free_port()), str(script), args])
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])

def test_two_processes_same_effective_batch_and_steps(tmp_path):
    "batch_size=8 over 2 processes: 4 examples per process and micro-batch, 8 per optimizer step, as many steps as one process."
    from stance_nb.test_utils import tiny_bert
    tiny_bert(tmp_path/'tiny', num_labels=2, seed=0)
    cfg = dict(model=str(tmp_path/'tiny'), epochs=2, batch_size=8, max_length=32, lr=3e-3, mixed_precision='no', seed=1, checkpoint=False)
    one, two = _run(tmp_path, cfg, 1), _run(tmp_path, cfg, 2)
    assert one['batch'] == dict(processes=1, per_device_batch_size=8, grad_accum=1, effective_batch_size=8)
    assert two['batch'] == dict(processes=2, per_device_batch_size=4, grad_accum=1, effective_batch_size=8)
    n_train = 20                                                  # synthetic_stance(20): 20 rows per split
    assert one['steps'] == two['steps'] == 2*-(-n_train//8), (one['steps'], two['steps'])
    assert one['examples'] == 2*n_train and two['examples'] == n_train   # each of the 2 processes saw half of every batch
    assert one['n_test'] == two['n_test'] > 0                     # predictions gathered from both processes, none duplicated

def test_mdl_two_processes_same_effective_batch_and_steps(tmp_path):
    "One MDL job over 2 processes: every batch split between them (same head), as many optimizer steps as on one process."
    from stance_nb.test_utils import tiny_bert
    tiny_bert(tmp_path/'tiny', seed=0)
    cfg = dict(epochs=2, batch_size=8, max_length=32, lr=3e-3, mixed_precision='no', seed=1, checkpoint=False, optimizer='adamw')
    one = _run(tmp_path, cfg, 1, _MDL_CHILD, model=str(tmp_path/'tiny'))
    two = _run(tmp_path, cfg, 2, _MDL_CHILD, model=str(tmp_path/'tiny'))
    assert one['batch'] == dict(processes=1, per_device_batch_size=8, grad_accum=1, effective_batch_size=8)
    assert two['batch'] == dict(processes=2, per_device_batch_size=4, grad_accum=1, effective_batch_size=8)
    assert one['steps'] == two['steps'] == 2*(-(-20//8) + -(-13//8)), (one['steps'], two['steps'])   # 2 epochs of 3 + 2 batches
    assert one['n_test'] == two['n_test'] == {'single': 20, 'pair': 13}
