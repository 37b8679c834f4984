#!/usr/bin/env bash
# On a CUDA machine, in one go (about 3-4 minutes on one H200; each step has a time limit, the
# whole stays under 5 minutes): benchmarks/gpu_check.py (dispatch matrix, forced backends, the
# GPU benchmark rows), then `pytest -m gpu` on tests/test_kernels.py with each test's output
# (which backends ran). Writes everything, with the commit and torch's version at the top, to
# docs/benchmarks/gpu-DATE-COMMIT.md (and prints it); commit that file.
#
#     benchmarks/gpu_run.sh            # PYTHON=.venv/bin/python benchmarks/gpu_run.sh
#
# Exits with the first failing step's status (124: it ran past its limit); without CUDA it
# writes nothing and exits 1.
set -u -o pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
commit=$(git rev-parse HEAD)
changed=$(git status --porcelain -- kernels benchmarks tests/test_kernels.py | wc -l)
torch_version=$("$PY" -c 'import torch; print(torch.__version__)' 2>&1) || {
  echo "torch is not importable with $PY: $torch_version" >&2; exit 1; }
cuda=$("$PY" -c 'import torch; print(torch.cuda.is_available())')
if [ "$cuda" != True ]; then
  echo "no CUDA with $PY (torch $torch_version): nothing to run, nothing written" >&2
  exit 1
fi
day=$(date -u +%F)
out=docs/benchmarks/gpu-$day-${commit:0:7}.md
mkdir -p docs/benchmarks
status_file=$(mktemp)
echo 0 > "$status_file"

step() {  # step SECONDS TITLE COMMAND...: run it under a limit, note its exit status
  local limit=$1 title=$2 rc
  shift 2
  echo
  echo "## $title"
  echo
  echo '```'
  timeout "$limit" "$@" 2>&1
  rc=$?
  echo '```'
  echo
  echo "exit status $rc"
  if [ "$rc" -ne 0 ] && [ "$(cat "$status_file")" -eq 0 ]; then echo "$rc" > "$status_file"; fi
}

{
  echo "# GPU run, $day"
  echo
  echo "- command: benchmarks/gpu_run.sh"
  echo "- commit: $commit ($changed uncommitted change(s) in kernels/, benchmarks/,"
  echo "  tests/test_kernels.py)"
  echo "- torch: $torch_version"
  echo "- started: $(date -u '+%F %T') UTC on $(hostname)"
  step 230 "python benchmarks/gpu_check.py" "$PY" benchmarks/gpu_check.py
  step 60 "pytest -m gpu -rA tests/test_kernels.py" \
    "$PY" -m pytest -q -p no:randomly -m gpu -rA tests/test_kernels.py
  echo
  echo "finished: $(date -u '+%F %T') UTC"
} | tee "$out"
status=$(cat "$status_file")
rm -f "$status_file"
echo "wrote $out" >&2
exit "$status"
