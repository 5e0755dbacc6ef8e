// Package dnconn opens connections to DataNodes' streaming servers
// (DataTransferProtocol): over TCP, or through a DataNode's UNIX domain
// socket when the DataNode is on this host and dfs.domain.socket.path is
// configured (Hadoop's dfs.client.domain.socket.data.traffic). Clients use
// it to reach DataNodes, DataNodes to reach each other (pipeline mirrors,
// copies).
//
// A Dialer is safe for concurrent use; a nil *Dialer dials TCP only.
//
//	d := dnconn.NewDialer("/var/run/hdfs/dn._PORT.sock", 10*time.Second)
//	conn, err := d.Dial(ctx, "10.0.0.5:9866") // the socket if 10.0.0.5 is ours
package dnconn
