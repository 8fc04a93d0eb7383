"`tools/gpu_check.sh --cpu`: the device check's dry run on this CPU (tiny shapes) is green and lists every check it makes on a GPU."
import json, os, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

def test_gpu_check_dry_run(tmp_path):
    env = {**os.environ, 'OUT': str(tmp_path/'out'), 'PATH': f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    r = subprocess.run(['bash', str(ROOT/'tools'/'gpu_check.sh'), '--cpu'], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log[-4000:]
    for check in ('smoke train', 'smoke mdl', 'smoke predict', 'smoke nli_finetune', 'smoke pack', 'smoke compiled_adamax',
                  'trainer bert-large-b32-L512', 'trainer bert-large-b16-L100', 'trainer bert-base-b32-L128', 'trainer minilm-b16-L100',
                  'step:', 'sdl_mdl BERT_SDL', 'sdl_mdl BERT_MDL', 'jobs_per_gpu 1', 'jobs_per_gpu 4',
                  'graphs step', 'graphs job eager', 'graphs job graphs'):
        assert f'  {check}' in log, check   # the plan of the GPU run names every check with its command
    assert 'summary: 8/8 phases green' in log
    files = sorted(p.name for p in (tmp_path/'out').iterdir())
    assert len(files) <= 8 and {'all.log', 'smoke.json', 'summary.json', 'sdl_mdl.json', 'jobs_per_gpu.json', 'graphs-cpu-dry.json'} <= set(files), files
    summary = json.loads((tmp_path/'out'/'summary.json').read_text())
    assert summary['env']['device'] == 'cpu (dry run)' and json.loads((tmp_path/'out'/'graphs-cpu-dry.json').read_text())['refused']
    smoke = json.loads((tmp_path/'out'/'smoke.json').read_text())
    assert smoke['device'] == 'cpu (dry run)' and all(c['rc'] == 0 for c in smoke['checks'].values()) and len(smoke['checks']) == 6
    jpg = json.loads((tmp_path/'out'/'jobs_per_gpu.json').read_text())
    assert all(len(r['jobs']) == 2 for r in jpg['runs'].values())   # the dry run's two SDL jobs ran with 1 and with 2 jobs per device
