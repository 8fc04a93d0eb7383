"Shared pytest configuration: the `slow` marker (tests over 60 s on a 2-core CPU; all run by default), the tiny model the fault suite trains."
import pytest

def pytest_configure(config):
    config.addinivalue_line('markers', 'slow: takes more than 60 s on a 2-core CPU (deselect with -m "not slow")')

@pytest.fixture(scope='session')
def tiny_model(tmp_path_factory):
    "A tiny BERT saved to a folder once, so every process (and every run) starts from the same weights and vocabulary."
    from stance_nb.test_utils import tiny_bert
    path = tmp_path_factory.mktemp('tiny_bert')/'model'
    tiny_bert(path, num_labels=2, seed=0)
    return path

def train_config(model, **kw):
    "The fault suite's `TrainConfig` for `model`: two short epochs of the tiny model on CPU, `kw` changed."
    from stance_nb.train import TrainConfig
    base = dict(model=str(model), epochs=2, batch_size=8, max_length=32, lr=3e-3, mixed_precision='no', seed=1, warmup_ratio=0.1)
    return TrainConfig(**{**base, **kw})

def run_cli(argv, show_warnings:bool=False) -> tuple[int, str, str]:
    "Exit status, stdout and stderr of `stance_nb argv` run in this process; `show_warnings`: warnings printed to stderr, as Python does."
    import contextlib, io, sys, warnings
    from stance_nb.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        if show_warnings:
            warnings.simplefilter('always')
            warnings.showwarning = lambda m, c, f, n, file=None, line=None: sys.stderr.write(warnings.formatwarning(m, c, f, n, line))
        try: code = main(argv)
        except SystemExit as e: code = e.code
    return code, out.getvalue(), err.getvalue()

def pytest_terminal_summary(terminalreporter, exitstatus, config):
    "Say loudly when the documentation-site tests did not run (no Chromium): a passing run has then not opened the site."
    skipped = [r for r in terminalreporter.stats.get('skipped', []) if 'Chromium is not installed' in str(r.longrepr)]
    if skipped:
        terminalreporter.write_sep('!', f'{len(skipped)} documentation-site tests SKIPPED: Chromium is not installed', red=True, bold=True)
        terminalreporter.write_line('the site was never opened; install it (Debian/Ubuntu: apt-get install -y chromium) and run pytest again')

def write_splits(folder, n:int, labels, splits=('train', 'test'), rename:dict|None=None) -> None:
    """`<split>.csv` for each of `splits` in `folder`: `synthetic_stance(n)` rows with `labels`, seeds 1, 2, ..., no (target, text)
    pair in two files (the loaders refuse leakage); columns `target, text, label`, or renamed by `rename` (tidy name -> yours)."""
    from stance_nb.test_utils import synthetic_stance
    seen, rename = set(), dict(rename or {})
    cols = [rename.get(c, c) for c in ('target', 'text', 'label')]
    for seed, s in enumerate(splits, start=1):
        df = synthetic_stance(n, seed=seed, splits=(s,), labels=tuple(labels))
        df = df[[(t, x) not in seen for t, x in zip(df.target, df.text)]]
        seen |= set(zip(df.target, df.text))
        df.rename(columns=rename)[cols].to_csv(folder/f'{s}.csv', index=False)
