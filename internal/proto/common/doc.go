// Package common holds the Go types generated from Hadoop's hadoop.common
// protos (RPC headers, connection context, SASL, delegation tokens, HA
// service state, ZKFCProtocol), registered under the proto package
// hdfsgo.hadoop.common.
//
// Do not edit the .pb.go files: edit the .proto files and run
// `go generate ./internal/proto`. Messages are safe for concurrent reads,
// not for concurrent mutation.
package common
