package dtsasl

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// Keys recomputes credentials from the block keys (the DataNode's
// blocktoken.Verifier).
type Keys interface {
	// Password is the password of a block token identifier, or an error
	// when it does not parse, has expired or its key is unknown.
	Password(identifier []byte, now time.Time) ([]byte, error)
	// EncryptionKey is the data encryption key of (keyID, nonce).
	EncryptionKey(keyID int32, nonce []byte) ([]byte, error)
}

// Server is the DataNode's side of the handshake.
type Server struct {
	cfg  Config
	keys Keys
	now  func() time.Time
}

// NewServer returns the server side for cfg.
func NewServer(cfg Config, keys Keys, now func() time.Time) *Server {
	return &Server{cfg: cfg, keys: keys, now: now}
}

// Required reports whether c must start with the handshake: every TCP
// connection when protection is configured (nil Server: none).
func (s *Server) Required(c net.Conn) bool {
	return s != nil && s.cfg.Enabled() && !secureChannel(c)
}

// IsMagic reports whether the next bytes of br are the magic number
// (it waits for four bytes).
func IsMagic(br *bufio.Reader) (bool, error) {
	b, err := br.Peek(4)
	if err != nil {
		return false, err
	}
	return binary.BigEndian.Uint32(b) == Magic, nil
}

// credentialError is a refusal of the credential itself (sent with
// accessTokenError, or as ERROR_UNKNOWN_KEY).
type credentialError struct {
	unknownKey bool
	err        error
}

func (e *credentialError) Error() string { return e.err.Error() }

func (e *credentialError) Unwrap() error { return e.err }

// Accept runs the server side of the handshake on c, whose reads go
// through br (the magic number first). It returns the connection to use
// from then on and its reader: c and br themselves for authentication
// only. A refusal is sent to the client before the error is returned.
func (s *Server) Accept(c net.Conn, br *bufio.Reader) (net.Conn, *bufio.Reader, error) {
	var magic [4]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil {
		return nil, nil, err
	}
	if m := binary.BigEndian.Uint32(magic[:]); m != Magic {
		return nil, nil, fmt.Errorf("%w: received %x instead of %x from the client", ErrBadMagic, m, Magic)
	}
	pc, err := s.handshake(c, br)
	if err != nil {
		var ce *credentialError
		switch {
		case errors.As(err, &ce) && ce.unknownKey:
			_ = writeError(c, hdfs.DataTransferEncryptorMessageProto_ERROR_UNKNOWN_KEY, ce.Error(), false)
		case errors.As(err, &ce):
			_ = writeError(c, hdfs.DataTransferEncryptorMessageProto_ERROR, ce.Error(), true)
		default:
			_ = writeError(c, hdfs.DataTransferEncryptorMessageProto_ERROR, err.Error(), false)
		}
		return nil, nil, err
	}
	if pc == nil {
		return c, br, nil
	}
	return pc, bufio.NewReaderSize(pc, br.Size()), nil
}

func (s *Server) handshake(c net.Conn, br *bufio.Reader) (net.Conn, error) {
	if _, err := ReadMessage(br); err != nil {
		return nil, err
	}
	qop := s.cfg.Protection
	password := s.tokenPassword
	if s.cfg.Encrypt {
		qop, password = security.QOPPrivacy, s.keyPassword
	}
	ch := security.NewDigestChallengeFor(security.DataTransferDigest, qop)
	if err := writeMessage(c, ch.Bytes(), nil); err != nil {
		return nil, err
	}
	m, err := ReadMessage(br)
	if err != nil {
		return nil, err
	}
	final, sess, err := ch.Verify(m.GetPayload(), password)
	if err != nil {
		var ce *credentialError
		if errors.As(err, &ce) {
			return nil, err
		}
		if errors.Is(err, security.ErrDigestMismatch) {
			return nil, &credentialError{err: err}
		}
		return nil, err
	}
	var opt *hdfs.CipherOptionProto
	var keys [4][]byte // inKey, inIv, outKey, outIv
	if sess.Qop == security.QOPPrivacy && s.cfg.AES && offersAES(m.GetCipherOption()) {
		for i := range keys {
			n := 16
			if i%2 == 0 {
				n = s.cfg.KeyBits / 8
			}
			keys[i] = make([]byte, n)
			rand.Read(keys[i])
		}
		opt = &hdfs.CipherOptionProto{Suite: hdfs.CipherSuiteProto_AES_CTR_NOPADDING.Enum(),
			InKey: sess.Layer.Wrap(keys[0]), InIv: keys[1], OutKey: sess.Layer.Wrap(keys[2]), OutIv: keys[3]}
	}
	var opts []*hdfs.CipherOptionProto
	if opt != nil {
		opts = []*hdfs.CipherOptionProto{opt}
	}
	if err := writeMessage(c, final, opts); err != nil {
		return nil, err
	}
	switch {
	case opt != nil:
		// The server reads what the client encrypts with the in key.
		return newAESConn(c, br, keys[0], keys[1], keys[2], keys[3])
	case sess.Layer != nil:
		return newLayerConn(c, br, sess.Layer), nil
	}
	return nil, nil
}

func offersAES(opts []*hdfs.CipherOptionProto) bool {
	for _, o := range opts {
		if o.GetSuite() == hdfs.CipherSuiteProto_AES_CTR_NOPADDING {
			return true
		}
	}
	return false
}

// tokenPassword is the password of a user name made from a block token.
func (s *Server) tokenPassword(user string) (string, error) {
	id, err := base64.StdEncoding.DecodeString(user)
	if err != nil {
		return "", &credentialError{err: fmt.Errorf("user name %q is not a base64 block token identifier", user)}
	}
	pw, err := s.keys.Password(id, s.now())
	if err != nil {
		return "", &credentialError{err: err}
	}
	return base64.StdEncoding.EncodeToString(pw), nil
}

// keyPassword is the password of a user name made from a data
// encryption key: "keyId blockPoolId base64(nonce)".
func (s *Server) keyPassword(user string) (string, error) {
	f := strings.Split(user, " ")
	if len(f) != 3 {
		return "", fmt.Errorf("Provided name '%s' has %d components instead of the expected 3.", user, len(f))
	}
	id, err := strconv.ParseInt(f[0], 10, 32)
	if err != nil {
		return "", fmt.Errorf("data encryption key name %q: key id: %v", user, err)
	}
	nonce, err := base64.StdEncoding.DecodeString(f[2])
	if err != nil {
		return "", fmt.Errorf("data encryption key name %q: nonce: %v", user, err)
	}
	k, err := s.keys.EncryptionKey(int32(id), nonce)
	if err != nil {
		return "", &credentialError{unknownKey: true, err: err}
	}
	return base64.StdEncoding.EncodeToString(k), nil
}
