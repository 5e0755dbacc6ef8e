// Package datanode is the DataNode daemon: it owns the volumes of
// dfs.datanode.data.dir (through package storage), serves the streaming
// DataTransferProtocol (reads, write pipelines, checksums, transfers) on the
// xfer port, serves ClientDatanodeProtocol.getReplicaVisibleLength and
// InterDatanodeProtocol on the IPC port, and keeps every NameNode informed
// through DatanodeProtocol: handshake, registration, heartbeats, full and
// incremental block reports, and the commands the NameNode answers with.
//
// Callers: the `hdfs datanode` command and the mini cluster build a Config
// with ConfigFrom and call Start; Close stops the DataNode. A DataNode is safe
// for concurrent use.
//
// # Start-up
//
//	Start: open + lock every volume (in_use.lock; a second DataNode is refused)
//	       datanodeUuid from the volumes' VERSION, or a new one
//	       listen on the xfer and IPC addresses, start both servers
//	       one actor per NameNode address ──▶ returns
//	actor: versionRequest, retried with backoff until the NameNode answers
//	       first pool: format empty volumes (VERSION: storageID, clusterID,
//	       datanodeUuid, layoutVersion -57); a volume of another cluster stops
//	       the DataNode (Err names the directory and both cluster ids)
//	       AddBlockPool (startup scan) → registerDatanode → full block report
//	       (WaitReady returns) → heartbeats every dfs.heartbeat.interval
//
// # Goroutines
//
//   - one supervisor, which waits for the end (Close or a fatal error) and
//     releases everything in order, then closes Done;
//   - one actor per NameNode (bpActor.run): heartbeats, reports, commands;
//   - the streaming accept loop, one goroutine per connection (at most
//     dfs.datanode.max.transfer.threads; one more is answered with an ERROR
//     response naming the limit), plus one ack responder per write pipeline
//     stage;
//   - the IPC server's own goroutines;
//   - one worker per DNA_TRANSFER block and per DNA_RECOVERBLOCK block,
//     and one per volume deleting a finalized upgrade's previous state;
//   - the block scanner's goroutine per volume and the directory scanner's
//     (package scanner), started when the first pool is joined;
//   - the disk checker, and one goroutine per volume check it runs;
//   - a reconfiguration task while one runs.
//
// Every goroutine ends before Close returns. Locks: DataNode.mu guards the
// dataset, the joined pools and the fatal error; bpActor.mu the registration
// and the queued incremental reports; bpActor.sendMu serialises
// blockReceivedAndDeleted calls (taken before bpActor.mu); xceiverServer.mu
// the open connections. None is held across network I/O except sendMu.
//
// # Write pipeline stage (WRITE_BLOCK)
//
// Every WRITE_BLOCK is one of the kinds of xceiver_write.go's table (client
// create, replication, append, the three recoveries, the two transfers),
// which differ in how the replica is opened, what is answered and when the
// replica is reported; all run the same receive loop:
//
//	upstream ──packet──▶ receiver ──packet──▶ downstream (targets[0], targets[1:] forwarded)
//	                        │ WritePacket (checksums verified), Finalize on the last packet,
//	                        │ RECEIVED reported and answered before the last ack
//	                        ▼
//	                    ack queue ──▶ responder: wait downstream ack (same seqno),
//	upstream ◀────────── ack {seqno, [this node's status, downstream replies...]}
//
// Acks go out in packet order as soon as the packet is on local disk and
// acknowledged downstream; heartbeat packets (seqno -1) are forwarded and
// acknowledged the same way. A checksum mismatch is answered with
// ERROR_CHECKSUM and ends the write; when the data came from another
// DataNode (replication), that node's replica is reported with
// reportBadBlocks. Writes from a DataNode (replication,
// clientName "") and TRANSFER_FINALIZED create TEMPORARY replicas, finalized
// on the last packet, and get no acks, as in HDFS; TRANSFER_FINALIZED gets a
// closing BlockOpResponseProto. Stage PIPELINE_CLOSE, which clients never
// send, is answered ERROR_UNSUPPORTED.
//
// # Write pipeline recovery
//
// A client that loses a node rebuilds the pipeline with the nodes left
// (Hadoop's DataStreamer), possibly adding one first:
//
//	client ──TRANSFER_BLOCK──▶ survivor ──WRITE_BLOCK(TRANSFER_RBW)──▶ new node
//	         (its replica up to the acknowledged length)              TEMPORARY → RBW,
//	                                                                  not reported
//	client ──WRITE_BLOCK(stage, latestGenerationStamp)──▶ nodes left + new node
//
//	PIPELINE_SETUP_STREAMING_RECOVERY  RBW cut to its acknowledged length
//	                                   (≥ minBytesRcvd; received ≤ maxBytesRcvd),
//	                                   new stamp; the client resends from there
//	PIPELINE_CLOSE_RECOVERY            RBW or FINALIZED of minBytesRcvd bytes,
//	                                   finalized under the new stamp and reported
//	                                   RECEIVED before the connect reply; a resent
//	                                   last packet is acknowledged, not written
//	PIPELINE_SETUP_APPEND_RECOVERY     FINALIZED or RBW of minBytesRcvd bytes,
//	                                   reopened under the new stamp
//
// Each stops a writer of the old pipeline still attached to the replica (its
// connection goroutine then fails on its next packet). A replica that does
// not fit (older stamp, other length, RWR after a restart) is refused with
// ERROR, and the client leaves that node out.
//
// # Incremental block reports
//
// RECEIVING_BLOCK (a client pipeline started) and DELETED_BLOCK (an
// invalidated replica's files are gone) are queued and sent by the actor at
// once. RECEIVED_BLOCK of a finished write is sent by the pipeline stage
// itself, which waits for the NameNode's answer before acknowledging the last
// packet (a writer completes its file as soon as it has that ack); the queued
// entries go in the same call, in order, and concurrent finishers share
// calls. A failed report stays queued and is retried by the actor.
//
// # Read (READ_BLOCK)
//
//	BlockOpResponseProto{SUCCESS, readOpChecksumInfo{checksum, chunkOffset}}
//	packet(offset chunkOffset, ≤ 64 KiB of whole chunks) ... packet(...)
//	packet(offset end, dataLen 0, lastPacketInBlock)
//
// The data of each packet is sent with sendfile(2) after its prefix (lengths,
// header, checksums read from the meta file). The connection stays open for
// another op (4 s keepalive); a ClientReadStatusProto in between is read and
// ignored.
//
// # Full block report
//
// One StorageBlockReportProto per volume. When the NameNode's namespace info
// advertises the buffers capability (bit 0 of capabilities,
// STORAGE_BLOCK_REPORT_BUFFERS), the replicas go as blocksBuffers (varints,
// 64 KiB buffers) with numberOfBlocks; otherwise as the legacy long list
// (package blocklist draws both):
//
//	F  U  | id len gs | ... (F) | -1 -1 -1 | id len gs state | ... (U)
//
// # Balancer ops and the balancer bandwidth
//
// COPY_BLOCK sends a finalized replica like a read of the whole block;
// REPLACE_BLOCK copies a block from the named proxy with COPY_BLOCK into a
// TEMPORARY replica, finalizes it, reports it RECEIVED with the request's
// delHint and answers SUCCESS. Both, and the copies of DNA_TRANSFER, share
// one throttle.Throttler at dfs.datanode.balance.bandwidthPerSec (100 MiB/s),
// which the NameNode changes with DNA_BALANCERBANDWIDTHUPDATE (dfsadmin
// -setBalancerBandwidth) and ClientDatanodeProtocol.getBalancerBandwidth
// reads. A client's TRANSFER_BLOCK (pipeline recovery) is not throttled.
// COPY_BLOCK and REPLACE_BLOCK together take at most
// dfs.datanode.balance.max.concurrent.moves slots; one more is refused with
// ERROR "... because threads quota is exceeded." as Hadoop does. A
// REPLACE_BLOCK that is still copying answers IN_PROGRESS every 30 s (half
// of dfs.client.socket-timeout) so that the balancer does not time out.
//
// # Scanners
//
// The block scanner verifies every finalized replica once per
// dfs.datanode.scan.period.hours at dfs.block.scanner.volume.bytes.per.second
// per volume; a replica that fails twice is reported with reportBadBlocks
// (queued, sent by the actors). Suspects go first: replicas whose read gave
// an I/O error, that a client answered ERROR_CHECKSUM for, or whose copy or
// transfer failed. A client's CHECKSUM_OK after reading a whole replica
// counts as a scan. The directory scanner reconciles map and disks every
// dfs.datanode.directoryscan.interval; replicas it removes are reported
// DELETED, those it adds or changes RECEIVED, a changed length corrupt, and
// more than a thousand repairs make a full block report. See package
// scanner; both run on Deps.ScannerClock.
//
// # Volumes
//
// dfs.datanode.data.dir entries may carry [DISK], [SSD], [ARCHIVE] or
// [RAM_DISK]; storage reports and block reports carry the type, and a write
// goes to a volume of the type it asks for (any volume when there is none
// of it, since our NameNode does not place by type yet), chosen by
// dfs.datanode.fsdataset.volume.choosing.policy (round robin or available
// space). dfs.datanode.du.reserved.<type> overrides dfs.datanode.du.reserved.
// Failures and hot swap: see volumes.go; reconfiguration: reconfig.go.
//
// # Write pipeline batching
//
// A pipeline stage reads through a 1 MiB window and handles, as one batch,
// every packet already in it: one vectored write mirrors the batch
// downstream (each packet byte for byte as it was read, through the same
// datatransfer.PacketBatch the client's pipeline sends with), one pwritev
// stores the data and one the checksums, one write
// sends the acks (at the tail; a middle stage's responder sends the acks it
// has whenever it would otherwise wait). A batch never waits for data not
// yet received. Only the tail of a client's pipeline verifies checksums, as
// in Hadoop; DataNode-to-DataNode copies are always verified.
//
// # Domain socket (dfs.domain.socket.path)
//
// With the key set, the DataNode also serves DataTransferProtocol on a UNIX
// domain socket ("_PORT" replaced by the streaming port), for clients on the
// same host that set dfs.client.domain.socket.data.traffic; see
// domainsocket.go for the checks on the path. Unlike Hadoop, whose
// DataNodes talk to each other over TCP only, a DataNode with the key set
// also mirrors pipelines and sends copies to DataNodes on its own host
// through their sockets (dnconn.Dialer, the client's dialer too).
// Short-circuit reads (file descriptors passed over the socket) are not
// offered.
//
// # Protected data transfer (dfs.data.transfer.protection)
//
// With dfs.data.transfer.protection or dfs.encrypt.data.transfer set, every
// TCP connection to the streaming port must open with the SASL handshake
// of package dtsasl before its first op, and is served over the protected
// stream after it; one that starts with an op header is closed. The
// connections the DataNode opens itself (mirrors, transfers, REPLACE_BLOCK's
// proxy, the client behind WebHDFS) make the handshake as clients, with the
// block token of the op they carry or a data encryption key made from the
// block keys (sasl.go). Domain socket connections skip it. With Kerberos
// on, Start refuses a configuration without block tokens, or without SASL
// on an unprivileged streaming port (checkSecureConfig).
//
// # Upgrade, rollback, finalize
//
// When a block pool is joined, its storage on every volume is first
// repaired if a crash interrupted an upgrade, rollback or finalize; with
// `hdfs datanode -rollback` (Config.Rollback) it is rolled back to the
// state kept before the last upgrade; then, if the NameNode's cTime is
// newer than the pool's (the NameNode was started with -upgrade) or the
// pool's layout is older than -57, the pool is upgraded: its current/
// becomes previous/ and a new current/ hard-links every replica (package
// storage, upgrade.go). A pool newer than the NameNode (the NameNode was
// rolled back and this node was not) stops the DataNode, naming -rollback.
// DNA_FINALIZE (the NameNode's upgrade was finalized) drops previous/ of
// the pool on every volume, deleted in the background by a goroutine the
// DataNode owns. Each step passes Deps.Failpoint (crash tests).
//
// # Web server (dfs.datanode.http.address)
//
// The status page (/, /datanode.html) and /jmx with Hadoop's DataNode beans:
// DataNodeInfo (volumes, NameNode connections, ports), FSDatasetState
// (capacity) and DataNodeActivity-<host>-<port>, whose counters (metrics.go)
// are bumped lock-free by the xceivers and the NameNode actors: bytes and
// blocks written, read, replicated, removed and verified by readers,
// checksum rejections, local and remote client ops, heartbeats, reports,
// and the count and mean time of each data-transfer op. Its port is the
// infoPort of the registration. /conf and /stacks come from internal/web.
// /webhdfs/v1 (webhdfs.go) serves the requests a NameNode redirected here
// (CREATE, APPEND, OPEN, GETFILECHECKSUM) as an ordinary client of the
// NameNode named by namenoderpcaddress, as the request's user.
//
// # Not implemented (answered with an error or logged, never silently)
//
// The short-circuit ops and BLOCK_GROUP_CHECKSUM (ERROR_UNSUPPORTED);
// block tokens and SASL on the data path;
// ClientDatanodeProtocol methods other than
// getReplicaVisibleLength, getBalancerBandwidth and the reconfiguration ones
// (UnsupportedOperationException naming the method); reconfiguration of properties other than
// dfs.datanode.data.dir, and of a volume's storage type in place (the
// change fails with a message); cache and erasure-coding commands
// ("unsupported command" at warn level); rolling upgrades (`hdfs datanode
// -rollingupgrade rollback` says it is not supported).
//
// # Example
//
//	cfg, err := datanode.ConfigFrom(c)
//	if err != nil {
//		return err
//	}
//	dn, err := datanode.Start(ctx, cfg, datanode.Deps{Logger: logger})
//	if err != nil {
//		return err
//	}
//	defer dn.Close()
//	<-dn.Done()
//	return dn.Err()
package datanode
