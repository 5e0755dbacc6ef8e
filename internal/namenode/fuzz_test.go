package namenode

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// The decoders of the NameNode's RPC bodies must allocate in proportion to
// the bytes a peer sends, whatever it claims inside them. The bounds below
// are generous for protobuf's own decoding (a message struct per two bytes
// of nested empty messages) and far below what sizing by a claimed count
// costs (gigabytes).
const (
	allocPerByte = 256
	allocFixed   = 256 << 10
)

// requestTypes are the request messages of a service, in method order.
func requestTypes(t testing.TB, service protoreflect.FullName) []protoreflect.MessageType {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(service)
	if err != nil {
		t.Fatal(err)
	}
	methods := d.(protoreflect.ServiceDescriptor).Methods()
	var out []protoreflect.MessageType
	for i := range methods.Len() {
		mt, err := protoregistry.GlobalTypes.FindMessageByName(methods.Get(i).Input().FullName())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, mt)
	}
	return out
}

// FuzzClientRequest decodes arbitrary bytes as the body of any
// ClientProtocol request (the first byte picks the method) and runs the
// edge checks on it, within the allocation bound.
func FuzzClientRequest(f *testing.F) {
	types := requestTypes(f, "hdfsgo.hadoop.hdfs.ClientNamenodeProtocol")
	seed, _ := proto.Marshal(&hdfs.CreateRequestProto{Src: proto.String("/a/b"), ClientName: proto.String("c")})
	for i := range 8 {
		f.Add(append([]byte{byte(i)}, seed...))
	}
	f.Add([]byte{0, 0x0a, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		mt := types[int(data[0])%len(types)]
		testtool.AllocBound(t, len(data), allocPerByte, allocFixed, func() {
			m := mt.New().Interface()
			if err := proto.Unmarshal(data[1:], m); err != nil {
				return
			}
			_ = checkRequest(string(mt.Descriptor().Name()), m)
		})
	})
}

// FuzzBlockReport decodes arbitrary bytes as a DatanodeProtocol blockReport
// body and decodes every storage's replicas, within the allocation bound:
// numberOfBlocks is only a claim.
func FuzzBlockReport(f *testing.F) {
	var buf []byte
	for _, v := range []uint64{protowire.EncodeZigZag(5), 100, 7, 2} {
		buf = protowire.AppendVarint(buf, v)
	}
	for _, n := range []uint64{1, 1 << 26, 1 << 62} {
		b, _ := proto.Marshal(&dnpb.BlockReportRequestProto{BlockPoolId: proto.String("BP-1"),
			Reports: []*dnpb.StorageBlockReportProto{{NumberOfBlocks: proto.Uint64(n), BlocksBuffers: [][]byte{buf}}}})
		f.Add(b)
	}
	legacy, _ := proto.Marshal(&dnpb.BlockReportRequestProto{BlockPoolId: proto.String("BP-1"),
		Reports: []*dnpb.StorageBlockReportProto{{Blocks: []uint64{1, 0, 5, 100, 7}}}})
	f.Add(legacy)
	f.Fuzz(func(t *testing.T, data []byte) {
		testtool.AllocBound(t, len(data), allocPerByte, allocFixed, func() {
			var req dnpb.BlockReportRequestProto
			if err := proto.Unmarshal(data, &req); err != nil {
				return
			}
			for _, r := range req.GetReports() {
				it, err := decodeBlockReport(r)
				if err != nil {
					continue
				}
				n := 0
				for _, ok := it.Next(); ok; _, ok = it.Next() {
					n++
				}
				if len(r.GetBlocksBuffers()) > 0 && uint64(n) != r.GetNumberOfBlocks() {
					t.Fatalf("decoded %d replicas from a report claiming %d", n, r.GetNumberOfBlocks())
				}
			}
		})
	})
}

// FuzzJournalRequest decodes arbitrary bytes as the body of a
// JournalProtocol journal call, as a Backup Node does before applying it:
// the request, then its records (editlog.DecodeBatch), within the
// allocation bound: numTxns is only a claim.
func FuzzJournalRequest(f *testing.F) {
	var records []byte
	for i, o := range []op.Op{&op.StartLogSegment{}, &op.Mkdir{InodeID: 16386, Path: "/a", Perm: op.Perm{User: "u", Group: "g", Mode: 0o755}}} {
		records, _ = editlog.EncodeRecord(records, int64(7+i), o)
	}
	for _, n := range []uint32{2, 1 << 31} {
		b, _ := proto.Marshal(&hdfs.JournalRequestProto{JournalInfo: &hdfs.JournalInfoProto{ClusterID: proto.String("CID-1")},
			FirstTxnId: proto.Uint64(7), NumTxns: proto.Uint32(n), Records: records, Epoch: proto.Uint64(0)})
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		testtool.AllocBound(t, len(data), allocPerByte, allocFixed, func() {
			var req hdfs.JournalRequestProto
			if err := proto.Unmarshal(data, &req); err != nil {
				return
			}
			if checkRequest("journal", &req) != nil {
				return
			}
			ops, err := editlog.DecodeBatch(req.GetRecords(), int64(req.GetFirstTxnId()), int(req.GetNumTxns()))
			if err == nil && len(ops) != int(req.GetNumTxns()) {
				t.Fatalf("decoded %d records from a batch claiming %d", len(ops), req.GetNumTxns())
			}
		})
	})
}
