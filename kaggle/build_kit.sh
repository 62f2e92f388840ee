#!/usr/bin/env bash
# Build the offline Kaggle kit: arcbatt as a wheel and wheels of everything it needs, for Kaggle's
# Python and CUDA, in one folder to upload as a Kaggle dataset (kaggle/arcbatt.ipynb installs from it
# with pip --no-index).
#
# usage: bash kaggle/build_kit.sh DIR [--python X.Y] [--cuda 12|13|none] [--drop NAME,NAME...]
#   DIR          the kit folder (created; wheels already there are kept)
#   --python     the target's Python (default 3.11, Kaggle's); wheels for manylinux x86-64
#   --cuda       the CuPy wheel to add: cupy-cuda12x (default 12), cupy-cuda13x, or none
#   --drop       leave out these distributions' wheels, for a machine that has them installed
#                (e.g. --cuda none --drop numpy for a host with NumPy and CuPy)
# Needs pip and setuptools here and a package index to download from; the kit needs neither.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { sed -n '6,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

out="" py="3.11" cuda="12" drop=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    --python) py="${2:?--python needs X.Y}"; shift 2 ;;
    --cuda) cuda="${2:?--cuda needs 12, 13 or none}"; shift 2 ;;
    --drop) drop="${2:?--drop needs names}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "build_kit.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "build_kit.sh: one folder only" >&2; exit 2; }; out="$1"; shift ;;
  esac
done
[ -n "$out" ] || { usage >&2; exit 2; }
[[ "$py" =~ ^3\.[0-9]+$ ]] || { echo "build_kit.sh: --python wants X.Y, got $py" >&2; exit 2; }
case "$cuda" in 12|13) cupy="cupy-cuda${cuda}x" ;; none) cupy="" ;;
  *) echo "build_kit.sh: --cuda wants 12, 13 or none, got $cuda" >&2; exit 2 ;; esac
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# The project's wheel, built from a copy of its sources (nothing written into the checkout).
src="$(mktemp -d)"
trap 'rm -rf "$src"' EXIT
cp -r "$root/pyproject.toml" "$root/README.md" "$root/pipeline" "$root/solvers" "$root/cache" "$src/"
find "$src" -name __pycache__ -prune -exec rm -rf {} +
python3 -m pip wheel -q --no-deps -w "$out" "$src"
wheel="$(ls -t "$out"/arcbatt-*.whl | head -1)"

# Its dependencies (and CuPy) as binary wheels for the target: no compiler runs on Kaggle.
abi="cp${py/./}"
python3 -m pip download -q --only-binary=:all: --dest "$out" --python-version "$py" \
  --implementation cp --abi "$abi" --abi abi3 --abi none \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  --platform any "$wheel" ${cupy:+"$cupy"}

for name in ${drop//,/ }; do
  rm -f "$out/${name//-/_}"-*.whl "$out/${name}"-*.whl
done
echo "kit: $out ($(ls "$out" | wc -l) wheels, $(du -sh "$out" | cut -f1)) for Python $py${cupy:+ with $cupy}"
echo "install: pip install --no-index --find-links $out arcbatt${cupy:+ $cupy}"
