package dtsasl

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// handshakeTimeout bounds a handshake when the context has no deadline
// (Hadoop's dfs.client.socket-timeout default).
const handshakeTimeout = 60 * time.Second

// KeySource returns the data encryption key to make handshakes with, or
// nil when the cluster does not encrypt data transfer.
type KeySource func(ctx context.Context, pool string) (*hdfs.DataEncryptionKeyProto, error)

// Client is the connecting side of the handshake: the client, a
// DataNode connecting to another, the balancer.
type Client struct {
	cfg Config
	key KeySource
}

// NewClient returns the connecting side for cfg; key (may be nil) gives
// the data encryption key when the NameNode says dfs.encrypt.data.transfer.
func NewClient(cfg Config, key KeySource) *Client {
	return &Client{cfg: cfg, key: key}
}

// Wrap makes the handshake on a new connection c to a DataNode with the
// block token of the op to come (on a block of pool) and returns the connection to use. A
// nil Client, a domain socket, or a client configured with no protection
// talking to a cluster that does not encrypt, returns c as it is. As
// Hadoop's client does, a DataNode on a privileged port (below 1024) is
// trusted without a handshake unless data transfer is encrypted.
func (cl *Client) Wrap(ctx context.Context, c net.Conn, pool string, tok *common.TokenProto) (net.Conn, error) {
	if cl == nil || secureChannel(c) {
		return c, nil
	}
	var key *hdfs.DataEncryptionKeyProto
	if cl.key != nil {
		k, err := cl.key(ctx, pool)
		if err != nil {
			return nil, err
		}
		key = k
	}
	var user, pass string
	want := cl.cfg.Protection
	switch {
	case key != nil:
		user = strconv.Itoa(int(int32(key.GetKeyId()))) + " " + key.GetBlockPoolId() + " " + base64.StdEncoding.EncodeToString(key.GetNonce())
		pass = base64.StdEncoding.EncodeToString(key.GetEncryptionKey())
		want = security.QOPPrivacy
	case want == 0:
		return c, nil
	default:
		if a, ok := c.RemoteAddr().(*net.TCPAddr); ok && a.Port > 0 && a.Port < 1024 {
			return c, nil
		}
		if tok == nil || len(tok.GetIdentifier()) == 0 {
			return nil, ErrNoToken
		}
		user = base64.StdEncoding.EncodeToString(tok.GetIdentifier())
		pass = base64.StdEncoding.EncodeToString(tok.GetPassword())
	}
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(handshakeTimeout)
	}
	_ = c.SetDeadline(dl)
	pc, err := cl.handshake(c, user, pass, want)
	if err != nil {
		return nil, fmt.Errorf("SASL handshake with %s: %w", c.RemoteAddr(), err)
	}
	// The dialer's deadline (the context's, or none).
	if d, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	} else {
		_ = c.SetDeadline(time.Time{})
	}
	return pc, nil
}

func (cl *Client) handshake(c net.Conn, user, pass string, want security.QOP) (net.Conn, error) {
	var magic [4]byte
	binary.BigEndian.PutUint32(magic[:], Magic)
	if _, err := c.Write(magic[:]); err != nil {
		return nil, err
	}
	if err := writeMessage(c, nil, nil); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(c, 4096)
	m, err := ReadMessage(br)
	if err != nil {
		return nil, err
	}
	resp, finish, err := security.DigestRespond(security.DataTransferDigest, m.GetPayload(), user, pass, want)
	if err != nil {
		return nil, err
	}
	var opts []*hdfs.CipherOptionProto
	if want&security.QOPPrivacy != 0 && cl.cfg.AES {
		opts = []*hdfs.CipherOptionProto{{Suite: hdfs.CipherSuiteProto_AES_CTR_NOPADDING.Enum()}}
	}
	if err := writeMessage(c, resp, opts); err != nil {
		return nil, err
	}
	if m, err = ReadMessage(br); err != nil {
		return nil, err
	}
	sess, err := finish(m.GetPayload())
	if err != nil {
		return nil, err
	}
	if len(m.GetCipherOption()) > 0 && sess.Qop == security.QOPPrivacy {
		o := m.GetCipherOption()[0]
		if o.GetSuite() != hdfs.CipherSuiteProto_AES_CTR_NOPADDING {
			return nil, fmt.Errorf("the DataNode chose cipher suite %v, which this client did not offer", o.GetSuite())
		}
		inKey, err := sess.Layer.Unwrap(append([]byte(nil), o.GetInKey()...))
		if err != nil {
			return nil, fmt.Errorf("unwrapping the AES in key: %w", err)
		}
		outKey, err := sess.Layer.Unwrap(append([]byte(nil), o.GetOutKey()...))
		if err != nil {
			return nil, fmt.Errorf("unwrapping the AES out key: %w", err)
		}
		// The client reads what the server encrypts with the out key.
		return newAESConn(c, br, outKey, o.GetOutIv(), inKey, o.GetInIv())
	}
	if sess.Layer != nil {
		return newLayerConn(c, br, sess.Layer), nil
	}
	if br.Buffered() > 0 {
		return &plainConn{Conn: c, r: br}, nil
	}
	return c, nil
}
