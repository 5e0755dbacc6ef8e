// Package wire is the framing codec of Hadoop RPC version 9: the connection
// preamble, length-prefixed frames, and the varint-delimited protobuf
// messages inside them. It does no I/O of its own beyond reading from a
// *bufio.Reader handed to it, owns no goroutines and keeps no state, so every
// function is safe for concurrent use. Package ipc (server and client) is
// its only intended caller; nothing else should frame RPC bytes.
//
// # Preamble
//
// A client opens every connection with seven bytes, written once:
//
//	+----+----+----+----+---------+---------------+---------------+
//	| 'h'| 'r'| 'p'| 'c'| version | service class | auth protocol |
//	| 68 | 72 | 70 | 63 |   09    |      00       |   00 or DF    |
//	+----+----+----+----+---------+---------------+---------------+
//
// Auth protocol 0x00 is SIMPLE without SASL; 0xDF (-33) starts a SASL
// exchange (for SIMPLE servers: one NEGOTIATE answered by SUCCESS).
//
// # Frames
//
// Everything after the preamble, in both directions, is a sequence of frames:
//
//	+----------------------+---------+-----------+---------+-----------+ ...
//	| uint32 big-endian N  | varint  | message 1 | varint  | message 2 |
//	| (bytes that follow)  | len(m1) |           | len(m2) |           |
//	+----------------------+---------+-----------+---------+-----------+ ...
//
// N is checked against the configured maximum (Hadoop's
// ipc.maximum.data.length, 128 MiB by default) before any buffer is
// allocated; a larger N is a *FrameTooLargeError. Even a permitted N is
// never allocated up front: ReadFrame's buffer starts at FrameChunk bytes
// and doubles as the bytes arrive, so every decoder here allocates in
// proportion to what the peer sent, not to what it announced (the fuzz
// targets check this with testtool.AllocBound).
//
// A request frame's messages depend on its call id (a sint32, zigzag on the
// wire):
//
//	callId >= 0   RpcRequestHeaderProto, RequestHeaderProto{methodName,
//	              declaringClassProtocolName, clientProtocolVersion=1},
//	              request message
//	callId == -3  RpcRequestHeaderProto, IpcConnectionContextProto
//	              {userInfo{effectiveUser, realUser}, protocol}; no answer
//	callId == -33 RpcRequestHeaderProto, RpcSaslProto; answered by -33
//	callId == -4  RpcRequestHeaderProto only (ping); no answer
//
// A response frame holds RpcResponseHeaderProto and, on success, the
// response message (always present on success, possibly empty). Its callId
// field is a uint32 carrying the two's complement of the request's id.
//
// Example, the connection context of user "gohdfs1" with client id
// "ABCDEFGHIJKLMNOP" (85 bytes after the length):
//
//	00000055                                  N = 85
//	18 08 02 10 00 18 05 22 10 41..50         RpcRequestHeaderProto{rpcKind=2,
//	                                          rpcOp=0, callId=-3, clientId}
//	3b 12 09 0a 07 67..31 1a 2e 6f..6c        IpcConnectionContextProto{
//	                                          userInfo{effectiveUser},
//	                                          protocol="org...ClientProtocol"}
//
// # Use
//
//	br := bufio.NewReader(conn)
//	p, err := wire.ReadPreamble(br)
//	...
//	frame, err := wire.ReadFrame(br, wire.DefaultMaxDataLength, nil)
//	req, err := wire.DecodeRequest(frame)
//	out, err := wire.AppendResponse(buf[:0], header, body)
package wire
