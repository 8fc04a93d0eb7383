"Fine-tune any Hugging Face encoder with one Accelerate loop: `from stance_nb.train import TrainConfig, train_classifier`."
# Hand-written (not exported): the trainer's layers, each a module of its own, bottom up.
from .config import *           # TrainConfig, RunPlan, the papers' presets
from .batches import *          # tokenization once, length-grouped batches, dynamic padding
from .packing import *          # several short examples per sequence, each attending to itself
from .optim import *            # optimizer, schedule, precision, the Accelerator
from .checkpoints import *      # checkpoints that resume exactly
from .loop import *             # fit, predict_logits
from .target_tokens import *    # reserved vocabulary entries as targets
from .classifier import *       # train_classifier: one run, its predictions, model and record
from .search import *           # grid search, seeds, folds
