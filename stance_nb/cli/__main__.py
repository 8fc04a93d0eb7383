"`python -m stance_nb.cli ...` (what `accelerate launch -m stance_nb.cli` runs on every process): the `stance_nb` command."
# Hand-written (not exported): the console script's entry (`stance_nb.helpindex.console_main`), so that both check a command line alike.
import sys
from ..helpindex import console_main

sys.exit(console_main())
