#!/usr/bin/env bash
# Rewrites the table of bench/ci/RESULTS.md (below its "<!-- table -->"
# line) from raw files of bench/ci/cost.sh, one table per file, and of
# whole .ci/run runs (raw/*-ci-run.txt, bench/ci/fresh.sh: the step lines
# .ci/test printed, /usr/bin/time -v, the host's steal time; vmstat in older ones).
#
#   bench/ci/table.sh bench/ci/raw/<stamp>.txt ...
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -gt 0 ] || { echo "usage: bench/ci/table.sh RAW..." >&2; exit 2; }
doc=bench/ci/RESULTS.md
{
	sed '/^<!-- table -->$/q' "$doc"
	for f in "$@"; do
		case $f in *-ci-run.txt)
			# a whole .ci/run: its steps, from the times .ci/test printed
			echo
			echo "\`$f\` ($(head -1 "$f" | sed 's/^# //')):"
			echo
			echo "| step | wall (s) |"
			echo "| --- | ---: |"
			grep -E '^== |^all passed|^FAILED' "$f" | sed -E 's/^== (.*) \([0-9:]+, ([0-9]+) s in\)$/\2 \1/; s/^(all passed|FAILED.*) \(([0-9]+) s\)$/\2 end/' |
				awk 'NR > 1 { printf "| %s | %d |\n", step, $1 - t } { t = $1; $1 = ""; step = substr($0, 2) } END { printf "| **.ci/test in all** | **%d** |\n", t }'
			awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} /Elapsed/ {e=$2} END {printf "\n.ci/run %s wall; CPU of its waited processes %.0f s (user %.0f, system %.0f).\n", e, u+s, u, s}' "$f"
			awk '/^steal: / {sub(/^steal: /, ""); printf "Steal time: %s.\n", $0}' "$f"
			awk '/^# vmstat/ {f=1; next} f {us+=$1; sy+=$2; id+=$3; n++} END {if (n) printf "The box over the whole run (vmstat, %d samples): %.0f %% user, %.0f %% system, %.0f %% idle.\n", n, us/n, sy/n, id/n}' "$f"
			continue
		esac
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
