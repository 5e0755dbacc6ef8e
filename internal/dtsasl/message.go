package dtsasl

import (
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// Magic is the number that opens a SASL handshake (part of the wire
// format): an op header starts with the version 0x001C instead.
const Magic uint32 = 0xDEADBEEF

// MaxMessage bounds one DataTransferEncryptorMessageProto read: a
// DIGEST-MD5 message is at most 4 KiB, cipher options a few dozen bytes.
const MaxMessage = 64 << 10

// Errors of the handshake.
var (
	// ErrAccessToken: the DataNode refused the block token the handshake
	// was made with (expired, unknown key, wrong password); a client gets
	// a new token from the NameNode and tries again.
	ErrAccessToken = errors.New("dtsasl: block access token refused")
	// ErrUnknownKey: the DataNode does not know the data encryption key's
	// block key (ERROR_UNKNOWN_KEY); a client gets a new key.
	ErrUnknownKey = errors.New("dtsasl: unknown data encryption key")
	// ErrRefused: the peer ended the handshake with an error.
	ErrRefused = errors.New("dtsasl: handshake refused")
	// ErrBadMagic: the connection does not start with the magic number.
	ErrBadMagic = errors.New("dtsasl: no SASL handshake")
	// ErrNoToken: there is no credential to make the handshake with.
	ErrNoToken = errors.New("dtsasl: no block access token for the SASL handshake (dfs.block.access.token.enable must be true on the NameNode)")
)

// ReadMessage reads one varint-delimited DataTransferEncryptorMessageProto
// of at most MaxMessage bytes. A message whose status is not SUCCESS is
// returned with an error (ErrAccessToken, ErrUnknownKey or ErrRefused)
// carrying its text.
func ReadMessage(r datatransfer.ByteReader) (*hdfs.DataTransferEncryptorMessageProto, error) {
	m := &hdfs.DataTransferEncryptorMessageProto{}
	if err := datatransfer.ReadDelimited(r, MaxMessage, m); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("dtsasl: reading a handshake message: %w", err)
	}
	switch m.GetStatus() {
	case hdfs.DataTransferEncryptorMessageProto_SUCCESS:
		return m, nil
	case hdfs.DataTransferEncryptorMessageProto_ERROR_UNKNOWN_KEY:
		return m, fmt.Errorf("%w: %s", ErrUnknownKey, m.GetMessage())
	}
	if m.GetAccessTokenError() {
		return m, fmt.Errorf("%w: %s", ErrAccessToken, m.GetMessage())
	}
	return m, fmt.Errorf("%w: %s", ErrRefused, m.GetMessage())
}

// writeMessage sends a SUCCESS message with payload and cipher options.
func writeMessage(w io.Writer, payload []byte, opts []*hdfs.CipherOptionProto) error {
	if payload == nil {
		payload = []byte{}
	}
	return datatransfer.WriteDelimited(w, &hdfs.DataTransferEncryptorMessageProto{
		Status: hdfs.DataTransferEncryptorMessageProto_SUCCESS.Enum(), Payload: payload, CipherOption: opts})
}

// writeError sends a refusal.
func writeError(w io.Writer, st hdfs.DataTransferEncryptorMessageProto_DataTransferEncryptorStatus, msg string, tokenErr bool) error {
	m := &hdfs.DataTransferEncryptorMessageProto{Status: st.Enum(), Message: proto.String(msg)}
	if tokenErr {
		m.AccessTokenError = proto.Bool(true)
	}
	return datatransfer.WriteDelimited(w, m)
}
