"Causal language models as stance classifiers: prompts, the model, served models, the answer cache, one evaluation, lm-eval tasks, the system `llm`."
# Hand-written (not exported). `register` is imported through the entry point `llm` of `stance_nb.systems`.
from .prompts import *
