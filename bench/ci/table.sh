#!/usr/bin/env bash
# Rewrites the table of bench/ci/RESULTS.md (below its "<!-- table -->"
# line) from raw files of bench/ci/cost.sh, one table per file.
#
#   bench/ci/table.sh bench/ci/raw/<stamp>.txt ...
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -gt 0 ] || { echo "usage: bench/ci/table.sh RAW..." >&2; exit 2; }
doc=bench/ci/RESULTS.md
{
	sed '/^<!-- table -->$/q' "$doc"
	for f in "$@"; do
		echo
		echo "\`$f\` ($(head -1 "$f" | cut -d' ' -f3-)):"
		echo
		echo "| package | wall alone (s) | CPU (s) | user | system | system share | page faults | µs of system per fault | load before | exit |"
		echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
		grep -v '^#' "$f" | awk '{cpu=$3+$4; printf "%s\t%s\t%.1f\t%s\t%s\t%.0f %%\t%d\t%.0f\t%s\t%s\n", $1, $2, cpu, $3, $4, 100*$4/cpu, $5, 1e6*$4/$5, $7, $6}' |
			sort -t$'\t' -k3,3 -rn | awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s | %d | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10; w+=$2; c+=$3; u+=$4; s+=$5; pf+=$7}
				END {printf "| **all** | %.1f | %.1f | %.1f | %.1f | %.0f %% | %d | %.0f | | |\n", w, c, u, s, 100*s/c, pf, 1e6*s/pf}'
	done
} >"$doc.new"
mv "$doc.new" "$doc"
echo "wrote $doc from $*"
