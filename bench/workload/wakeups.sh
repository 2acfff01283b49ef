#!/bin/bash
# Where an open loop's CPU goes: perf profiles and counts of benchbook's
# precise open loop (tick = 0), its default (tick = auto) and wrk2, each
# at RATE req/s against the same loopback target (target on CPU 0,
# generator on CPU 1, 16 connections). Needs perf (Debian's linux-perf)
# with kernel symbols readable, and WRK2 pointing at a wrk2 binary (not
# packaged and not built here: build it from github.com/giltene/wrk2).
#
#   WRK2=/path/to/wrk RATES="5000 20000" bench/workload/wakeups.sh [duration]
#
# Writes one file per tool and rate under bench/workload/raw/<UTC time>-wakeups/:
# perf stat (task-clock, context switches, the wake-ups and IPIs it sends to
# other threads, the loop's system calls) and the
# top of a cpu-clock profile by symbol, with the call chain of the hottest
# kernel symbol. Sampling at 10 kHz inflates every figure alike; read the
# shares, and the counts from perf stat.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=${1:-5s}
RATES=${RATES:-5000 20000}
[ -x "${WRK2:-}" ] || { echo "set WRK2 to a wrk2 binary (build it from its source, github.com/giltene/wrk2)" >&2; exit 2; }
command -v perf >/dev/null || apt-get install -y linux-perf >/dev/null
RAW=bench/workload/raw/$(date -u +%Y%m%dT%H%M%SZ)-wakeups
mkdir -p "$RAW"
WL=${TMPDIR:-/tmp}/wlbench-$$
go build -o "$WL" ./bench/workload
taskset -c 0 "$WL" hello -addr 127.0.0.1:8090 &
HELLO=$!
trap 'kill $HELLO 2>/dev/null || true; rm -f "$WL" "$RAW"/*.data' EXIT
sleep 1
URL=http://127.0.0.1:8090/
EVENTS=task-clock,context-switches,sched:sched_wakeup,ipi:ipi_send_cpu,raw_syscalls:sys_enter,syscalls:sys_enter_write,syscalls:sys_enter_read,syscalls:sys_enter_recvmsg,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_epoll_pwait2
one() { # NAME COMMAND...: perf stat, then perf record, of one run
	local name=$1 f="$RAW/$1.txt"
	shift
	{
		echo "tool=$name"
		echo "started=$(date -u +%FT%TZ)"
		echo "load1_before=$(cut -d' ' -f1 /proc/loadavg)"
		echo "command=$*"
		echo "--- perf stat"
	} >"$f"
	taskset -c 1 perf stat -e "$EVENTS" -- "$@" >>"$f" 2>&1
	echo "--- perf record -e cpu-clock -F 10000 -g (a second run)" >>"$f"
	taskset -c 1 perf record -q -e cpu-clock -F 10000 -g -o "$RAW/$name.data" -- "$@" >>"$f" 2>&1
	local report top
	report=$(perf report -i "$RAW/$name.data" --no-children --sort sym --stdio -g none 2>/dev/null || true)
	grep -E '^#.*(Samples|Event count)|^ +[0-9]' <<<"$report" | sed -n 1,30p >>"$f" || true
	top=$(grep -E '^ +[0-9].*\[k\]' <<<"$report" | sed -n 1p | awk '{print $3}')
	echo "--- call chain of $top" >>"$f"
	perf report -i "$RAW/$name.data" --no-children --sort sym --stdio -G -S "$top" 2>/dev/null | grep -E '[0-9]+\.[0-9]+%--' | sed -n 1,40p >>"$f" || true
	echo "load1_after=$(cut -d' ' -f1 /proc/loadavg)" >>"$f"
	rm -f "$RAW/$name.data"
	echo "$f"
}
for R in $RATES; do
	one "wrk2-$R" "$WRK2" -t1 -c16 -d"$D" -R"$R" $URL
	one "benchbook-$R-tick0s" "$WL" http -url $URL -rate "$R" -clients 16 -duration "$D" -warmup 0s -tick 0s
	one "benchbook-$R-tickauto" "$WL" http -url $URL -rate "$R" -clients 16 -duration "$D" -warmup 0s -tick auto
done
