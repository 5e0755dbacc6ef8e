package namenode

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// BenchmarkGetFileInfoHandler is the NameNode's own share of a getFileInfo
// call, without the RPC transport: the request checks, the lookup under
// the read lock, building the response and encoding it. Its allocations
// per call do not depend on the machine's load.
func BenchmarkGetFileInfoHandler(b *testing.B) {
	nn, c := startWith(b)
	const path = "/d1/d2/d3/d4/d5/file"
	createClosed(b, c, path)
	rpc := &clientRPC{nn: nn, ns: nn.ns}
	ctx := context.Background()
	req := &hdfs.GetFileInfoRequestProto{Src: proto.String(path)}
	var buf []byte
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := nn.precheck(ctx, categories[ClientProtocolName]["getFileInfo"], "getFileInfo", req); err != nil {
			b.Fatal(err)
		}
		resp, err := rpc.getFileInfo(ctx, req)
		if err != nil || resp.Fs == nil {
			b.Fatal(resp, err)
		}
		if buf, err = (proto.MarshalOptions{}).MarshalAppend(buf[:0], resp); err != nil {
			b.Fatal(err)
		}
	}
}
