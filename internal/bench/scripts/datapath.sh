#!/bin/bash
# datapath.sh ROUNDS REPLICATION tcp|unix [HDFS_BINARY]
#
# The data-path figures of docs/PERFORMANCE.md: a minicluster in its own
# process (tcp: `-tcponly`, every connection over loopback TCP; unix: the
# default, the client and the DataNodes reach each other through domain
# sockets), then ROUNDS rounds of (a) dd writing 1 GiB into the page cache,
# (b) `hdfs bench io` writing one 1 GiB file, (c) reading it back warm. As
# root, the page cache is dropped before (a) and (b): on the VMs we measure
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
for r in $(seq "$rounds"); do
	prep
	# dd's rate and its system CPU: 0.2 s means fast pages, 2-4 s slow ones.
	dd=$( { TIMEFORMAT='%S'; time dd if=/dev/zero of="$dir/dd" bs=1M count=1024; } 2>&1 |
		awk '/copied/ { r = $(NF-1) " " $NF } /^[0-9.]+$/ { c = $1 } END { print r " (" c " CPU-s)" }')
	rm -f "$dir/dd"
	"$bin" dfs -fs "$uri" -rm -r -skipTrash /benchmarks >/dev/null 2>&1 || true
	sleep 1
	prep
	w=$("$bin" bench io -fs "$uri" -nrFiles 1 -size 1g -replication "$rep" -cpupid $pid -write)
	rd=$("$bin" bench io -fs "$uri" -nrFiles 1 -size 1g -replication "$rep" -cpupid $pid -read)
	printf 'round %d: dd %s | write %s MB/s (client %s, datanodes %s CPU-s/GiB) | warm read %s MB/s (client %s, datanodes %s)\n' "$r" "$dd" \
		"$(field Throughput <<<"$w")" "$(field 'this process' <<<"$w")" "$(field "process $pid" <<<"$w")" \
		"$(field Throughput <<<"$rd")" "$(field 'this process' <<<"$rd")" "$(field "process $pid" <<<"$rd")"
done
