package proto_test

import (
	"encoding/hex"
	"strings"
	"testing"

	_ "github.com/colinmarc/hdfs/v2" // links the stock client's hadoop.* registrations next to ours
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	_ "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	_ "github.com/hdfsgo/hdfsgo/internal/proto/namenode"
	_ "github.com/hdfsgo/hdfsgo/internal/proto/qjournal"
)

const clientProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// TestGoldenEncodings checks byte-exact encodings against vectors captured
// from the stock Go client talking to Hadoop.
func TestGoldenEncodings(t *testing.T) {
	tests := []struct {
		name string
		msg  proto.Message
		want string
	}{
		{
			name: "RpcRequestHeaderProto",
			msg: &common.RpcRequestHeaderProto{
				RpcKind:  common.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
				RpcOp:    common.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
				CallId:   proto.Int32(-3),
				ClientId: []byte("ABCDEFGHIJKLMNOP"),
			},
			want: "080210001805 2210 4142434445464748494a4b4c4d4e4f50",
		},
		{
			name: "IpcConnectionContextProto",
			msg: &common.IpcConnectionContextProto{
				UserInfo: &common.UserInformationProto{EffectiveUser: proto.String("gohdfs1")},
				Protocol: proto.String(clientProtocol),
			},
			want: "1209 0a07 676f6864667331 1a2e " + hex.EncodeToString([]byte(clientProtocol)),
		},
		{
			name: "RequestHeaderProto getFileInfo",
			msg: &common.RequestHeaderProto{
				MethodName:                 proto.String("getFileInfo"),
				DeclaringClassProtocolName: proto.String(clientProtocol),
				ClientProtocolVersion:      proto.Uint64(1),
			},
			want: "0a0b 67657446696c65496e666f 122e " + hex.EncodeToString([]byte(clientProtocol)) + " 1801",
		},
		{
			name: "GetFileInfoRequestProto",
			msg:  &hdfs.GetFileInfoRequestProto{Src: proto.String("/_test/foo.txt")},
			want: "0a0e 2f5f746573742f666f6f2e747874",
		},
		{
			name: "RpcResponseHeaderProto callId -33",
			msg: &common.RpcResponseHeaderProto{
				CallId: proto.Uint32(4294967263), // uint32(-33)
				Status: common.RpcResponseHeaderProto_SUCCESS.Enum(),
			},
			want: "08 df ff ff ff 0f 10 00",
		},
		{
			name: "RpcResponseHeaderProto success",
			msg: &common.RpcResponseHeaderProto{
				CallId:              proto.Uint32(1),
				Status:              common.RpcResponseHeaderProto_SUCCESS.Enum(),
				ServerIpcVersionNum: proto.Uint32(9),
				ClientId:            []byte("ABCDEFGHIJKLMNOP"),
				RetryCount:          proto.Int32(-1),
			},
			want: "08 01 10 00 18 09 3a 10 4142434445464748494a4b4c4d4e4f50 40 01",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := proto.MarshalOptions{Deterministic: true}.Marshal(tt.msg)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if want := mustHex(t, tt.want); string(got) != string(want) {
				t.Fatalf("encoding mismatch\n got %x\nwant %x", got, want)
			}
			back := tt.msg.ProtoReflect().New().Interface()
			if err := proto.Unmarshal(got, back); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !proto.Equal(back, tt.msg) {
				t.Fatalf("round trip changed message: %v != %v", back, tt.msg)
			}
		})
	}
}

func fullFileStatus() *hdfs.HdfsFileStatusProto {
	return &hdfs.HdfsFileStatusProto{
		FileType:         hdfs.HdfsFileStatusProto_IS_FILE.Enum(),
		Path:             []byte("foo.txt"),
		Length:           proto.Uint64(3),
		Permission:       &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)},
		Owner:            proto.String("gohdfs1"),
		Group:            proto.String("supergroup"),
		ModificationTime: proto.Uint64(1),
		AccessTime:       proto.Uint64(2),
	}
}

