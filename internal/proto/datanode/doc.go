// Package datanode holds the Go types generated from Hadoop's
// hadoop.hdfs.datanode protos (DatanodeProtocol: registration, heartbeats,
// block reports, commands), registered under the proto package
// hdfsgo.hadoop.hdfs.datanode.
//
// Do not edit the .pb.go files: edit the .proto files and run
// `go generate ./internal/proto`. Messages are safe for concurrent reads,
// not for concurrent mutation.
package datanode
