// Package hdfs holds the Go types generated from Hadoop's hadoop.hdfs
// protos (core HDFS types, ClientNamenodeProtocol, DataTransferProtocol,
// ClientDatanodeProtocol, InterDatanodeProtocol, JournalProtocol, the
// types shared by the server protocols, and ActiveNodeInfo, which a
// failover controller keeps in ZooKeeper), registered under the proto
// package hdfsgo.hadoop.hdfs.
//
// Do not edit the .pb.go files: edit the .proto files and run
// `go generate ./internal/proto`. Messages are safe for concurrent reads,
// not for concurrent mutation.
package hdfs
