"CI runs what a new user runs: `.ci/run` sets no environment variable beyond those the README's test command sets itself."
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_ASSIGN = re.compile(r'(?:^|[;&|(]\s*|\bexport\s+)([A-Za-z_][A-Za-z0-9_]*)=')

def readme_test_command() -> str:
    "The README's test command: the line after `# install + run the tests`, as `.ci/run` reads it."
    lines = (ROOT/'README.md').read_text(encoding='utf-8').splitlines()
    return lines[lines.index('# install + run the tests') + 1]

def variables_set(command:str) -> set:
    "Environment variables a shell command line sets for what it runs: `export X=...` and `X=... cmd` prefixes."
    out = set()
    for part in re.split(r'&&|\|\||;', command):
        words = part.strip().split()
        if words[:1] == ['export']: out |= {w.split('=')[0] for w in words[1:] if '=' in w}
        for w in words:
            if re.fullmatch(r'[A-Za-z_][A-Za-z0-9_]*=.*', w): out.add(w.split('=')[0])
            else: break
    return out

def ci_exports(script:str) -> set:
    "Variables `.ci/run` puts into the environment of the test command: `export` lines and prefixes of the `eval` that runs it."
    out = set()
    for line in script.splitlines():
        code = line.split('#')[0].strip()
        if code.startswith('export '): out |= {w.split('=')[0] for w in code.split()[1:]}
        if 'eval' in code and 'TEST_CMD' in code: out |= variables_set(code[:code.index('eval')].lstrip('( '))
    return out

def test_the_readers_see_variables():
    "The readers find variables however they are set: exported, exported without a value, or as a command's prefix."
    assert variables_set('a && export X=$(realpath y) && Y=1 Z=2 cmd -p A=B && pytest') == {'X', 'Y', 'Z'}
    assert ci_exports('set -u\nexport A=1 B\n( FOO=1 eval "$TEST_CMD" ) 2>&1\nDEBIAN_FRONTEND=x apt-get install y') == {'A', 'B', 'FOO'}

def test_ci_sets_nothing_the_readme_does_not():
    "CI fails where a new user's shell would: every variable it sets for the tests is set by the README's own command."
    script = (ROOT/'.ci'/'run').read_text(encoding='utf-8')
    assert 'eval "$TEST_CMD"' in script and "grep -A1 -m1 '^# install + run the tests' README.md" in script
    extra = ci_exports(script) - variables_set(readme_test_command())
    assert extra == set(), f".ci/run sets {sorted(extra)} for the tests, which the README's test command does not"

def test_the_readme_points_the_tests_at_the_mirror():
    "The README's test command finds the data mirror the way its main command does (`../shared/data` beside the clone)."
    assert 'STANCE_NB_DATA' in variables_set(readme_test_command())
    main = (ROOT/'README.md').read_text(encoding='utf-8').splitlines()
    assert 'STANCE_NB_DATA=$(realpath ../shared/data)' in main[main.index(next(l for l in main if l.startswith('# install + run the main job'))) + 1]
