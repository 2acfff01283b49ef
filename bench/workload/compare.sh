#!/bin/bash
# Side-by-side comparison of benchbook's workload module with wrk, vegeta
# and pgbench on one machine: target pinned to CPU 0, load generator to CPU 1.
# Prints one line per tool; copy the figures into bench/RESULTS.md.
#
#   bench/workload/compare.sh [duration] [http|open|sql|hot]...
#   ROUNDS=3 bench/workload/compare.sh 10s sql   (alternate the peers 3 times)
#
# Duration defaults to 10s; with no sections named, all four run. The sql
# section needs root (it starts a throwaway cluster as the postgres user).
set -euo pipefail
cd "$(dirname "$0")/../.."
D=${1:-10s}
shift || true
SECTIONS=${*:-http open sql hot}
want() { [[ " $SECTIONS " == *" $1 "* ]]; }
C=16
RATE=${RATE:-5000}
PATH=$PATH:$HOME/go/bin
bench/workload/install_peers.sh >/dev/null
go build -o /tmp/wlbench ./bench/workload
pin_target="taskset -c 0"
pin_client="taskset -c 1"
cpu() { $pin_client /tmp/wlbench cpu -- "$@"; }

if want http || want open; then
$pin_target /tmp/wlbench hello -addr 127.0.0.1:8089 & HELLO=$!
trap 'kill $HELLO 2>/dev/null || true' EXIT
sleep 1
fi
if want http; then
echo "## HTTP closed loop, $C connections, $D"
for round in $(seq "${ROUNDS:-1}"); do
out=$(cpu wrk -t1 -c$C -d$D http://127.0.0.1:8089/)
reqs=$(grep -oE '^ +[0-9]+ requests' <<<"$out" | awk '{print $1}')
cpus=$(grep -oE 'cpu_s=[0-9.]+' <<<"$out" | cut -d= -f2)
echo "round=$round tool=wrk rps=$(grep Requests/sec <<<"$out" | awk '{print $2}') cpu_us_per_req=$(awk -v c=$cpus -v r=$reqs 'BEGIN{printf "%.2f", c*1e6/r}')"
echo -n "round=$round "
$pin_client /tmp/wlbench http -url http://127.0.0.1:8089/ -clients $C -duration $D
done
fi
if want open; then
echo "## HTTP open loop, $RATE req/s, $D (vegeta's latency counts from the actual send: compare it with service_p50_ms)"
for round in $(seq "${ROUNDS:-1}"); do
echo "GET http://127.0.0.1:8089/" | cpu sh -c "vegeta attack -rate $RATE -duration $D -connections $C > /tmp/vegeta.bin" | sed "s/^/round=$round vegeta attack /"
vegeta report -type=text /tmp/vegeta.bin | grep -E 'Requests|Latencies' | sed "s/^/round=$round vegeta /"
echo -n "round=$round "
$pin_client /tmp/wlbench http -url http://127.0.0.1:8089/ -rate $RATE -clients 256 -duration $D
done
fi
if want http || want open; then kill $HELLO; trap - EXIT; fi

if want sql; then

echo "## SQL point selects (pgbench -S -M prepared), $C clients, $D"
PGBIN=/usr/lib/postgresql/15/bin
PGDIR=$(mktemp -d /tmp/wlbench-pg.XXXX); chmod 755 "$PGDIR"; chown postgres "$PGDIR"
runuser -u postgres -- $PGBIN/initdb -D "$PGDIR/data" -A trust -U postgres --no-sync >/dev/null
runuser -u postgres -- $pin_target $PGBIN/postgres -D "$PGDIR/data" -p 5499 -k "$PGDIR" -c listen_addresses= -c max_connections=100 >/dev/null 2>&1 & 
trap 'runuser -u postgres -- $PGBIN/pg_ctl -D "$PGDIR/data" stop -m immediate >/dev/null; rm -rf "$PGDIR"' EXIT
until runuser -u postgres -- $PGBIN/pg_isready -h "$PGDIR" -p 5499 >/dev/null; do sleep 0.2; done
runuser -u postgres -- pgbench -i -q -s 1 -h "$PGDIR" -p 5499 postgres >/dev/null 2>&1
for round in $(seq "${ROUNDS:-1}"); do
out=$(cpu pgbench -U postgres -S -M prepared -c $C -j 1 -T ${D%s} -h "$PGDIR" -p 5499 postgres 2>&1)
tx=$(grep -oE 'actually processed: [0-9]+' <<<"$out" | awk '{print $3}')
cpus=$(grep -oE 'cpu_s=[0-9.]+' <<<"$out" | cut -d= -f2)
echo "round=$round tool=pgbench tps=$(grep -oE 'tps = [0-9.]+' <<<"$out" | tail -1 | awk '{print $3}') cpu_us_per_req=$(awk -v c=$cpus -v r=$tx 'BEGIN{printf "%.2f", c*1e6/r}')"
echo -n "round=$round "
$pin_client /tmp/wlbench sql -dsn "host=$PGDIR port=5499 user=postgres dbname=postgres" -clients $C -duration $D
done

echo "## SQL open loop, $RATE tx/s (pgbench -R: its latency includes its schedule lag, as ours counts from the intended start)"
for round in $(seq "${ROUNDS:-1}"); do
out=$(cpu pgbench -U postgres -S -M prepared -c $C -j 1 -R $RATE -T ${D%s} -h "$PGDIR" -p 5499 postgres 2>&1)
tx=$(grep -oE 'actually processed: [0-9]+' <<<"$out" | awk '{print $3}')
cpus=$(grep -oE 'cpu_s=[0-9.]+' <<<"$out" | cut -d= -f2)
echo "round=$round tool=pgbench-R tps=$(grep -oE 'tps = [0-9.]+' <<<"$out" | tail -1 | awk '{print $3}') cpu_us_per_req=$(awk -v c=$cpus -v r=$tx 'BEGIN{printf "%.2f", c*1e6/r}') $(grep -oE 'latency average = [0-9.]+ ms|schedule lag: avg [0-9.]+' <<<"$out" | tr '\n' ' ')"
echo -n "round=$round "
$pin_client /tmp/wlbench sql -dsn "host=$PGDIR port=5499 user=postgres dbname=postgres" -rate $RATE -clients $C -duration $D
done
fi

if want hot; then
echo "## hot path (go test -bench)"
go test -run '^$' -bench 'Record|Progress|HTTPRoundTrip' -benchtime 200ms -benchmem ./builtins/workload | grep -E '^Benchmark'
fi
