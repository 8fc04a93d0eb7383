"Majority, random and fastText baselines: the models (`model`) and their registration as systems (`register`)."
# Hand-written (not exported). `register` is imported through the entry point `baselines` of `stance_nb.systems`.
from .model import *
