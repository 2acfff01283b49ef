#!/usr/bin/env bash
# The tables of an ABBA run (abba.sh) from its raw outputs, in Markdown:
# per run the CPU guard's after/before (the median of its per-round ratios
# to the other build, inverted for an A run, whose reference arm is B), its
# ratio to wrk and its self-check; then each Go benchmark's median ns/op per
# build over its runs.
#
#   bench/workload/abba_table.sh bench/workload/raw/<dir>
set -euo pipefail
raw=${1:?usage: abba_table.sh RAWDIR}
ratios=$(mktemp)
trap 'rm -f "$ratios"' EXIT
echo "| run | load | after / before (median of the rounds) | ratio to wrk | self-check (slowed / plain ≥ 1.10) |"
echo "| --- | --- | --- | --- | --- |"
for g in "$raw"/r*-guard.txt; do
	base=$(basename "$g" -guard.txt) # r1-2-B
	round=${base%%-*} build=${base##*-}
	awk -v round="$round" -v build="$build" '
		NR == 1 { load = $3 }
		/ratio of medians/ { match($0, /ratio of medians [0-9.]+/); wrk = substr($0, RSTART + 17, RLENGTH - 17)
			match($0, /\(median [0-9.]+, must/); self = substr($0, RSTART + 8, RLENGTH - 14) }
		/benchbook \/ reference per round/ { match($0, /\(median [0-9.]+, bound/); ref = substr($0, RSTART + 8, RLENGTH - 15) }
		/^--- FAIL/ { failed = 1 }
		END {
			if (ref == "") { ab = "(no figure)" }
			else if (build == "A") { ab = sprintf("1 / %s = %.3f", ref, 1 / ref) }
			else { ab = ref }
			if (self != "" && self + 0 < 1.10) { self = "**" self "** (the guard failed its self-check)" }
			else if (failed) { self = self " (the test failed)" }
			printf "| %s %s | %s | %s | %s | %s |\n", round, build, load, ab, wrk, self
			if (ref != "") print (build == "A" ? 1 / ref : ref) >> "/dev/fd/3"
		}' "$g" 3>>"$ratios"
done
echo
sort -g "$ratios" | awk '{ v[++n] = $1 } END { if (n) printf "After / before: %.3f-%.3f, median of the %d runs %.3f.\n", v[1], v[n], n, n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
echo
echo "| benchmark | A: median ns/op (runs) | B: median ns/op (runs) | B / A |"
echo "| --- | --- | --- | --- |"
for f in "$raw"/r*-bench.txt; do
	b=$(basename "$f" -bench.txt)
	awk -v build="${b##*-}" '/^Benchmark/ { name = $1; sub(/-[0-9]+$/, "", name); for (i = 1; i <= NF; i++) if ($(i+1) == "ns/op") print build, name, $i }' "$f"
done | sort -k2,2 -k1,1 -k3,3g | awk '
	function median(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	function flush() {
		if (name == "") return
		ma = na ? median(A, na) : 0; mb = nb ? median(B, nb) : 0
		printf "| %s | %s (%d) | %s (%d) | %s |\n", substr(name, 10), na ? sprintf("%.1f", ma) : "-", na, nb ? sprintf("%.1f", mb) : "-", nb, (na && nb) ? sprintf("%.3f", mb / ma) : "-"
		delete A; delete B; na = nb = 0
	}
	$2 != name { flush(); name = $2 }
	$1 == "A" { A[++na] = $3 }
	$1 == "B" { B[++nb] = $3 }
	END { flush() }'
