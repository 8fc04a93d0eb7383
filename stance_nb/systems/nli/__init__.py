"NLI models as stance classifiers (EZ-STANCE): the model and its prompts (`model`, `prompts/`) and their registration as systems (`register`)."
# Hand-written (not exported). `register` is imported through the entry point `nli` of `stance_nb.systems`.
from .model import *
