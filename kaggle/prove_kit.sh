#!/usr/bin/env bash
# Prove a kit as Kaggle would use it: install arcbatt from the kit alone (pip --no-index) into a
# fresh virtual environment, run the test challenges of a Kaggle-shaped input folder into
# working/submission.json within a -B budget, and check that the submission is valid, that the run
# ended in time, and that neither the kit nor the installed packages changed.
#
# usage: bash kaggle/prove_kit.sh KIT WORK [--tasks N] [--system-site] [-- RUN FLAGS...]
#   KIT            the kit folder (kaggle/build_kit.sh); it is made read-only
#   WORK           a new folder for the environment, the input and working folders
#   --tasks N      challenges in the input folder: the first N of arc2-train (default 8;
#                  the evaluation splits stay held out)
#   --system-site  let the environment see this Python's packages (a host with NumPy and CuPy),
#                  also where this Python is itself a virtual environment
#   RUN FLAGS      passed to python -m pipeline run (default: -m -B 60s)
# PYTHON chooses the interpreter of the environment (default python3).
set -euo pipefail
usage() { sed -n '7,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

kit="" work="" tasks=8 site=() flags=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --tasks) tasks="${2:?--tasks needs N}"; shift 2 ;;
    --system-site) site=(--system-site-packages); shift ;;
    --) shift; flags=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "prove_kit.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) if [ -z "$kit" ]; then kit="$1"; elif [ -z "$work" ]; then work="$1"; else usage >&2; exit 2; fi; shift ;;
  esac
done
[ -n "$kit" ] && [ -n "$work" ] || { usage >&2; exit 2; }
[ "${#flags[@]}" -gt 0 ] || flags=(-m -B 60s)
budget=60
for ((i = 0; i < ${#flags[@]}; i++)); do
  [ "${flags[$i]}" = "-B" ] && budget="${flags[$((i + 1))]}"
done
[ ! -e "$work" ] || { echo "prove_kit.sh: $work exists; give a new folder" >&2; exit 2; }

kit="$(cd "$kit" && pwd)"
chmod -R a-w "$kit"
mkdir -p "$work/input/arc-prize-2025" "$work/working"
work="$(cd "$work" && pwd)"
"${PYTHON:-python3}" -m venv "${site[@]}" "$work/venv"
py="$work/venv/bin/python"
if [ "${#site[@]}" -gt 0 ]; then  # a venv's --system-site-packages sees its base, not this Python's own venv
  "${PYTHON:-python3}" -c 'import site; print("\n".join(site.getsitepackages()))' \
    > "$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/host-site.pth"
fi
"$py" -m pip install -q --no-index --find-links "$kit" arcbatt
# The kit's arcbatt even where the host has one installed (seen through --system-site).
"$py" -m pip install -q --no-index --find-links "$kit" --force-reinstall --no-deps arcbatt
stamp="$work/installed.stamp"
touch "$stamp"
sleep 1  # file times have a second's resolution on some file systems

# A Kaggle-shaped input folder: challenges only (no solutions), the competition's file name.
"$py" - "$tasks" "$work/input/arc-prize-2025/arc-agi_test_challenges.json" <<'EOF'
import json, sys
from pipeline.run.tasks import load_tasks
tasks, _ = load_tasks("arc2-train", int(sys.argv[1]))
challenges = {t.id: {"train": [{"input": i.tolist(), "output": o.tolist()} for i, o in zip(t.train_inputs, t.train_outputs)],
                     "test": [{"input": g.tolist()} for g in t.test_inputs]} for t in tasks}
json.dump(challenges, open(sys.argv[2], "w"))
EOF

cd "$work/working"
start=$(date +%s.%N)
"$py" -m pipeline run -d "$work/input/arc-prize-2025" -O "$work/working" "${flags[@]}"
end=$(date +%s.%N)

"$py" - "$work" "$stamp" "$kit" "$start" "$end" "$budget" <<'EOF'
import json, os, sys
import pipeline
from cache import parse_duration
from pipeline.run.score import validate_submission
from pipeline.run.tasks import load_tasks
work, stamp, kit, start, end, budget = sys.argv[1:]
tasks, _ = load_tasks(os.path.join(work, "input", "arc-prize-2025"))
submission = json.load(open(os.path.join(work, "working", "submission.json")))
problems = validate_submission(submission, tasks)
seconds, limit = float(end) - float(start), parse_duration(budget)
site = os.path.dirname(os.path.dirname(pipeline.__file__))
changed = [os.path.join(d, f) for root in [kit] + [os.path.join(site, p) for p in ("pipeline", "solvers", "cache")]
           for d, _, files in os.walk(root) for f in files
           if os.path.getmtime(os.path.join(d, f)) > os.path.getmtime(stamp)]
print(f"tasks {len(tasks)}, submission problems {len(problems)}, wall {seconds:.1f} s of a {limit:.0f} s budget, "
      f"package folder {os.path.dirname(pipeline.__file__)}, files changed in the kit or the packages: {len(changed)}")
for line in problems[:5] + changed[:5]:
    print("  " + line)
ours = os.path.abspath(pipeline.__file__).startswith(os.path.join(work, "venv") + os.sep)
if not ours:
    print("  the run imported arcbatt from outside the environment")
sys.exit(0 if ours and not problems and not changed and seconds <= limit else 1)
EOF
