// Package clienttest runs a small in-memory HDFS on the loopback
// interface for tests of code that uses package client: a NameNode that
// answers the ClientProtocol calls the client makes (namespace, blocks,
// leases) over a real Hadoop RPC server, and DataNodes that speak
// DataTransferProtocol over real TCP listeners (WRITE_BLOCK with per-packet
// checksum verification and acks, READ_BLOCK with chunk-aligned packets
// and the final empty packet, BLOCK_CHECKSUM).
//
// It is a test double, not a file system: everything lives in memory,
// there is no permission checking, a replica is stored on every DataNode
// of its pipeline by the first one directly, and the NameNode learns a
// block's length from the client (addBlock previous, complete last,
// fsync). Faults can be injected: a DataNode that corrupts what it sends
// (CorruptReads), a NameNode that answers complete with false a number of
// times (CompleteFalse), the checksum type new files get.
//
// Callers: the tests of package client and of the `hdfs dfs` shell.
// A Cluster is safe for concurrent use.
//
// Example:
//
//	c, err := clienttest.Start(clienttest.Config{DataNodes: 2})
//	if err != nil {
//		t.Fatal(err)
//	}
//	defer c.Close()
//	fsys, err := client.New(client.Options{Addresses: []string{c.Addr()}, User: "alice"})
package clienttest
