#!/usr/bin/env bash
# A notebook's first cluster: `benchbook run` of a one-cell notebook
# (backend.postgres() and one query) on an empty cache dir, the binary of
# commit A against the binary of commit B, in ABBA order, ROUNDS rounds;
# wall time and the CPU of benchbook and its children (/usr/bin/time), the
# load average before each. The initdb template (template.go) is kept
# between runs, as a user's is: run both binaries once first so neither
# pays for making it.
#
#   bench/state/new_cluster.sh A B      (commits; from the repository root)
#   bench/state/new_cluster.sh -table RAW   (the Markdown table of a raw file)
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" = -table ]; then
	f=${2:?usage: new_cluster.sh -table RAW}
	echo "| commit | runs | wall median (s) | CPU median (s) | wall, every run (s) | load before |"
	echo "| --- | ---: | ---: | ---: | --- | --- |"
	for c in $(grep -v '^#' "$f" | cut -d' ' -f1 | awk '!seen[$0]++'); do
		grep "^$c " "$f" | awk -v c="$c" '
			function median(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
				return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
			{ n++; w[n] = $2; cpu[n] = $3 + $4; ws = ws (n > 1 ? ", " : "") $2; ls = ls (n > 1 ? ", " : "") $5 }
			END { printf "| %s | %d | %.2f | %.2f | %s | %s |\n", c, n, median(w, n), median(cpu, n), ws, ls }'
	done
	exit 0
fi
a=${1:?usage: new_cluster.sh A B}
b=${2:?usage: new_cluster.sh A B}
rounds=${ROUNDS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
a=$(git rev-parse --short "$a")
b=$(git rev-parse --short "$b")
for c in "$a" "$b"; do
	mkdir -p "$work/src-$c"
	git archive "$c" | tar -x -C "$work/src-$c"
	(cd "$work/src-$c" && go build -o "$work/bb-$c" ./cmd/benchbook)
done
printf '# %%%% pg\npg = backend.postgres()\npg.query("SELECT 1 AS one")[0]["one"]\n' >"$work/nb.star"
raw=bench/state/raw/new-cluster-$(date -u +%Y%m%dT%H%MZ).txt
mkdir -p bench/state/raw
echo "# bench/state/new_cluster.sh $a $b $(date -u +%FT%TZ); commit wall_s user_s sys_s load_before" | tee "$raw"
one() {
	rm -rf "$work/cache"
	load=$(cut -d' ' -f1 /proc/loadavg)
	/usr/bin/time -f "%e %U %S" -o "$work/t" "$work/bb-$1" run -cache-dir "$work/cache" -o "$work/nb.html" "$work/nb.star" >/dev/null 2>&1
	echo "$1 $(cat "$work/t") $load" | tee -a "$raw"
}
"$work/bb-$a" run -cache-dir "$work/warm" -o "$work/nb.html" "$work/nb.star" >/dev/null 2>&1
"$work/bb-$b" run -cache-dir "$work/warm2" -o "$work/nb.html" "$work/nb.star" >/dev/null 2>&1
for _ in $(seq "$rounds"); do one "$a"; one "$b"; one "$b"; one "$a"; done
echo "raw: $raw"
