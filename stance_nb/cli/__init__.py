"The `stance_nb` command: `from stance_nb.cli import main`, or `python -m stance_nb.cli ...`."
# Hand-written (not exported): argument handling (`options`, `main`) around what each command does (`commands`).
from .options import *
from .commands import *
from .main import *
