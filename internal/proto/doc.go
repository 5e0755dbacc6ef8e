// Package proto holds the protobuf definitions of the Hadoop 3.x wire
// protocols that hdfsgo speaks, and the Go code generated from them.
//
// The .proto files are written for this project and are wire-compatible with
// Hadoop's: every message, field name, field number, type, proto2 label
// (required/optional/repeated), packed flag, default and enum value matches
// the Hadoop 3.x definition. Service blocks are kept as documentation of the
// RPC method names; no service code is generated. The generated types live in
// sub-packages, one per Hadoop proto package:
//
//	internal/proto/common    hadoop.common         (RPC headers, SASL, tokens, HA)
//	internal/proto/hdfs      hadoop.hdfs           (client protocols, data transfer)
//	internal/proto/datanode  hadoop.hdfs.datanode  (DatanodeProtocol)
//	internal/proto/namenode  hadoop.hdfs.namenode  (NamenodeProtocol)
//	internal/proto/qjournal  hadoop.hdfs.qjournal  (QJournalProtocol, InterQJournalProtocol)
//
// Where the common messages sit in a Hadoop RPC v9 call (after the
// connection preamble and the IpcConnectionContextProto):
//
//	+----------------+------------------------+---------------------+------------------+
//	| length, 4 B BE | varint len + RpcRequest| varint len + Request| varint len + the |
//	| (sum of rest)  | HeaderProto (common)   | HeaderProto (common)| method's request |
//	+----------------+------------------------+---------------------+------------------+
//
// and a response:
//
//	+----------------+-------------------------+-------------------------------+
//	| length, 4 B BE | varint len + RpcResponse| varint len + response message |
//	|                | HeaderProto (common)    | (only when status is SUCCESS) |
//	+----------------+-------------------------+-------------------------------+
//
// Where Hadoop 3.4 differs from 3.3 the 3.4 definition is used (it only adds
// optional fields and messages, and relaxes DataTransferTraceInfoProto's
// traceId/parentId from required to optional; set both when talking to
// older peers).
//
// # Package-name prefix
//
// Our proto packages are Hadoop's with an "hdfsgo." prefix (hadoop.hdfs
// becomes hdfsgo.hadoop.hdfs) and our files register under paths relative to
// this directory ("hdfs/hdfs.proto"). The Go protobuf runtime keeps one global
// registry of full names and panics at init when two linked packages register
// the same name; github.com/colinmarc/hdfs/v2, which tests link next to ours,
// registers hadoop.common.* and hadoop.hdfs.*. The prefix avoids that clash
// and costs nothing on the wire: Hadoop RPC carries method and protocol names
// as strings in RequestHeaderProto, never a proto package name, and the
// binary encoding of a message depends only on field numbers and types.
//
// # Regenerating
//
// After editing a .proto file run
//
//	go generate ./internal/proto
//
// which runs ./gen, a pure-Go generator (protocompile + protoc-gen-go, pinned
// by go.mod; no protoc binary). Output is deterministic; CI runs
// .ci/check-generated.sh, which fails when a .pb.go file is stale.
//
// The generated types are plain protobuf messages: safe for concurrent reads,
// not for concurrent mutation. Example:
//
//	h := &common.RpcRequestHeaderProto{
//		RpcKind:  common.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
//		RpcOp:    common.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
//		CallId:   proto.Int32(1),
//		ClientId: clientID,
//	}
//	b, err := proto.Marshal(h)
package proto

//go:generate go run ./gen
