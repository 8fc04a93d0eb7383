"Datasets of the four papers behind one registry: `from stance_nb.data import load, DATASETS`."
# Hand-written (not exported): importing the loader modules fills the registry.
from .core import *
from .core import DATASETS, load
from .splits import *      # the benchmark's official files read with clear errors: records, split files, low-resource subsets
from .papers import *      # xstance, cheese, ezstance
from .benchmark import *   # the ten datasets of the Schiller et al. (2021) benchmark
from .custom import *      # csv / jsonl: a user's own dataset
from .field import *       # P-Stance, COVID-19-Stance, WT-WT, Emergent, MTSD, RumourEval 2017
from .poldeb_rumor import *  # Political Debates, Rumor Has It (Hardalov et al. 2021's other two)
from .hub import *         # load(name, source="hub"): the Hugging Face Hub copies
from .explore import *     # statistics and plots
