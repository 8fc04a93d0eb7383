"The experiment layer: declared rows → resumable jobs in a job store → tables next to the paper's numbers."
# Hand-written (not exported): the layer's modules, bottom up (the map is in `experiment.spec`'s notebook).
# `from stance_nb.experiment import ...` reaches every public name; the systems (`stance_nb.systems`) and the papers
# (`stance_nb.papers`) sit on top and are found through the package's entry points, never imported from here.
# The statistical tests (is A better than B?) live below, in `stance_nb.stats`.
from .spec import *          # DataSpec, Row, Experiment, Job, Context, RunResult; the registries
from .params import *        # the typed parameter class of each run kind (RunArgs), the annotations' checks
from .data import *          # a DataSpec made into a run's tidy table
from .store import *         # job keys and folders, finished jobs, a job's files
from .cost import *          # what transformer jobs will cost on this machine
from .runner import *        # run: rows → jobs → scores (prepare, execute)
from .executor import *      # where the jobs run: this process, worker processes, Slurm through submitit
from .compare import *       # like for like: a Δ only when both sides cover the same
from .tables import *        # table builders
from .report import *        # compare with the paper, notes, conditions, CSV/Markdown, figures
from .reproduce import *     # a notebook's parameters → run → render
