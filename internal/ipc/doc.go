// Package ipc is the Hadoop RPC v9 engine: a Server that serves protobuf
// protocols to stock Hadoop clients and to our own, and a Client that calls
// them. Framing is package wire's; error translation is package remoteerr's.
// The NameNode, DataNode and JournalNode register their protocols on a
// Server; every component that talks to another one uses a Client.
//
// # Server
//
// NewServer starts the handler pool (ServerConfig.Handlers goroutines) and
// a bounded call queue (Handlers × QueueSizePerHandler). Protocols are
// registered by Java name and methods with the generic Handle:
//
//	srv := ipc.NewServer(ipc.ServerConfig{})
//	svc := srv.Service("org.apache.hadoop.hdfs.protocol.ClientProtocol")
//	ipc.Handle(svc, "getServerDefaults", func(ctx context.Context,
//		req *hdfs.GetServerDefaultsRequestProto) (*hdfs.GetServerDefaultsResponseProto, error) {
//		caller, _ := ipc.CallerFromContext(ctx)
//		...
//	})
//	go srv.Serve(l)
//	...
//	srv.Shutdown(ctx)
//
// Goroutines. Per Serve call, one accept loop. Per server, one scan that
// checks every connection each Limits.IdleScanInterval. Per connection,
// two: a reader (preamble, SASL, connection context, then frames; it
// resolves the method and puts the call on the queue, blocking while the
// queue is full, so a busy server stops reading rather than dropping
// calls) and a writer (it takes every response queued for the connection,
// writes them in one write and sleeps until more arrive; responses go out
// as calls finish, in any order). Shutdown stops the listeners, the scan
// and the readers, waits for the calls already read, lets the writers send
// their answers, closes the connections and stops the handlers; Close does
// the same without waiting for calls (their ctx is cancelled). Both wait
// until every goroutine has returned. A request only partly received when
// Shutdown begins, or read but still waiting for MaxRequestBytes, is
// dropped with its connection.
//
// Memory. What the server holds is bounded by Limits, never by what a
// client announces or how fast it reads:
//   - a frame's buffer grows as its bytes arrive (package wire), so a frame
//     announced at ipc.maximum.data.length and trickled costs what came;
//   - calls read and not answered hold at most MaxRequestBytes of request
//     bytes over all connections (plus one call), and at most
//     Handlers × QueueSizePerHandler of them wait for a handler;
//   - a connection is not read while it has MaxConnCalls calls in flight or
//     more than MaxConnReplyBytes of replies queued, nor, while all
//     connections together have more than MaxReplyBytes queued, while it
//     has any queued: its further calls stay in the socket (backpressure).
//     Queued replies therefore stay within MaxReplyBytes plus, per
//     connection, MaxConnReplyBytes and the replies of MaxConnCalls calls;
//   - an idle connection costs about 11 KiB (a 2 KiB read buffer, two
//     parked goroutines and the socket), measured by
//     TestIdleConnectionMemory; it was 73 KiB with a 64 KiB read buffer.
//
// Server and Client are safe for concurrent use; a Service may gain methods
// while the server runs.
//
// Behaviour towards clients, matching Hadoop's server:
//   - a wrong magic closes the connection; a wrong version gets a FATAL
//     FATAL_VERSION_MISMATCH response (callId -1, class
//     org.apache.hadoop.ipc.RPC$VersionMismatch) first, in v9 framing even
//     for older versions (Hadoop answers those in their own framing, which
//     we do not speak);
//   - auth byte 0xDF: the client's SASL NEGOTIATE is answered with
//     RpcSaslProto{state: SUCCESS}, which is what a SIMPLE-only Hadoop server
//     does; the connection then proceeds as SIMPLE;
//   - the connection context (callId -3) must come before any call; pings
//     (callId -4) are ignored;
//   - every response carries callId, status, serverIpcVersionNum 9 and the
//     request's clientId and retryCount; a success always carries a body;
//   - handler errors become status ERROR / ERROR_APPLICATION with the class
//     from remoteerr.ClassOf; unknown protocols and methods get
//     ERROR_NO_SUCH_PROTOCOL / ERROR_NO_SUCH_METHOD; a request body that does
//     not decode gets ERROR / ERROR_RPC_SERVER. None of these closes the
//     connection;
//   - FATAL (then close) only for protocol violations, e.g. a frame longer
//     than MaxDataLength, which is refused before its buffer is allocated;
//   - handler panics are recovered, logged and answered as IOException;
//   - a wrong magic or auth byte closes the connection without an answer,
//     as Hadoop does, and is logged at WARN with the peer's address; so are
//     FATAL answers. These records, and every other one a peer can cause,
//     go through a ratelog.Logger (ratelog.DefaultBurst a minute).
//
// Connections are closed by the server only in these cases, none of which
// a well-behaved client meets under a normal load (the stock Go client,
// github.com/colinmarc/hdfs, fails every call for 5 s after its
// connection is closed):
//   - at accept, when Limits.MaxConnections (ipc.server.max.connections,
//     16384) are open: closed before anything is read, logged at WARN
//     ("too many connections", with the limit and the key);
//   - when the preamble and connection context have not arrived within
//     Limits.HandshakeTimeout (20 s) of the accept;
//   - when more than Limits.IdleThreshold (ipc.client.idlethreshold, 4000)
//     connections are open: connections without calls in flight or replies
//     to write that received nothing for twice Limits.MaxIdleTime
//     (ipc.client.connection.maxidletime, 10 s), at most Limits.KillMax
//     (ipc.client.kill.max, 10) per scan, until the threshold is reached;
//   - when the oldest reply of a connection has waited Limits.PurgeInterval
//     (ipc.server.purge.interval, 15 minutes) without being written, because
//     its client reads nothing (Hadoop's Responder purge); logged at WARN.
//
// A client that pipelines faster than it reads is slowed down, never
// dropped: see Memory above.
//
// A handler's ctx carries the Caller (CallerFromContext) and is cancelled
// when the connection dies or the server is closed hard.
//
// Deferred replies. A handler may call DeferReply(ctx) and return before
// its reply may go out (the NameNode's asynchronous edit logging: the reply
// waits for an fsync). Its reply — the response encoded into its frame, or
// the error translated — is fixed when it returns, and queued on the
// connection when the last release is called, from any goroutine; a
// release with an error sends that error instead. Until then the call is
// in flight: it counts toward MaxConnCalls, Shutdown waits for it (and
// sends its reply), and a connection that dies keeps its reader until the
// release, which then drops the reply. Replies go out in release order.
// Stats.Held counts the calls held now.
//
// # Client
//
// A Client holds one connection to its current address for its user and
// protocol; concurrent Calls share it, each with its own call id (from 1,
// increasing for the client's lifetime), and one reader goroutine per
// connection hands answers to their callers. Close stops that goroutine.
// Callers queue their request frames; the caller that finds no write in
// progress writes everything queued, so concurrent calls share system calls
// without a writer goroutine. A connection found dead when a call starts
// (the server went away while it was idle) is redialled at the same
// address.
//
//	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{"nn1:8020", "nn2:8020"},
//		User: "alice", Protocol: "org.apache.hadoop.hdfs.protocol.ClientProtocol"})
//	defer c.Close()
//	var resp hdfs.GetServerDefaultsResponseProto
//	err := c.Call(ctx, "getServerDefaults", &hdfs.GetServerDefaultsRequestProto{}, &resp)
//
// Retry and failover rule. A retried call keeps its call id and sends
// retryCount = attempt number (the first attempt sends none, i.e. -1), so a
// server's retry cache, keyed by (clientId, callId), recognises it. A call is
// retried, with exponential backoff from RetryBase and at most MaxRetries
// times:
//   - when the connection could not be established (nothing was sent), after
//     moving to the next address;
//   - when the connection turned out to be dead before the request was
//     queued on it (nothing was sent), on a fresh connection to the same
//     address;
//   - on StandbyException, after moving to the next address (the standby
//     did not execute it);
//   - on RetriableException, on the same connection;
//   - when the connection broke after the request was queued on it (it may
//     have reached the server), after moving to the next address, but only
//     if ClientConfig.Idempotent says the method is idempotent. Count the
//     methods the server protects with its retry cache as idempotent: the
//     resend carries the same callId. Otherwise the error is returned.
//
// A FATAL answer drops the connection and is returned, not retried.
//
// Any other error response is returned at once as a *remoteerr.Error. A
// ctx that ends returns ctx.Err() promptly; the late answer is dropped.
// A write that blocks past the ctx deadline breaks the connection (a partial
// frame cannot be recovered); callers then retry on a fresh one.
package ipc
