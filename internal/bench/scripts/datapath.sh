#!/bin/bash
# datapath.sh ROUNDS REPLICATION tcp|unix [HDFS_BINARY]
#
# The data-path figures of docs/PERFORMANCE.md: a minicluster in its own
# process (tcp: `-tcponly`, every connection over loopback TCP; unix: the
# default, the client and the DataNodes reach each other through domain
# sockets), then ROUNDS rounds of (a) dd writing 1 GiB into the page cache
# (and, at replication R > 1, R GiB: what the replicas write),
# (b) `hdfs bench io` writing one 1 GiB file, (c) reading it back warm, (d)
# reading it again after dropping the page cache. Before the rounds it prints
# the machine's raw figures of the same sitting: dd with fdatasync, dd's warm
# and cold read of that file, and one loopback TCP stream (a Go benchmark).
# As root, the page cache is dropped before (a) and (b): on the VMs we measure
# on, a write into pages the guest freed a moment ago is up to 10x cheaper
# than one into pages it has not touched for a while, and dropping the cache
# gives dd and hdfsgo the same start.
set -euo pipefail
rounds=${1:?rounds}
rep=${2:?replication}
mode=${3:?tcp or unix}
bin=${4:-}
if [ -z "$bin" ]; then
	bin=$(mktemp -d)/hdfs
	go build -o "$bin" ./cmd/hdfs
fi
dir=$(mktemp -d)
case $mode in
tcp) flags=-tcponly ;;
unix) flags= ;;
*) echo "mode must be tcp or unix" >&2; exit 2 ;;
esac
"$bin" minicluster -nnport 0 -dir "$dir/mc" $flags >"$dir/mc.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do
	grep -q 'hdfs://' "$dir/mc.log" && break
	sleep 0.2
done
uri=$(grep -o 'hdfs://[0-9.:]*' "$dir/mc.log" | head -1)
export HADOOP_CONF_DIR=$dir/mc/conf
prep() {
	sync
	if [ -w /proc/sys/vm/drop_caches ]; then echo 3 >/proc/sys/vm/drop_caches; fi
}
field() { awk -v k="$1" 'index($0, k) { print $NF; exit }'; }
rate() { awk '/copied/ { print $(NF-1) " " $NF }'; }

prep
echo "raw: dd write + fdatasync, 1 GiB: $(dd if=/dev/zero of="$dir/dd" bs=1M count=1024 conv=fdatasync 2>&1 | rate)"
echo "raw: dd warm read: $(dd if="$dir/dd" of=/dev/null bs=1M 2>&1 | rate)"
prep
echo "raw: dd cold read (page cache dropped): $(dd if="$dir/dd" of=/dev/null bs=1M 2>&1 | rate)"
rm -f "$dir/dd"
if command -v go >/dev/null && [ -f internal/bench/bench_test.go ]; then
	go test -run '^$' -bench LoopbackTCP -benchtime 2s ./internal/bench |
		awk '/^BenchmarkLoopbackTCP/ { print "raw: loopback TCP, one stream, " $1 ": " $(NF-1) " " $NF }'
fi
# ddwrite MiB: dd's rate writing MiB into the page cache, and its system CPU.
ddwrite() {
	{ TIMEFORMAT='%S'; time dd if=/dev/zero of="$dir/dd" bs=1M count="$1"; } 2>&1 |
		awk '/copied/ { r = $(NF-1) " " $NF } /^[0-9.]+$/ { c = $1 } END { print r " (" c " CPU-s)" }'
	rm -f "$dir/dd"
}
for r in $(seq "$rounds"); do
	prep
	# dd's rate and its system CPU: 0.2 s means fast pages, 2-4 s slow ones.
	dd=$(ddwrite 1024)
	if [ "$rep" -gt 1 ]; then
		# The replicas put REPLICATION GiB into the one page cache: dd
		# writing as much is the like-for-like figure.
		prep
		dd="$dd, ${rep} GiB: $(ddwrite $((1024 * rep)))"
	fi
	"$bin" dfs -fs "$uri" -rm -r -skipTrash /benchmarks >/dev/null 2>&1 || true
	sleep 1
	prep
	w=$("$bin" bench io -fs "$uri" -nrFiles 1 -size 1g -replication "$rep" -cpupid $pid -write)
	rd=$("$bin" bench io -fs "$uri" -nrFiles 1 -size 1g -replication "$rep" -cpupid $pid -read)
	prep
	cr=$("$bin" bench io -fs "$uri" -nrFiles 1 -size 1g -replication "$rep" -cpupid $pid -read)
	printf 'round %d: dd %s | write %s MB/s (client %s, datanodes %s CPU-s/GiB) | warm read %s MB/s (client %s, datanodes %s) | cold read %s MB/s (client %s, datanodes %s)\n' "$r" "$dd" \
		"$(field Throughput <<<"$w")" "$(field 'this process' <<<"$w")" "$(field "process $pid" <<<"$w")" \
		"$(field Throughput <<<"$rd")" "$(field 'this process' <<<"$rd")" "$(field "process $pid" <<<"$rd")" \
		"$(field Throughput <<<"$cr")" "$(field 'this process' <<<"$cr")" "$(field "process $pid" <<<"$cr")"
done
