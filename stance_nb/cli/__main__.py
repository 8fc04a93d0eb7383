"`python -m stance_nb.cli ...` (what `accelerate launch -m stance_nb.cli` runs on every process): the `stance_nb` command."
# Hand-written (not exported).
import sys
from .main import main

sys.exit(main())
