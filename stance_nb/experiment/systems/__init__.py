"The systems of the experiment layer, one module per family; importing this package registers them all."
# Hand-written (not exported). A new system: a function `fn(ctx) -> (predictions, info)` under `@register_system(name)`
# in the module of its family (or a new module imported here).
from . import baselines      # majority, target_majority, random, fasttext
from . import encoders       # sdl, mdl (stance_nb.mdl), finetune (stance_nb.train)
from . import nli            # nli_zero_shot, nli_finetune
from . import zeroshot       # BiCE, CrossNet, TGA-Net
from . import llm            # prompted causal LMs and OpenAI-compatible endpoints
