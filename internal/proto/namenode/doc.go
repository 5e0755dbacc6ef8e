// Package namenode holds the Go types generated from Hadoop's
// hadoop.hdfs.namenode protos (NamenodeProtocol, used by the balancer and
// checkpointing nodes), registered under the proto package
// hdfsgo.hadoop.hdfs.namenode.
//
// Do not edit the .pb.go files: edit the .proto files and run
// `go generate ./internal/proto`. Messages are safe for concurrent reads,
// not for concurrent mutation.
package namenode
