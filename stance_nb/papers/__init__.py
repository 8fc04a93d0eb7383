"Each paper's reproduction declared for the experiment layer: its data, its rows, its tables."
# Hand-written (not exported). Every module here registers its experiment when imported, and is named in the package's
# metadata (entry points of the group `stance_nb.papers`, see setup.py), so `stance_nb.experiment.get_experiment` finds
# it without the layer importing the papers. A new paper: one module here and one entry point.