// TestRequiredFieldsEnforced proves the proto2 required markers made it into
// the generated code: the stock client rejects responses missing them.
func TestRequiredFieldsEnforced(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*hdfs.HdfsFileStatusProto)
		wantErr bool
	}{
		{name: "complete", mutate: func(*hdfs.HdfsFileStatusProto) {}},
		{name: "no owner", mutate: func(s *hdfs.HdfsFileStatusProto) { s.Owner = nil }, wantErr: true},
		{name: "no access_time", mutate: func(s *hdfs.HdfsFileStatusProto) { s.AccessTime = nil }, wantErr: true},
		{name: "nested perm missing", mutate: func(s *hdfs.HdfsFileStatusProto) { s.Permission.Perm = nil }, wantErr: true},
		{name: "nil path bytes", mutate: func(s *hdfs.HdfsFileStatusProto) { s.Path = nil }, wantErr: true},
		{name: "empty path bytes", mutate: func(s *hdfs.HdfsFileStatusProto) { s.Path = []byte{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fullFileStatus()
			tt.mutate(s)
			b, err := proto.MarshalOptions{AllowPartial: true, Deterministic: true}.Marshal(s)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			err = proto.Unmarshal(b, &hdfs.HdfsFileStatusProto{})
			if gotErr := err != nil; gotErr != tt.wantErr {
				t.Fatalf("Unmarshal error = %v, want error: %v", err, tt.wantErr)
			}
		})
	}
}

// ourFiles lists every .proto file of this package tree with its proto
// package. Keep in sync when adding files.
var ourFiles = map[string]string{
	"common/GetUserMappingsProtocol.proto":            "hdfsgo.hadoop.common",
	"common/HAServiceProtocol.proto":                  "hdfsgo.hadoop.common",
	"common/IpcConnectionContext.proto":               "hdfsgo.hadoop.common",
	"common/ProtobufRpcEngine.proto":                  "hdfsgo.hadoop.common",
	"common/RefreshAuthorizationPolicyProtocol.proto": "hdfsgo.hadoop.common",
	"common/RefreshCallQueueProtocol.proto":           "hdfsgo.hadoop.common",
	"common/RefreshUserMappingsProtocol.proto":        "hdfsgo.hadoop.common",
	"common/RpcHeader.proto":                          "hdfsgo.hadoop.common",
	"common/Security.proto":                           "hdfsgo.hadoop.common",
	"common/ZKFCProtocol.proto":                       "hdfsgo.hadoop.common",
	"datanode/DatanodeProtocol.proto":                 "hdfsgo.hadoop.hdfs.datanode",
	"hdfs/ClientDatanodeProtocol.proto":               "hdfsgo.hadoop.hdfs",
	"hdfs/ClientNamenodeProtocol.proto":               "hdfsgo.hadoop.hdfs",
	"hdfs/HAZKInfo.proto":                             "hdfsgo.hadoop.hdfs",
	"hdfs/HdfsServer.proto":                           "hdfsgo.hadoop.hdfs",
	"hdfs/InterDatanodeProtocol.proto":                "hdfsgo.hadoop.hdfs",
	"hdfs/JournalProtocol.proto":                      "hdfsgo.hadoop.hdfs",
	"hdfs/ReconfigurationProtocol.proto":              "hdfsgo.hadoop.hdfs",
	"hdfs/acl.proto":                                  "hdfsgo.hadoop.hdfs",
	"hdfs/datatransfer.proto":                         "hdfsgo.hadoop.hdfs",
	"hdfs/encryption.proto":                           "hdfsgo.hadoop.hdfs",
	"hdfs/erasurecoding.proto":                        "hdfsgo.hadoop.hdfs",
	"hdfs/hdfs.proto":                                 "hdfsgo.hadoop.hdfs",
	"hdfs/inotify.proto":                              "hdfsgo.hadoop.hdfs",
	"hdfs/xattr.proto":                                "hdfsgo.hadoop.hdfs",
	"namenode/NamenodeProtocol.proto":                 "hdfsgo.hadoop.hdfs.namenode",
	"qjournal/InterQJournalProtocol.proto":            "hdfsgo.hadoop.hdfs.qjournal",
	"qjournal/QJournalProtocol.proto":                 "hdfsgo.hadoop.hdfs.qjournal",
}

