#!/usr/bin/env bash
# arcbatt: one run of the batched program search. A thin shell over `python -m pipeline run`.
# Flags (see README.md):
#   -c N  tasks (0: all; default 0)  -d DATASET  arc1-train|arc1-eval|arc2-train|arc2-eval|folder|file
#                                                (default arc1-train)
#   -o    one iteration only         -i          clear the cache and solver store first
#   -t S  validation timeout (s, 5)  -T          timing table per stage
#   -m    force CPU                  -g          force GPU (exit 3 if unusable)
#   -b    export best solvers        -w N        validation workers (default min(4, CPUs))
#   -B D  time budget (90s, 20m, 8h) -C URL      cache: disk:PATH or redis://host:port/db
#                                                (default disk:.cache)
#   -O DIR output folder (default runs/<timestamp>)   -s SEED  random seed (default 0)
#   -D N  search depth (default 3 on a GPU, 2 on the CPU)   -h  this help
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python_bin="${PYTHON:-python3}"

usage() { sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
# The run starts in the repository folder (for its defaults .cache and runs/), so paths given
# relative to the caller's folder are made absolute first.
absolute() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s' "$PWD/$1" ;; esac; }
dataset_path() {  # a file or folder (not a named dataset such as arc1-train)
  if [ -e "$1" ] || [[ "$1" == */* ]] || [[ "$1" == *.json ]]; then absolute "$1"; else printf '%s' "$1"; fi
}
cache_url() { case "$1" in disk:?*) printf 'disk:%s' "$(absolute "${1#disk:}")" ;; *) printf '%s' "$1" ;; esac; }
# Whole numbers for -c -w -s -D, a number for -t: checked here, so that a bad value prints this usage.
need_int() { [[ "$2" =~ ^-?[0-9]+$ ]] || { echo "run_card.sh: -$1 needs a whole number, got '$2'" >&2; usage >&2; exit 2; }; }
need_number() { [[ "$2" =~ ^[0-9]+([.][0-9]*)?$ ]] || { echo "run_card.sh: -$1 needs a number, got '$2'" >&2; usage >&2; exit 2; }; }

args=()
while getopts ":c:d:oit:Tmgbw:B:C:O:s:D:h" opt; do
  case "$opt" in
    c) need_int c "$OPTARG"; args+=(-c "$OPTARG") ;;
    d) args+=(-d "$(dataset_path "$OPTARG")") ;;
    o) args+=(-o) ;;
    i) args+=(-i) ;;
    t) need_number t "$OPTARG"; args+=(-t "$OPTARG") ;;
    T) args+=(-T) ;;
    m) args+=(-m) ;;
    g) args+=(-g) ;;
    b) args+=(-b) ;;
    w) need_int w "$OPTARG"; args+=(-w "$OPTARG") ;;
    B) args+=(-B "$OPTARG") ;;
    C) args+=(-C "$(cache_url "$OPTARG")") ;;
    O) args+=(-O "$(absolute "$OPTARG")") ;;
    s) need_int s "$OPTARG"; args+=(-s "$OPTARG") ;;
    D) need_int D "$OPTARG"; args+=(-D "$OPTARG") ;;
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
