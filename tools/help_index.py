"""Rebuild `stance_nb/help_index.json`: every command's `--help` as `stance_nb.cli` builds it, and what the early checks read
(`stance_nb.cli.early.argument_index`: each command's options, the registered names, the parameter classes), with the fingerprint
of the source it was built from (`stance_nb.helpindex`). Run it after changing any module; `tests/test_cli.py` fails while it is stale."""
import json
from stance_nb.cli.main import help_texts
from stance_nb.cli.early import argument_index
from stance_nb.helpindex import HELP_INDEX, HELP_WIDTH, source_fingerprint

if __name__ == '__main__':
    index = dict(fingerprint=source_fingerprint(), width=HELP_WIDTH, commands=help_texts(HELP_WIDTH), arguments=argument_index())
    HELP_INDEX.write_text(json.dumps(index, indent=1, ensure_ascii=False) + '\n', encoding='utf-8')
    print(f"{HELP_INDEX}: {len(index['commands'])} help texts, the arguments of {len(index['arguments']['commands'])} commands, "
          f"source {index['fingerprint'][:12]}")
