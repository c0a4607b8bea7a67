#!/bin/sh
# Regenerate the example designs in designs/ with their analyses:
#   ./make_designs.sh FNN_BINARY [OUTDIR]
# KLAT2 (64 PCs), 128 PCs and 256 PCs, each valuing its logical grid's rows and columns.
set -e
fnn=${1:?usage: make_designs.sh FNN_BINARY [OUTDIR]}
out=${2:-$(dirname "$0")/designs}
mkdir -p "$out"
design() { # name pcs nics switches pattern seconds
	"$fnn" design --pcs "$2" --nics "$3" --switches "$4" --pattern "$5" --seconds "$6" \
		--threads 2 --quiet -o "$out/$1.table"
	"$fnn" analyze "$out/$1.table" --switches "$4" --pattern "$5" --pattern all \
		-o "$out/$1.analysis"
}
design klat2 64 4 8x31,8 grid:8x8 20
design pc128 128 4 11x48 grid:8x16 60
design pc256 256 4 11x96 grid:16x16 120
