package datanode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	hdfsclient "github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/dtsasl"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/security/blocktoken"
)

// Protected data transfer: the streaming server's side of the SASL
// handshake (every op of a TCP connection when dfs.data.transfer.protection
// or dfs.encrypt.data.transfer is set) and the connecting side of the
// connections the DataNode opens to others (pipeline mirrors, transfers,
// REPLACE_BLOCK's proxy).

// ErrInsecure: a DataNode with Kerberos that neither listens on a
// privileged streaming port nor protects data transfer with SASL.
var ErrInsecure = errors.New("Cannot start secure DataNode due to incorrect config. See https://cwiki.apache.org/confluence/display/HADOOP/Secure+DataNode for details.")

// checkSecureConfig applies Hadoop's start-up rule for a DataNode with
// Kerberos on: block access tokens must be on, and the streaming port
// (dfs.datanode.address) must be privileged (below 1024) unless
// dfs.data.transfer.protection makes clients authenticate with SASL.
// ignore.secure.ports.for.testing skips the port rule. (Hadoop's rule for
// the web port, privileged or HTTPS_ONLY, is not applied: this DataNode's
// web server has no HTTPS.)
func checkSecureConfig(cfg *Config) error {
	if cfg.Kerberos == nil {
		return nil
	}
	if !cfg.BlockTokens {
		return fmt.Errorf("Security is enabled but block access tokens (via %s) aren't enabled. This may cause issues when clients attempt to connect to a DataNode. Aborting DataNode", conf.DFSBlockAccessTokenEnable)
	}
	if cfg.IgnoreSecurePorts || cfg.DataTransfer.Protection != 0 {
		return nil
	}
	if _, p, err := net.SplitHostPort(cfg.XferAddress); err == nil {
		if n, err := strconv.Atoi(p); err == nil && n > 0 && n < 1024 {
			return nil
		}
	}
	return fmt.Errorf("datanode: %w (%s=%s is not a privileged port and %s is not set)", ErrInsecure, conf.DFSDataNodeAddress, cfg.XferAddress, conf.DFSDataTransferProtection)
}

// newSASL makes the DataNode's two sides of the handshake.
func (dn *DataNode) newSASL() {
	c := dn.cfg.DataTransfer
	if !c.Enabled() {
		return
	}
	dn.saslSrv = dtsasl.NewServer(c, &dn.tokens, dn.clk.Now)
	var key dtsasl.KeySource
	if c.Encrypt {
		key = func(_ context.Context, pool string) (*hdfs.DataEncryptionKeyProto, error) {
			k := dn.tokens.DataEncryptionKey(pool, c.Algorithm, dn.clk.Now())
			if k == nil {
				return nil, errors.New("datanode: no block key from the NameNode yet to make a data encryption key with")
			}
			return k, nil
		}
	}
	dn.saslCli = dtsasl.NewClient(c, key)
}

// dialProtected connects to another DataNode's streaming server and makes
// the handshake with tok, the block token of the op to be sent.
func (dn *DataNode) dialProtected(ctx context.Context, addr string, pool string, tok *common.TokenProto) (net.Conn, error) {
	c, err := dn.dialer.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	pc, err := dn.saslCli.Wrap(ctx, c, pool, tok)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return pc, nil
}

// protect runs the server side of the handshake on a new connection when
// it is required, replacing x's connection and reader with the protected
// ones. It reports whether the connection may go on.
func (x *xceiver) protect() bool {
	srv := x.dn.saslSrv
	if !srv.Required(x.conn) {
		return true
	}
	ok, err := dtsasl.IsMagic(x.br)
	if err != nil {
		return false
	}
	if !ok {
		x.peerLog.Warn("Failed to read expected SASL data transfer protection handshake from client. Perhaps the client is running an older version of Hadoop which does not support SASL data transfer protection",
			"remote", x.remote)
		return false
	}
	pc, br, err := srv.Accept(x.conn, x.br)
	if err != nil {
		x.peerLog.Warn("SASL data transfer handshake failed", "remote", x.remote, "err", err)
		return false
	}
	x.conn, x.br = pc, br
	return true
}

// ipcAcceptor is the IPC server's Kerberos acceptor (nil for SIMPLE),
// with the TOKEN method taking block tokens: a client asking about a
// block (getReplicaVisibleLength) authenticates with its block token, as
// Hadoop's ClientDatanodeProtocol clients do, with Kerberos or without.
func (dn *DataNode) ipcAcceptor() *security.Acceptor {
	acc := dn.cfg.Kerberos.ServerAcceptor()
	if acc != nil && acc.TokenPassword == nil {
		acc.TokenPassword = dn.blockTokenPassword
	}
	return acc
}

// ipcTokenPassword is the IPC server's TOKEN method without Kerberos
// (block tokens beside SIMPLE, as a Hadoop DataNode with a secret
// manager); nil with Kerberos, whose acceptor has it (ipcAcceptor).
func (dn *DataNode) ipcTokenPassword() func([]byte) ([]byte, string, error) {
	if dn.cfg.Kerberos != nil {
		return nil
	}
	return dn.blockTokenPassword
}

func (dn *DataNode) blockTokenPassword(identifier []byte) ([]byte, string, error) {
	if !dn.tokens.Enabled() {
		return nil, "", errors.New("block access tokens are off (dfs.block.access.token.enable)")
	}
	return dn.tokens.TokenPassword(identifier, dn.clk.Now())
}

// checkReadAccess checks that the caller of a ClientDatanodeProtocol call
// about block eb authenticated with a block token granting READ on it,
// when block tokens are on (Hadoop's DataNode.checkReadAccess).
func (dn *DataNode) checkReadAccess(ctx context.Context, eb *hdfs.ExtendedBlockProto) error {
	if !dn.tokens.Enabled() {
		return nil
	}
	c, _ := ipc.CallerFromContext(ctx)
	if !c.TokenAuth || len(c.Token) == 0 {
		return remoteerr.New(remoteerr.ClassIOException, "Can't continue since none or more than one BlockTokenIdentifier is found.")
	}
	if err := dn.tokens.CheckIdentifier(c.Token, eb.GetPoolId(), int64(eb.GetBlockId()), blocktoken.Read, dn.clk.Now()); err != nil {
		return remoteerr.New(classInvalidToken, "%s", err.Error())
	}
	return nil
}

// classInvalidToken is the exception of a refused token.
const classInvalidToken = "org.apache.hadoop.security.token.SecretManager$InvalidToken"

// protectedClientOptions adds the DataNode's data transfer protection to
// the options of a client it runs itself (WebHDFS writes and reads go
// through the DataNodes like any client's).
func (dn *DataNode) protectedClientOptions(o hdfsclient.Options) hdfsclient.Options {
	dt := dn.cfg.DataTransfer
	if dt.Protection != 0 {
		o.DataTransferProtection = dt.Protection.String()
	}
	if dt.AES {
		o.DataTransferCipherSuites = dtsasl.AESCTR
	}
	o.EncryptDataTransfer = dt.Encrypt
	return o
}
