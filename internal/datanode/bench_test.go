package datanode

import (
	"bytes"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

const benchBlock = 32 << 20

// BenchmarkWriteBlock streams one block per iteration to a single DataNode
// (replication 1) in 64 KiB packets.
func BenchmarkWriteBlock(b *testing.B) {
	nn := newFakeNN(b, "CID-bench")
	dn := startDN(b, nn)
	data := randomData(benchBlock, 7)
	b.SetBytes(benchBlock)
	b.ResetTimer()
	for i := range b.N {
		dial(b, dn).writeBlock(int64(1000+i), 1001, nil, data, []int{len(data)}, nil)
	}
}

// BenchmarkWriteBlockPipeline3 is BenchmarkWriteBlock through three
// DataNodes.
func BenchmarkWriteBlockPipeline3(b *testing.B) {
	nn := newFakeNN(b, "CID-bench")
	dns := []*DataNode{startDN(b, nn), startDN(b, nn), startDN(b, nn)}
	data := randomData(benchBlock, 8)
	b.SetBytes(benchBlock)
	b.ResetTimer()
	for i := range b.N {
		dial(b, dns[0]).writeBlock(int64(1000+i), 1001, []*hdfs.DatanodeInfoProto{info(dns[1]), info(dns[2])}, data, []int{len(data)}, nil)
	}
}

// BenchmarkReadBlock reads a whole block per iteration with READ_BLOCK.
func BenchmarkReadBlock(b *testing.B) {
	nn := newFakeNN(b, "CID-bench")
	dn := startDN(b, nn)
	data := randomData(benchBlock, 9)
	dial(b, dn).writeBlock(5, 1001, nil, data, []int{len(data)}, nil)
	b.SetBytes(benchBlock)
	b.ResetTimer()
	for range b.N {
		got := dial(b, dn).readBlock(5, 1001, 0, benchBlock)
		if !bytes.Equal(got[:4096], data[:4096]) {
			b.Fatal("wrong bytes")
		}
	}
}
