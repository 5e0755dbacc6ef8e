// Package datatransfer is the codec of HDFS's DataTransferProtocol (version
// 28), the streaming protocol between clients and DataNodes and between the
// DataNodes of a write pipeline: op requests, varint-delimited responses,
// data packets, pipeline acks, and the per-chunk checksums that protect block
// data, plus the MD5-of-CRC checksums BLOCK_CHECKSUM and file checksums are
// made of.
//
// The package is pure: it reads from io.Reader / ByteReader (a *bufio.Reader)
// and writes to io.Writer, and never touches the network, files or the clock.
// Callers are the DataNode's xceiver (server side of every op), the DataNode's
// storage (chunk checksums, meta files) and the client (block readers and
// writers). Functions are safe for concurrent use; a PacketReader or
// PacketWriter belongs to one goroutine.
//
// # Op request
//
// Sent once at the start of a connection by the side that opens it:
//
//	+--------+--------+--------+------------------+-----------------------+
//	| version (u16 BE) | opcode | varint L         | Op*Proto (L bytes)    |
//	|   0x00 0x1C = 28 | 80..90 | (1-5 bytes)      |                       |
//	+--------+--------+--------+------------------+-----------------------+
//
// The opcode chooses the message (NewOpMessage): WRITE_BLOCK 80
// OpWriteBlockProto, READ_BLOCK 81 OpReadBlockProto, BLOCK_CHECKSUM 85
// OpBlockChecksumProto, TRANSFER_BLOCK 86 OpTransferBlockProto, …
//
// # Responses and acks
//
// Every other protobuf message (BlockOpResponseProto, PipelineAckProto,
// ClientReadStatusProto) is varint-length delimited:
//
//	+------------+------------------+
//	| varint L   | message (L bytes)|
//	+------------+------------------+
//
// A DataNode's message must be at least 5 bytes in total, because stock
// clients peek at 5 bytes before parsing (WriteResponse; acks always carry
// downstreamAckTimeNanos and flag). Example ack for seqno 1 from a single
// node, 10 bytes:
//
//	09  08 02  10 00  18 00  22 01 00
//	 L  seqno  reply  downstreamAckTimeNanos  flag (packed, one word per reply)
//	    (sint64 zigzag: 1 -> 2)
//
// # Data packet
//
//	+-------------+-----------+---------------------+-------------+---------+
//	| PLEN u32 BE | HLEN u16  | PacketHeaderProto   | checksums   | data    |
//	|             | BE        | (HLEN bytes)        |             |         |
//	+-------------+-----------+---------------------+-------------+---------+
//	PLEN = 4 + len(checksums) + len(data)   (counts itself, not the header)
//	checksums = ceil(dataLen / bytesPerChecksum) x 4-byte BE CRC, chunks
//	            counted from the packet's first data byte
//
// The header is offsetInBlock(1) sfixed64, seqno(2) sfixed64,
// lastPacketInBlock(3) bool, dataLen(4) sfixed32, and syncBlock(5) bool only
// when true; 25 bytes otherwise:
//
//	09 <offset, 8 bytes LE> 11 <seqno, 8 bytes LE> 18 <last> 25 <dataLen, 4 bytes LE>
//
// A write pipeline heartbeat is a packet with seqno -1, no data and PLEN 4.
// PLEN + HLEN is limited to 16 MiB (DefaultMaxPacketSize).
//
// Lengths a peer announces (a delimited message's varint, a packet's PLEN
// and HLEN) are checked against the caller's limit before anything is
// read, and even a permitted length is not allocated up front: a buffer
// that must grow starts at 4 KiB and doubles as the bytes arrive. Every
// decoder here thus allocates in proportion to the bytes received; the
// fuzz targets check it with testtool.AllocBound.
//
// # Chunk checksums
//
// Block data is cut into chunks of bytesPerChecksum bytes (512 by default),
// counted from the block's first byte on disk and from the packet's first
// byte on the wire; the last chunk may be partial. Each chunk has a 4-byte
// big-endian CRC32 (IEEE) or CRC32C (Castagnoli), or no checksum for NULL.
//
// # Block and file checksums
//
// BLOCK_CHECKSUM answers MD5(stored chunk CRCs of the block, concatenated).
// A client's MD5MD5CRC32 file checksum is MD5 over the blocks' MD5s
// concatenated in a buffer zero-padded to 32·2^k bytes (see
// FileChecksumMD5MD5CRC).
//
// # Example
//
//	br := bufio.NewReader(conn)
//	op, msg, err := datatransfer.ReadOp(br, datatransfer.DefaultMaxMessageSize)
//	if err != nil {
//		return err
//	}
//	if op == datatransfer.OpWriteBlock {
//		req := msg.(*hdfs.OpWriteBlockProto)
//		// ... set up the replica, then:
//		err = datatransfer.WriteResponse(conn, &hdfs.BlockOpResponseProto{Status: hdfs.Status_SUCCESS.Enum()})
//		pr := datatransfer.NewPacketReader(br, 0)
//		pkt, err := pr.Next()
//		// ... verify pkt.Checksums against pkt.Data, store, then ack:
//		err = datatransfer.WriteAck(conn, &datatransfer.PipelineAck{Seqno: pkt.Header.Seqno, Replies: []hdfs.Status{hdfs.Status_SUCCESS}})
//	}
package datatransfer