// TestRegistration checks that every file registers under its own path and
// prefixed package, and that nothing of ours lands in the stock client's
// hadoop.* namespace (this test binary links both).
func TestRegistration(t *testing.T) {
	for path, pkg := range ourFiles {
		fd, err := protoregistry.GlobalFiles.FindFileByPath(path)
		if err != nil {
			t.Errorf("%s not registered: %v", path, err)
			continue
		}
		if got := string(fd.Package()); got != pkg {
			t.Errorf("%s: package %q, want %q", path, got, pkg)
		}
		if fd.Syntax() != protoreflect.Proto2 {
			t.Errorf("%s: syntax %v, want proto2", path, fd.Syntax())
		}
	}
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		pkg := string(fd.Package())
		_, ours := ourFiles[fd.Path()]
		if strings.HasPrefix(pkg, "hdfsgo.") && !ours {
			t.Errorf("registered file %s (package %s) is missing from ourFiles", fd.Path(), pkg)
		}
		return true
	})
	// Both copies coexist: ours under the prefix, the stock client's without.
	for _, name := range []protoreflect.FullName{"hdfsgo.hadoop.hdfs.HdfsFileStatusProto", "hadoop.hdfs.HdfsFileStatusProto"} {
		if _, err := protoregistry.GlobalTypes.FindMessageByName(name); err != nil {
			t.Errorf("message %s not registered: %v", name, err)
		}
	}
}

