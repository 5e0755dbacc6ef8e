// Package qjournal holds the Go types generated from Hadoop's
// hadoop.hdfs.qjournal protos (QJournalProtocol between NameNodes and
// JournalNodes, InterQJournalProtocol between JournalNodes), registered under the proto package
// hdfsgo.hadoop.hdfs.qjournal.
//
// Do not edit the .pb.go files: edit the .proto files and run
// `go generate ./internal/proto`. Messages are safe for concurrent reads,
// not for concurrent mutation.
package qjournal
