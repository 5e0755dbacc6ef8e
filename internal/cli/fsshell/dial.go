package fsshell

import (
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// DialFromConf builds the FileSystem `hdfs dfs` works on from a Hadoop
// configuration:
//
//   - fs.defaultFS = hdfs://NS with NS one of dfs.nameservices: the
//     NameNodes of NS (dfs.namenode.rpc-address.NS.*), NS accepted in URIs;
//   - fs.defaultFS = hdfs://host[:port]: that NameNode (port 8020 when
//     absent);
//   - otherwise every address conf.NameNodeRPCAddresses finds.
//
// Connection retries follow ConnectRetryFromConf, their lines going to
// stderr. user empty means $HADOOP_USER_NAME, else the operating-system user.
// fs.permissions.umask-mode (octal), dfs.replication and dfs.blocksize
// become the client's umask and new-file defaults; with
// dfs.client.domain.socket.data.traffic, node-local DataNodes are reached
// through dfs.domain.socket.path. No I/O happens here.
func DialFromConf(c *conf.Conf, user string, stderr io.Writer) (*client.FileSystem, error) {
	if user == "" {
		user = os.Getenv("HADOOP_USER_NAME")
	}
	// $HADOOP_PROXY_USER: act as that user for the one authenticated, as
	// Hadoop's login does (the NameNode's hadoop.proxyuser.* decide).
	opts := client.Options{User: user, ProxyUser: os.Getenv("HADOOP_PROXY_USER")}
	if err := ConnectRetryFromConf(c, stderr, &opts); err != nil {
		return nil, err
	}
	addrs, authority, err := NameNodeAddresses(c)
	if err != nil {
		return nil, err
	}
	opts.Addresses, opts.Authority = addrs, authority
	mask := strings.TrimSpace(c.String(conf.FSPermissionsUmaskMode))
	if mask != "" {
		v, err := strconv.ParseUint(mask, 8, 16)
		if err != nil || v > 0o777 {
			return nil, fmt.Errorf("fsshell: %s=%q: not an octal umask", conf.FSPermissionsUmaskMode, mask)
		}
		opts.Umask = fs.FileMode(v)
	}
	if r, err := c.Int(conf.DFSReplication); err == nil && r > 0 && r < 1<<15 {
		opts.Replication = uint16(r)
	} else if err != nil {
		return nil, err
	}
	bs, err := c.Size(conf.DFSBlockSize)
	if err != nil {
		return nil, err
	}
	opts.BlockSize = bs
	if c.Source(conf.DFSClientWritePacketSize) != conf.SourceDefault {
		ps, err := c.Size(conf.DFSClientWritePacketSize)
		if err != nil {
			return nil, err
		}
		opts.WritePacketSize = int(ps)
	}
	if opts.RetryWindowBase, err = c.Duration(conf.DFSClientRetryWindowBase); err != nil {
		return nil, err
	}
	if opts.DomainSocketPath, err = DomainSocketPath(c); err != nil {
		return nil, err
	}
	opts.DataTransferProtection = strings.TrimSpace(c.String(conf.DFSDataTransferProtection))
	opts.DataTransferCipherSuites = strings.TrimSpace(c.String(conf.DFSEncryptDataTransferCipherSuites))
	if opts.EncryptDataTransfer, err = c.Bool(conf.DFSEncryptDataTransfer); err != nil {
		return nil, err
	}
	tok, err := TokenFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	kc, err := security.ClientLogin(c, os.Getenv)
	if tok != nil {
		// A delegation token from HADOOP_TOKEN_FILE_LOCATION is used
		// instead of a Kerberos ticket, as Hadoop's client does.
		opts.DelegationToken, kc, err = tok, nil, nil
	}
	if err != nil {
		return nil, err
	}
	if kc != nil {
		opts.KerberosClient = kc
		if opts.KerberosServicePrincipal, err = security.ServerPrincipal(c, security.NameNode); err != nil {
			return nil, err
		}
		opts.RPCProtection = c.String(conf.HadoopRPCProtection)
	}
	return client.New(opts)
}

// DomainSocketPath is the domain socket pattern a client of c sends its
// data traffic to node-local DataNodes through: dfs.domain.socket.path when
// dfs.client.domain.socket.data.traffic is true, else "".
func DomainSocketPath(c *conf.Conf) (string, error) {
	on, err := c.Bool(conf.DFSClientDomainSocketDataTraffic)
	if err != nil || !on {
		return "", err
	}
	return strings.TrimSpace(c.String(conf.DFSDomainSocketPath)), nil
}

// NameNodeAddresses picks the NameNode RPC addresses a client of c talks to,
// and the authority that hdfs:// URIs of that file system carry (see
// DialFromConf for the rules).
func NameNodeAddresses(c *conf.Conf) (addrs []string, authority string, err error) {
	defFS := strings.TrimSpace(c.String(conf.FSDefaultFS))
	u, err := url.Parse(defFS)
	isHDFS := err == nil && strings.EqualFold(u.Scheme, "hdfs") && u.Host != ""
	switch {
	case isHDFS && slices.Contains(c.Nameservices(), u.Host):
		all, err := c.NameNodeRPCAddresses()
		if err != nil {
			return nil, "", err
		}
		for _, a := range all {
			if a.Nameservice == u.Host {
				addrs = append(addrs, a.Address)
			}
		}
		if len(addrs) == 0 {
			return nil, "", fmt.Errorf("%w (nameservice %s of %s)", conf.ErrNoNameNode, u.Host, conf.FSDefaultFS)
		}
		return addrs, u.Host, nil
	case isHDFS:
		port := u.Port()
		if port == "" {
			port = client.DefaultPort
		}
		return []string{net.JoinHostPort(u.Hostname(), port)}, u.Host, nil
	}
	all, err := c.NameNodeRPCAddresses()
	if err != nil {
		return nil, "", err
	}
	for _, a := range all {
		addrs = append(addrs, a.Address)
	}
	return addrs, "", nil
}

// ConnectRetryFromConf sets opts' connection retry policy from
// ipc.client.connect.max.retries and ipc.client.connect.retry.interval;
// each retry prints Hadoop's INFO line to stderr (nil: silent).
func ConnectRetryFromConf(c *conf.Conf, stderr io.Writer, opts *client.Options) error {
	n, err := c.Int(conf.IPCClientConnectMaxRetries)
	if err != nil {
		return err
	}
	if n < 0 {
		n = 0
	}
	iv, err := c.Duration(conf.IPCClientConnectRetryInterval)
	if err != nil {
		return err
	}
	if iv <= 0 {
		iv = time.Millisecond
	}
	opts.ConnectMaxRetries, opts.ConnectRetryInterval = int(min(n, 1<<20)), iv
	if stderr != nil {
		opts.OnConnectRetry = func(msg string) {
			fmt.Fprintf(stderr, "%s INFO ipc.Client: %s\n", time.Now().Format("2006-01-02 15:04:05,000"), msg)
		}
	}
	return nil
}

// TokenFromEnv returns the HDFS delegation token of the token file that
// HADOOP_TOKEN_FILE_LOCATION names, or nil when it is not set.
func TokenFromEnv(getenv func(string) string) (*client.Token, error) {
	p := getenv("HADOOP_TOKEN_FILE_LOCATION")
	if p == "" {
		return nil, nil
	}
	toks, err := client.ReadTokenFile(p)
	if err != nil {
		return nil, fmt.Errorf("HADOOP_TOKEN_FILE_LOCATION: %w", err)
	}
	for _, t := range toks {
		if t.Kind == "HDFS_DELEGATION_TOKEN" {
			return &t, nil
		}
	}
	return nil, fmt.Errorf("HADOOP_TOKEN_FILE_LOCATION: no HDFS_DELEGATION_TOKEN in %s", p)
}