// TestMatchesStockClientDescriptors compares every message we share with the
// stock client's vendored Hadoop definitions field by field: numbers, names,
// types, labels, defaults and packing must agree, and we must not lack any
// field it has. Extra fields of ours (newer Hadoop) are allowed.
func TestMatchesStockClientDescriptors(t *testing.T) {
	compared := 0
	for path := range ourFiles {
		fd, err := protoregistry.GlobalFiles.FindFileByPath(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		walkMessages(fd.Messages(), func(ours protoreflect.MessageDescriptor) {
			stockName := strip(ours.FullName())
			d, err := protoregistry.GlobalFiles.FindDescriptorByName(stockName)
			if err != nil {
				return // not vendored by the stock client
			}
			stock, ok := d.(protoreflect.MessageDescriptor)
			if !ok {
				t.Errorf("%s: stock %s is not a message", ours.FullName(), stockName)
				return
			}
			compared++
			compareMessage(t, ours, stock)
		})
		walkEnums(fd, func(ours protoreflect.EnumDescriptor) {
			d, err := protoregistry.GlobalFiles.FindDescriptorByName(strip(ours.FullName()))
			if err != nil {
				return
			}
			stock := d.(protoreflect.EnumDescriptor)
			for i := 0; i < stock.Values().Len(); i++ {
				sv := stock.Values().Get(i)
				ov := ours.Values().ByName(sv.Name())
				if ov == nil || ov.Number() != sv.Number() {
					t.Errorf("enum %s: value %s=%d missing or different", ours.FullName(), sv.Name(), sv.Number())
				}
			}
		})
	}
	t.Logf("compared %d messages with the stock client", compared)
	if compared < 300 {
		t.Fatalf("compared only %d messages with the stock client; lookup broken?", compared)
	}
}

// relaxedInHadoop34 lists fields that Hadoop 3.4 turned from required into
// optional; the stock client still vendors the older required form. We follow
// 3.4 so that decoding accepts both; encoders talking to older peers must
// still set these fields.
var relaxedInHadoop34 = map[string]bool{
	"hdfsgo.hadoop.hdfs.DataTransferTraceInfoProto.traceId":  true,
	"hdfsgo.hadoop.hdfs.DataTransferTraceInfoProto.parentId": true,
}

func strip(n protoreflect.FullName) protoreflect.FullName {
	return protoreflect.FullName(strings.TrimPrefix(string(n), "hdfsgo."))
}

func walkMessages(ms protoreflect.MessageDescriptors, f func(protoreflect.MessageDescriptor)) {
	for i := 0; i < ms.Len(); i++ {
		f(ms.Get(i))
		walkMessages(ms.Get(i).Messages(), f)
	}
}

func walkEnums(fd protoreflect.FileDescriptor, f func(protoreflect.EnumDescriptor)) {
	for i := 0; i < fd.Enums().Len(); i++ {
		f(fd.Enums().Get(i))
	}
	walkMessages(fd.Messages(), func(m protoreflect.MessageDescriptor) {
		for i := 0; i < m.Enums().Len(); i++ {
			f(m.Enums().Get(i))
		}
	})
}

func compareMessage(t *testing.T, ours, stock protoreflect.MessageDescriptor) {
	t.Helper()
	for i := 0; i < stock.Fields().Len(); i++ {
		sf := stock.Fields().Get(i)
		of := ours.Fields().ByNumber(sf.Number())
		if of == nil {
			t.Errorf("%s: missing field %d (%s)", ours.FullName(), sf.Number(), sf.Name())
			continue
		}
		where := string(ours.FullName()) + "." + string(of.Name())
		if of.Name() != sf.Name() {
			t.Errorf("%s: name differs from stock %s", where, sf.Name())
		}
		if of.Kind() != sf.Kind() {
			t.Errorf("%s: kind %v, stock %v", where, of.Kind(), sf.Kind())
		}
		relaxed := relaxedInHadoop34[where] && of.Cardinality() == protoreflect.Optional && sf.Cardinality() == protoreflect.Required
		if of.Cardinality() != sf.Cardinality() && !relaxed {
			t.Errorf("%s: cardinality %v, stock %v", where, of.Cardinality(), sf.Cardinality())
		}
		if of.IsPacked() != sf.IsPacked() {
			t.Errorf("%s: packed %v, stock %v", where, of.IsPacked(), sf.IsPacked())
		}
		if of.HasDefault() != sf.HasDefault() || (of.HasDefault() && of.Default().String() != sf.Default().String()) {
			t.Errorf("%s: default %v/%v, stock %v/%v", where, of.HasDefault(), of.Default(), sf.HasDefault(), sf.Default())
		}
		switch {
		case of.Message() != nil:
			if strip(of.Message().FullName()) != sf.Message().FullName() {
				t.Errorf("%s: type %s, stock %s", where, of.Message().FullName(), sf.Message().FullName())
			}
		case of.Enum() != nil:
			if strip(of.Enum().FullName()) != sf.Enum().FullName() {
				t.Errorf("%s: type %s, stock %s", where, of.Enum().FullName(), sf.Enum().FullName())
			}
		}
	}
}

// FuzzRpcRequestHeader feeds arbitrary bytes to the header decoder and checks
// that whatever decodes re-encodes and decodes to the same message.
func FuzzRpcRequestHeader(f *testing.F) {
	f.Add(mustHexF("08021000180522104142434445464748494a4b4c4d4e4f50"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var h common.RpcRequestHeaderProto
		if err := proto.Unmarshal(b, &h); err != nil {
			return
		}
		out, err := proto.MarshalOptions{Deterministic: true}.Marshal(&h)
		if err != nil {
			t.Fatalf("re-marshal of decoded header failed: %v", err)
		}
		var again common.RpcRequestHeaderProto
		if err := proto.Unmarshal(out, &again); err != nil {
			t.Fatalf("decoding our own encoding failed: %v", err)
		}
		if !proto.Equal(&h, &again) {
			t.Fatalf("round trip changed header")
		}
	})
}

func mustHexF(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
