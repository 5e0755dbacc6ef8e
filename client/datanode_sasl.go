package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/dnconn"
	"github.com/hdfsgo/hdfsgo/internal/dtsasl"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// dnDialer connects to DataNodes (through the domain socket where one is
// set) and makes the data transfer SASL handshake with the block token of
// the op to come when the cluster protects data transfer. A nil sasl
// makes none.
type dnDialer struct {
	d    *dnconn.Dialer
	sasl *dtsasl.Client
}

// Dial connects to the DataNode at addr for an op on the block of lb
// (whose token authenticates the handshake).
func (d *dnDialer) Dial(ctx context.Context, addr string, b *hdfs.ExtendedBlockProto, tok *common.TokenProto) (net.Conn, error) {
	c, err := d.d.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	pc, err := d.sasl.Wrap(ctx, c, b.GetPoolId(), tok)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return pc, nil
}

// newDataTransferSASL builds the client's side of the handshake from
// Options.DataTransferProtection and Options.DataTransferCipherSuites;
// the data encryption key is asked of the NameNode when its server
// defaults (read once, on the first DataNode connection) say
// dfs.encrypt.data.transfer. With neither option nor
// Options.EncryptDataTransfer it returns nil: no handshake.
func (f *FileSystem) newDataTransferSASL(opts Options) (*dtsasl.Client, error) {
	var cfg dtsasl.Config
	if opts.DataTransferProtection != "" {
		q, err := security.ParseProtection("dfs.data.transfer.protection", opts.DataTransferProtection)
		if err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
		cfg.Protection = q
	}
	switch opts.DataTransferCipherSuites {
	case "":
	case dtsasl.AESCTR:
		cfg.AES = true
	default:
		return nil, fmt.Errorf("client: Invalid cipher suite, dfs.encrypt.data.transfer.cipher.suites=%s (the only suite is %s)", opts.DataTransferCipherSuites, dtsasl.AESCTR)
	}
	if !opts.EncryptDataTransfer && cfg.Protection == 0 {
		return nil, nil
	}
	// As Hadoop's client, follow the NameNode's server defaults: a
	// cluster that encrypts data transfer gets a data encryption key
	// whatever this client's own setting.
	return dtsasl.NewClient(cfg, f.dataEncryptionKey), nil
}

// tokenError reports whether err is a refused credential that new ones
// from the NameNode may cure: a block token refused by an op or by the
// handshake, or a data encryption key whose block key the DataNode does
// not know (the cached key is dropped then).
func (f *FileSystem) tokenError(err error) bool {
	if errors.Is(err, dtsasl.ErrUnknownKey) {
		f.forgetDataEncryptionKey()
		return true
	}
	return errors.Is(err, ErrAccessToken) || errors.Is(err, dtsasl.ErrAccessToken)
}

// keyCache holds the NameNode's data encryption key until shortly before
// it expires.
type keyCache struct {
	mu  sync.Mutex
	key *hdfs.DataEncryptionKeyProto
}

// keyMargin is how long before its expiry a data encryption key is
// replaced.
const keyMargin = time.Minute

// dataEncryptionKey returns the NameNode's data encryption key when its
// server defaults say dfs.encrypt.data.transfer, else nil.
func (f *FileSystem) dataEncryptionKey(ctx context.Context, _ string) (*hdfs.DataEncryptionKeyProto, error) {
	d, err := f.ServerDefaults(ctx)
	if err != nil {
		return nil, err
	}
	if !d.EncryptDataTransfer {
		return nil, nil
	}
	f.deks.mu.Lock()
	k := f.deks.key
	f.deks.mu.Unlock()
	if k != nil && time.Now().Add(keyMargin).UnixMilli() < int64(k.GetExpiryDate()) {
		return k, nil
	}
	resp := &hdfs.GetDataEncryptionKeyResponseProto{}
	if err := f.call(ctx, "getDataEncryptionKey", &hdfs.GetDataEncryptionKeyRequestProto{}, resp); err != nil {
		return nil, err
	}
	k = resp.GetDataEncryptionKey()
	if k == nil {
		return nil, nil
	}
	f.deks.mu.Lock()
	f.deks.key = k
	f.deks.mu.Unlock()
	return k, nil
}

// forgetDataEncryptionKey drops the cached key (a DataNode did not know
// its block key).
func (f *FileSystem) forgetDataEncryptionKey() {
	f.deks.mu.Lock()
	f.deks.key = nil
	f.deks.mu.Unlock()
}
