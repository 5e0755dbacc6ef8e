// Package dtsasl implements the SASL handshake of DataTransferProtocol
// (dfs.data.transfer.protection, dfs.encrypt.data.transfer) and the
// protected streams that follow it, for the DataNode's streaming server
// (Server) and for everything that connects to one (Client: the client,
// DataNode-to-DataNode pipelines and transfers, the balancer).
//
// The handshake, before the first op of a TCP connection (domain socket
// connections skip it, as their peer is on this host):
//
//	client → server  DE AD BE EF                     magic number (4 bytes)
//	client → server  msg{SUCCESS, payload=""}        varint-delimited DataTransferEncryptorMessageProto
//	server → client  msg{SUCCESS, payload=challenge} DIGEST-MD5 challenge: realm "0", qop, cipher
//	client → server  msg{SUCCESS, payload=response,  digest response (digest-uri "hdfs/0"); AES/CTR
//	                     cipherOption=[AES/CTR]}      offered when privacy is asked for
//	server → client  msg{SUCCESS, payload=rspauth,   the server's proof; with privacy and
//	                     cipherOption=[suite, wrap(inKey), inIv, wrap(outKey), outIv]}
//	                                                  dfs.encrypt.data.transfer.cipher.suites set,
//	                                                  fresh AES keys wrapped by the SASL layer
//
// A refusal is msg{ERROR or ERROR_UNKNOWN_KEY, message}, with
// accessTokenError set when the block token was the reason.
//
// The credential is the block token of the op to come (user name: the
// base64 of its identifier; password: the base64 of its password), or,
// with dfs.encrypt.data.transfer, a data encryption key from the NameNode
// (user name "keyId blockPoolId base64(nonce)", password the base64 of
// the key). Either side recomputes the password from the block keys.
//
// After it, the connection carries, in each direction:
//
//	authentication   the plain stream
//	integrity        frames: length (4 bytes, big-endian) | msg | MAC(10) | 00 01 | seq(4)
//	privacy          frames: length | RC4(msg | MAC(10)) | 00 01 | seq(4)
//	privacy + AES    the stream XORed with AES/CTR: the client encrypts with
//	                 inKey/inIv and decrypts with outKey/outIv, the server
//	                 the other way round
//
// Server and Client are safe for concurrent use; a protected connection
// allows one reader and any number of writers at once.
package dtsasl
