#!/bin/bash
# Side-by-side comparison of benchbook's workload module with wrk, vegeta
# and pgbench on one machine: target pinned to CPU 0, load generator to CPU 1.
#
#   bench/workload/compare.sh [duration] [http|httpfree|open|open2|sql|sqlopen|hot|tags|untagged|tagsopen]...
#   ROUNDS=4 LABEL=smoke RATE=5000 SCALE=1 bench/workload/compare.sh 10s sql
#   PIN=0 bench/workload/compare.sh 8s sql sqlopen     # nothing pinned
#   WRK2=/path/to/wrk2/wrk OPEN2_RATES="5000 20000" OPEN2_TICKS="auto 0s 1ms" bench/workload/compare.sh 8s open2
#
# open2 is the open loop against wrk2 at each of OPEN2_RATES (16 connections
# on both sides), with whole-process CPU on both sides (benchbook runs with
# no warmup, so every request it counts is one it sent), once per benchbook
# tick in OPEN2_TICKS: auto is benchbook's default (each request at its
# intended start up to 2,500 req/s, a 400 µs tick above), 0s sends each
# request at its intended start, 1ms wakes once a millisecond as wrk2 does. wrk2 is not
# packaged and nothing here builds it: build it from its source
# (github.com/giltene/wrk2) and point WRK2 at the binary; without it the
# section is skipped with a message. Keep open2 runs at 10 s or less: wrk2
# resets its latency histogram after a 10 s calibration.
#
# Every round runs the peer and benchbook back to back, in counterbalanced
# order (round 1 peer first, round 2 benchbook first, ...: ABBA over two
# rounds), so drift of the box does not favour whoever runs first. Each run's
# whole output goes to its own file under bench/workload/raw/<UTC time>[-LABEL]/
# with the 1-minute load average before and after it; meta.txt says what ran
# where. Nothing is aggregated here: the tables come from
#
#   go run ./bench/workload/results -write bench/RESULTS.md bench/workload/raw/<dir>
#
# or, with WRITE=bench/RESULTS.md, by this script once its runs are done
# (the generated section of that file is replaced; the raw files stay).
# Issue 38's figures in one command (HTTP closed loop against wrk, open loop
# at 5,000 req/s at benchbook's default precision against wrk2):
#
#   WRK2=/path/to/wrk2 OPEN2_RATES=5000 OPEN2_TICKS=auto ROUNDS=4 LABEL=issue38 \
#     WRITE=bench/RESULTS.md bench/workload/compare.sh 8s http open2
#
# tags, untagged and tagsopen put no peer beside benchbook but benchbook
# before request mixes (the commit in testdata/tags_ref.txt, built from git,
# tool "untagged"), both on the same target, to price issue 50's tagging:
# tags is the closed loop sending a mix of 4 tagged requests (-mix 4)
# against the untagged build's one request, untagged the current build's
# untagged loop against it (an untagged run must cost what it did), and
# tagsopen the mix in the open loop at RATE. Whole-process CPU on both sides,
# no warmup.
#
# Duration defaults to 10s (whole seconds: pgbench -T), ROUNDS to 4 (keep it
# even), and with no sections named all five run. The sql sections need root
# (a throwaway cluster runs as the postgres user).
set -euo pipefail
cd "$(dirname "$0")/../.."
D=${1:-10s}
shift || true
SECTIONS=${*:-http httpfree open open2 sql sqlopen hot}
# tags, untagged, tagsopen: only when named.
want() { [[ " $SECTIONS " == *" $1 "* ]]; }
ROUNDS=${ROUNDS:-4}
C=16
RATE=${RATE:-5000}
OPEN2_RATES=${OPEN2_RATES:-5000 20000}
OPEN2_TICKS=${OPEN2_TICKS:-auto 0s 1ms}
SCALE=${SCALE:-1}
PATH=$PATH:$HOME/go/bin
RAW=bench/workload/raw/$(date -u +%Y%m%dT%H%M%SZ)${LABEL:+-$LABEL}
mkdir -p "$RAW"
bench/workload/install_peers.sh >/dev/null
WL=${TMPDIR:-/tmp}/wlbench-$$ # this run's own build: another run may be building its own
go build -o "$WL" ./bench/workload
WLREF=${TMPDIR:-/tmp}/wlbench-untagged-$$
if want tags || want untagged || want tagsopen; then
	bench/workload/build_ref.sh "$WLREF" bench/workload/testdata/tags_ref.txt
fi
# PIN=0 pins nothing, in every section (as most people run a benchmark).
pin_target="taskset -c 0"
pin_client="taskset -c 1"
if [ "${PIN:-1}" = 0 ]; then pin_target= pin_client=; fi
cpu() { $pin_client "$WL" cpu -- "$@"; }
load1() { cut -d' ' -f1 /proc/loadavg; }

