"Each paper's reproduction declared for `stance_nb.experiment`: `from stance_nb.experiment import get_experiment`."
# Hand-written (not exported): importing the paper modules registers their experiments.
from .benchmark import BENCHMARK_EXPERIMENT
from .xstance import XSTANCE_EXPERIMENT
from .cheese import CHEESE_EXPERIMENT
from .ezstance import EZSTANCE_EXPERIMENT
