"The systems: each family's model and its registration in one home, `stance_nb.systems.<family>`."
# Hand-written (not exported). The families register themselves as the papers do: through the entry-point group
# `stance_nb.systems` (`settings.ini`: `system_modules`), imported on the first lookup of a system name
# (`stance_nb.experiment.SYSTEMS`, a `stance_nb.registry.Registry`); nothing below imports them from here.