{
	echo "label=${LABEL:-}"
	echo "started=$(date -u +%FT%TZ)"
	echo "git=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!bench/workload/raw' || echo -dirty)"
	echo "duration=$D"
	echo "rounds=$ROUNDS"
	echo "connections=$C"
	echo "rate=$RATE"
	echo "scale=$SCALE"
	echo "sections=$SECTIONS"
	echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
	echo "cores=$(nproc)"
	echo "kernel=$(uname -r)"
	echo "go=$(go env GOVERSION)"
	if [ "${PIN:-1}" = 0 ]; then echo "pinning=none (PIN=0)"; else echo "pinning=target on CPU 0, generator on CPU 1 (httpfree: neither pinned)"; fi
	echo "load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$RAW/meta.txt"
if want tags || want untagged || want tagsopen; then
	echo "untagged_build=git $(grep -v '^#' bench/workload/testdata/tags_ref.txt | head -1)" >>"$RAW/meta.txt"
fi
if want open2; then
	if [ -x "${WRK2:-}" ]; then
		echo "open2_rates=$OPEN2_RATES" >>"$RAW/meta.txt"
		echo "open2_ticks=$OPEN2_TICKS" >>"$RAW/meta.txt"
	else
		echo "open2 skipped: set WRK2 to a wrk2 binary (not packaged: build it from its source, github.com/giltene/wrk2, with make)" >&2
		echo "open2=skipped: WRK2 not set to a wrk2 binary" >>"$RAW/meta.txt"
		SECTIONS=" $SECTIONS "
		SECTIONS=${SECTIONS/ open2 / }
	fi
fi

# measure SECTION ROUND SLOT TOOL FUNC: runs FUNC, keeping its whole output
# between a header and a footer of key=value lines.
measure() {
	local f="$RAW/$1-r$2-$3-$4.txt"
	{
		echo "section=$1"
		echo "round=$2"
		echo "slot=$3"
		echo "tool=$4"
		echo "started=$(date -u +%FT%TZ)"
		echo "load1_before=$(load1)"
		echo "---"
	} >"$f"
	"$5" >>"$f" 2>&1 || echo "exit=$?" >>"$f"
	{
		echo "---"
		echo "load1_after=$(load1)"
	} >>"$f"
	echo "$f"
}

# pair SECTION ROUND PEER PEERFUNC OURFUNC: odd rounds the peer first,
# even rounds benchbook first.
pair() {
	if (($2 % 2)); then
		measure "$1" "$2" 1 "$3" "$4"
		measure "$1" "$2" 2 benchbook "$5"
	else
		measure "$1" "$2" 1 benchbook "$5"
		measure "$1" "$2" 2 "$3" "$4"
	fi
}

URL=http://127.0.0.1:8089/
wrk_http() { cpu wrk -t1 -c$C -d"$D" --latency $URL; }
# httpfree: the same closed loop with nothing pinned, as most people run it
# (a second target, unpinned, on its own port).
FREEURL=http://127.0.0.1:8091/
wrk_httpfree() { "$WL" cpu -- wrk -t1 -c$C -d"$D" --latency $FREEURL; }
ours_httpfree() { "$WL" http -url $FREEURL -clients $C -duration "$D"; }
# whole process and no warmup, as wrk is measured (issue 38; before, the
# measurement window of a run with a 2 s warmup)
ours_http() { cpu "$WL" http -url $URL -clients $C -duration "$D" -warmup 0s; }
vegeta_open() {
	echo "GET $URL" | cpu sh -c "vegeta attack -rate $RATE -duration $D -connections $C > /tmp/wlbench-vegeta.bin"
	vegeta report -type=text /tmp/wlbench-vegeta.bin
	rm -f /tmp/wlbench-vegeta.bin
}
ours_open() { $pin_client "$WL" http -url $URL -rate "$RATE" -clients 256 -duration "$D"; }
wrk2_open() { cpu "$WRK2" -t1 -c$C -d"$D" -R"$R2" --latency $URL; }
ours_open2() { cpu "$WL" http -url $URL -rate "$R2" -clients $C -duration "$D" -warmup 0s -tick "$T2"; }

untagged_http() { cpu "$WLREF" http -url $URL -clients $C -duration "$D" -warmup 0s; }
tags_http() { cpu "$WL" http -url $URL -clients $C -duration "$D" -warmup 0s -mix 4; }
untagged_open() { cpu "$WLREF" http -url $URL -rate "$RATE" -clients $C -duration "$D" -warmup 0s; }
tags_open() { cpu "$WL" http -url $URL -rate "$RATE" -clients $C -duration "$D" -warmup 0s -mix 4; }

if want http || want httpfree || want open || want open2 || want tags || want untagged || want tagsopen; then
	$pin_target "$WL" hello -addr 127.0.0.1:8089 &
	HELLO=$!
	FREE=$HELLO
	if want httpfree; then
		"$WL" hello -addr 127.0.0.1:8091 &
		FREE=$!
	fi
	trap 'kill $HELLO $FREE 2>/dev/null || true' EXIT
	sleep 1
	for round in $(seq "$ROUNDS"); do
		if want http; then pair http "$round" wrk wrk_http ours_http; fi
		if want httpfree; then pair httpfree "$round" wrk wrk_httpfree ours_httpfree; fi
		if want open; then pair open "$round" vegeta vegeta_open ours_open; fi
		if want tags; then pair tags "$round" untagged untagged_http tags_http; fi
		if want untagged; then pair untagged "$round" untagged untagged_http ours_http; fi
		if want tagsopen; then pair tagsopen "$round" untagged untagged_open tags_open; fi
		if want open2; then
			for R2 in $OPEN2_RATES; do
				for T2 in $OPEN2_TICKS; do
					name=open2-$R2
					[ "$T2" = 0s ] || name=$name-tick$T2
					pair "$name" "$round" wrk2 wrk2_open ours_open2
				done
			done
		fi
	done
	kill $HELLO $FREE 2>/dev/null || true
	trap - EXIT
fi

if want sql || want sqlopen; then
	PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
	PGDIR=$(mktemp -d /tmp/wlbench-pg.XXXX)
	chmod 755 "$PGDIR"
	chown postgres "$PGDIR"
	runuser -u postgres -- "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U postgres --no-sync >/dev/null
	runuser -u postgres -- $pin_target "$PGBIN/postgres" -D "$PGDIR/data" -p 5499 -k "$PGDIR" -c listen_addresses= -c max_connections=100 >/dev/null 2>&1 &
	trap 'runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDIR/data" stop -m immediate >/dev/null; rm -rf "$PGDIR"' EXIT
	until runuser -u postgres -- "$PGBIN/pg_isready" -h "$PGDIR" -p 5499 >/dev/null; do sleep 0.2; done
	runuser -u postgres -- pgbench -i -q -s "$SCALE" -h "$PGDIR" -p 5499 postgres >/dev/null 2>&1
	echo "postgres=$("$PGBIN/postgres" --version)" >>"$RAW/meta.txt"
	PG="-U postgres -S -M prepared -c $C -j 1 -T ${D%s} -h $PGDIR -p 5499 postgres"
	DSN="host=$PGDIR port=5499 user=postgres dbname=postgres"
	pgbench_sql() { cpu pgbench $PG; }
	ours_sql() { $pin_client "$WL" sql -dsn "$DSN" -scale "$SCALE" -clients $C -duration "$D"; }
	pgbench_sqlopen() { cpu pgbench $PG -R "$RATE"; }
	# whole process and no warmup, as pgbench -R is measured (issue 16)
	# pgbench -R starts transactions on a Poisson schedule (its documentation
	# of --rate): benchbook draws the same kind of schedule, whose bunched
	# arrivals share wake-ups that evenly spaced ones cannot.
	ours_sqlopen() { cpu "$WL" sql -dsn "$DSN" -scale "$SCALE" -rate "$RATE" -arrival poisson -clients $C -duration "$D" -warmup 0s; }
	echo "sqlopen_arrival=Poisson (arrival = \"poisson\"), as pgbench -R's schedule" >>"$RAW/meta.txt"
	for round in $(seq "$ROUNDS"); do
		if want sql; then pair sql "$round" pgbench pgbench_sql ours_sql; fi
		if want sqlopen; then pair sqlopen "$round" pgbench-R pgbench_sqlopen ours_sqlopen; fi
	done
fi

if want hot; then
	hot() { go test -run '^$' -bench 'Record|Progress|HTTPRoundTrip' -benchtime 200ms -benchmem ./builtins/workload/loadgen; }
	measure hot 1 1 benchbook hot
fi
echo "load_at_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$RAW/meta.txt"
rm -f "$WL" "$WLREF"
if [ -n "${WRITE:-}" ]; then
	go run ./bench/workload/results -write "$WRITE" "$RAW"
	echo "raw outputs in $RAW; tables written to $WRITE"
else
	echo "raw outputs in $RAW; tables: go run ./bench/workload/results -write bench/RESULTS.md $RAW"
fi
