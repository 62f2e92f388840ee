#!/usr/bin/env bash
# arcbatt: one run of the batched program search. A thin shell over `python -m pipeline run`.
# Flags (see README.md):
#   -c N  tasks (0: all)            -d DATASET  arc1-train|arc1-eval|arc2-train|arc2-eval|folder|file
#   -o    one iteration only        -i          clear the cache and solver store first
#   -t S  validation timeout (s)    -T          timing table per stage
#   -m    force CPU                 -g          force GPU (exit 3 if unusable)
#   -b    export best solvers       -w N        validation workers
#   -B D  time budget (90s, 20m, 8h) -C URL     cache: disk:PATH or redis://host:port/db
#   -O DIR output folder            -s SEED     random seed
#   -D N  search depth              -h          this help
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python_bin="${PYTHON:-python3}"

usage() { sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
# The run starts in the repository folder (for its defaults .cache and runs/), so paths given
# relative to the caller's folder are made absolute first.
absolute() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s' "$PWD/$1" ;; esac; }
dataset_path() {  # a file or folder (not a named dataset such as arc1-train)
  if [ -e "$1" ] || [[ "$1" == */* ]] || [[ "$1" == *.json ]]; then absolute "$1"; else printf '%s' "$1"; fi
}
cache_url() { case "$1" in disk:?*) printf 'disk:%s' "$(absolute "${1#disk:}")" ;; *) printf '%s' "$1" ;; esac; }

args=()
while getopts ":c:d:oit:Tmgbw:B:C:O:s:D:h" opt; do
  case "$opt" in
    c) args+=(-c "$OPTARG") ;;
    d) args+=(-d "$(dataset_path "$OPTARG")") ;;
    o) args+=(-o) ;;
    i) args+=(-i) ;;
    t) args+=(-t "$OPTARG") ;;
    T) args+=(-T) ;;
    m) args+=(-m) ;;
    g) args+=(-g) ;;
    b) args+=(-b) ;;
    w) args+=(-w "$OPTARG") ;;
    B) args+=(-B "$OPTARG") ;;
    C) args+=(-C "$(cache_url "$OPTARG")") ;;
    O) args+=(-O "$(absolute "$OPTARG")") ;;
    s) args+=(-s "$OPTARG") ;;
    D) args+=(-D "$OPTARG") ;;
    h) usage; exit 0 ;;
    :) echo "run_card.sh: option -$OPTARG needs a value" >&2; usage >&2; exit 2 ;;
    \?) echo "run_card.sh: unknown option -$OPTARG" >&2; usage >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ "$#" -gt 0 ]; then
  echo "run_card.sh: unexpected argument: $1" >&2; exit 2
fi
cd "$here"
exec "$python_bin" -m pipeline run "${args[@]}"
