"Datasets of the four papers behind one registry: `from stance_nb.data import load, DATASETS`."
# Hand-written (not exported): importing the loader modules fills the registry.
from .core import *
from .core import DATASETS, load
from . import papers, benchmark, custom
