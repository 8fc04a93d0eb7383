"Single- and multi-dataset learning: the model (`model`), its training (`train`) and its registration as systems (`register`)."
# Hand-written (not exported). `register` is imported through the entry point `mdl` of `stance_nb.systems`.
from .model import *
from .train import *
