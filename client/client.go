package client

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/user"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/dnconn"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	_ "github.com/hdfsgo/hdfsgo/internal/proto/hdfsfast" // getFileInfo answers decoded by hand
	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/security/dtoken"
)

// ClientProtocol is the RPC protocol name the NameNode serves clients on.
const ClientProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// DefaultPort is the NameNode RPC port assumed when an address or URI
// names none.
const DefaultPort = "8020"

// Sentinel errors of the package. They appear as the Err of a
// *fs.PathError (or wrapped with %w) so errors.Is finds them.
var (
	// ErrNoAddress: Options.Addresses is empty.
	ErrNoAddress = errors.New("client: no NameNode address given")
	// ErrWrongFS: a path is a URI of another file system (another scheme
	// or another NameNode).
	ErrWrongFS = errors.New("client: wrong file system")
	// ErrNotDone: the NameNode answered a call with result=false without
	// naming a reason (e.g. mkdirs or delete refused).
	ErrNotDone = errors.New("client: the NameNode did not perform the operation")
	// ErrBadResponse: a response lacks a field the call needs.
	ErrBadResponse = errors.New("client: malformed response from the NameNode")
	// ErrClosed: the FileSystem was closed.
	ErrClosed = errors.New("client: file system closed")
	// ErrDataNode: a DataNode refused an op or broke the protocol.
	ErrDataNode = errors.New("client: datanode error")
	// ErrAccessToken: a DataNode refused the block access token of an op
	// (ERROR_ACCESS_TOKEN, or in the SASL handshake); readers and writers
	// get new tokens from the NameNode and try once more.
	ErrAccessToken = errors.New("client: block access token refused")
	// ErrNoReplica: no location of a block could serve it.
	ErrNoReplica = errors.New("client: could not obtain block")
	// ErrPipeline: a write pipeline failed and could not be recovered.
	ErrPipeline = errors.New("client: write pipeline failed")
	// ErrNotComplete: complete kept answering false until the retries ran
	// out (the last block did not reach its minimal replication).
	ErrNotComplete = errors.New("client: file could not be completed")
	// ErrWriterClosed: Write, Flush or Sync after Close.
	ErrWriterClosed = errors.New("client: writer closed")
)

// caller is the RPC seam: *ipc.Client in production, an in-process fake
// in tests.
type caller interface {
	Call(ctx context.Context, method string, req, resp proto.Message) error
	Close() error
}

// Options configures a FileSystem.
type Options struct {
	// Addresses are the NameNode RPC addresses (host:port) tried in order;
	// with HA, every NameNode of the nameservice. Required.
	Addresses []string
	// User is the effective user name sent in the connection context
	// (SIMPLE authentication). Empty means the operating-system user.
	User string
	// Authority is the authority that hdfs:// URIs passed to the methods
	// may name, besides the Addresses: e.g. "nn.example.com:8020", or the
	// nameservice of an HA setup ("mycluster"). Empty: only the Addresses.
	Authority string
	// WorkingDir is the directory relative paths are resolved against.
	// Empty means /user/<User>, as in Hadoop.
	WorkingDir string
	// Umask is cleared from the permission of directories and files this
	// client creates (Hadoop fs.permissions.umask-mode). Zero clears
	// nothing.
	Umask fs.FileMode
	// Replication and BlockSize of files created by CreateEmptyFile; zero
	// means the NameNode's server defaults.
	Replication uint16
	BlockSize   int64
	// ClientName is the lease-holder name. Empty means
	// DFSClient_NONMAPREDUCE_<random>_<n>, the shape of Hadoop's client.
	ClientName string
	// LeaseRenewInterval is how often renewLease is called while a file is
	// open for writing. Zero means 30 s, half the NameNode's soft limit.
	LeaseRenewInterval time.Duration
	// DomainSocketPath, when set, sends the data traffic to DataNodes on
	// this host over their UNIX domain socket instead of TCP: Hadoop's
	// dfs.domain.socket.path ("_PORT" becomes the DataNode's streaming
	// port), used as dfs.client.domain.socket.data.traffic=true does.
	// Other DataNodes, and a socket that does not answer, get TCP.
	DomainSocketPath string
	// KerberosClient, when set, authenticates to the NameNode with
	// Kerberos (hadoop.security.authentication=kerberos): a logged-in
	// github.com/jcmturner/gokrb5/v8 client, from a ticket cache or a
	// keytab. The user is then the ticket's principal and User is ignored.
	KerberosClient *krbclient.Client
	// KerberosServicePrincipal is the NameNode's principal
	// (dfs.namenode.kerberos.principal, e.g. nn/_HOST@EXAMPLE.COM; _HOST
	// becomes the host dialled). Required with KerberosClient.
	KerberosServicePrincipal string
	// DelegationToken, when set and KerberosClient is not, authenticates
	// to the NameNode with this delegation token (from `hdfs fetchdt`; SASL
	// DIGEST-MD5, the NameNode's hadoop.rpc.protection must include
	// authentication). The user is then the token's owner.
	DelegationToken *Token
	// RPCProtection is the comma-separated list of protection levels the
	// client accepts (hadoop.rpc.protection: authentication, integrity,
	// privacy); the strongest the NameNode also offers is used. Empty
	// accepts any.
	RPCProtection string
	// DataTransferProtection is dfs.data.transfer.protection: the
	// comma-separated protection levels (authentication, integrity,
	// privacy) the client accepts for the SASL handshake it makes with
	// every DataNode (the strongest the DataNode offers is used). Empty:
	// no handshake, unless EncryptDataTransfer.
	DataTransferProtection string
	// DataTransferCipherSuites is dfs.encrypt.data.transfer.cipher.suites:
	// "AES/CTR/NoPadding" asks a DataNode agreeing on privacy for AES/CTR
	// streams instead of the SASL layer's RC4.
	DataTransferCipherSuites string
	// EncryptDataTransfer (dfs.encrypt.data.transfer) turns the handshake
	// on without DataTransferProtection. Whenever the handshake is on, it
	// is made with a data encryption key from the NameNode
	// (getDataEncryptionKey) if the NameNode's server defaults say
	// dfs.encrypt.data.transfer, as Hadoop's client does.
	EncryptDataTransfer bool
	// WritePacketSize is the size of the packets a writer sends (Hadoop's
	// client key dfs.client-write-packet-size, at most 16 MiB); zero means
	// the NameNode's server default (65536 unless changed there).
	WritePacketSize int
	// RetryWindowBase is the base of a reader's randomized wait between
	// rounds over a block's locations (Hadoop's
	// dfs.client.retry.window.base); zero means 3 s.
	RetryWindowBase time.Duration
	// ConnectMaxRetries and ConnectRetryInterval, when the interval is
	// set and there is one address, are Hadoop's
	// ipc.client.connect.max.retries and ipc.client.connect.retry.interval:
	// a NameNode that refuses the connection is tried again that many
	// times that far apart, OnConnectRetry hearing Hadoop's "Retrying
	// connect to server: ..." line each time; a host that does not
	// resolve fails at once. Zero interval: the client's own backoff.
	ConnectMaxRetries    int
	ConnectRetryInterval time.Duration
	OnConnectRetry       func(msg string)
	// ProxyUser, when set, makes the client act as this user for the one
	// that authenticated (User, or the Kerberos ticket's principal):
	// Hadoop's proxy users (doAs; $HADOOP_PROXY_USER for the hdfs
	// command). The NameNode allows it only as its
	// hadoop.proxyuser.NAME.{hosts,groups,users} keys say, else every call
	// fails with "User: NAME is not allowed to impersonate USER".
	ProxyUser string
}

// Token is a Hadoop token: a delegation token as `hdfs fetchdt` writes it.
type Token struct {
	Identifier, Password []byte
	Kind, Service        string
}

// ReadTokenFile reads the tokens of a token storage file (what `hdfs
// fetchdt` writes, what HADOOP_TOKEN_FILE_LOCATION names).
func ReadTokenFile(path string) ([]Token, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	toks, err := dtoken.UnmarshalTokenFile(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]Token, 0, len(toks))
	for _, t := range toks {
		out = append(out, Token{Identifier: t.GetIdentifier(), Password: t.GetPassword(), Kind: t.GetKind(), Service: t.GetService()})
	}
	return out, nil
}

// FileSystem is a client of one HDFS namespace. It is safe for concurrent
// use by several goroutines.
type FileSystem struct {
	rpc         caller
	user        string
	workingDir  string
	authorities []string // lower-cased host:port or logical names accepted in URIs
	uri         string   // hdfs://<authority>, for display
	umask       uint32
	dialer      *dnDialer // to DataNodes
	packetSize  int       // Options.WritePacketSize
	replication uint16
	blockSize   int64
	clientName  string
	renewEvery  time.Duration
	heartbeat   time.Duration // idle time before a write pipeline heartbeat
	retryWindow time.Duration // base wait between a reader's rounds over the locations

	mu struct {
		sync.Mutex
		defaults *ServerDefaults // cached getServerDefaults answer
	}
	deks  keyCache // the NameNode's data encryption key
	lease struct {
		sync.Mutex
		s leaseState
	}
	closed atomic.Bool
}

// New returns a FileSystem talking to the NameNodes in opts.Addresses. It
// does no I/O: the first call connects.
func New(opts Options) (*FileSystem, error) {
	if len(opts.Addresses) == 0 {
		return nil, ErrNoAddress
	}
	u, err := effectiveUser(opts.User)
	if err != nil {
		return nil, err
	}
	opts.User = u
	cfg := ipc.ClientConfig{
		Addresses:  opts.Addresses,
		User:       opts.User,
		Protocol:   ClientProtocol,
		Idempotent: idempotent,
		ConnectRetry: ipc.ConnectRetry{
			MaxRetries: opts.ConnectMaxRetries,
			Interval:   opts.ConnectRetryInterval,
			Notify:     opts.OnConnectRetry,
		},
	}
	if opts.KerberosClient != nil {
		if opts.KerberosServicePrincipal == "" {
			return nil, errors.New("hdfs: Kerberos is on but the NameNode's principal (dfs.namenode.kerberos.principal) is not given")
		}
		cfg.Kerberos = &security.Initiator{Client: opts.KerberosClient, Principal: opts.KerberosServicePrincipal}
		if opts.RPCProtection != "" {
			q, err := security.ParseProtection("hadoop.rpc.protection", opts.RPCProtection)
			if err != nil {
				return nil, err
			}
			cfg.Protection = q
		}
		// Paths and leases are the user's short name, as the NameNode
		// sees it by its auth_to_local rules (DEFAULT: the primary).
		opts.User, _, _ = strings.Cut(opts.KerberosClient.Credentials.UserName(), "/")
	}
	if opts.KerberosClient == nil && opts.DelegationToken != nil {
		t := opts.DelegationToken
		id, err := dtoken.Unmarshal(t.Identifier)
		if err != nil {
			return nil, fmt.Errorf("hdfs: delegation token: %w", err)
		}
		cfg.Token = &common.TokenProto{Identifier: t.Identifier, Password: t.Password,
			Kind: proto.String(t.Kind), Service: proto.String(t.Service)}
		cfg.TokenUser = id.Owner
		short, _, _ := strings.Cut(id.Owner, "@")
		opts.User, _, _ = strings.Cut(short, "/")
	}
	if opts.ProxyUser != "" {
		cfg.RealUser = opts.User
		cfg.User, opts.User = opts.ProxyUser, opts.ProxyUser
	}
	c := ipc.NewClient(cfg)
	f, err := newFileSystem(opts, c)
	if err != nil {
		c.Close()
		return nil, err
	}
	return f, nil
}

// NewFromURI returns a FileSystem for the NameNode named by an
// hdfs://host[:port] URI (port 8020 when absent); any path in the URI is
// ignored. user may be empty (the operating-system user).
func NewFromURI(uri, user string) (*FileSystem, error) {
	u, err := url.Parse(uri)
	if err != nil || !strings.EqualFold(u.Scheme, "hdfs") || u.Hostname() == "" {
		return nil, fmt.Errorf("%w: %q is not an hdfs://host:port URI", ErrWrongFS, uri)
	}
	port := u.Port()
	if port == "" {
		port = DefaultPort
	}
	return New(Options{Addresses: []string{net.JoinHostPort(u.Hostname(), port)}, User: user, Authority: u.Host})
}

// newFileSystem builds a FileSystem over any caller; tests pass a fake.
// opts.User must be set.
func newFileSystem(opts Options, c caller) (*FileSystem, error) {
	if len(opts.Addresses) == 0 {
		return nil, ErrNoAddress
	}
	f := &FileSystem{
		rpc:         c,
		user:        opts.User,
		umask:       permBits(opts.Umask),
		replication: opts.Replication,
		blockSize:   opts.BlockSize,
		clientName:  opts.ClientName,
		renewEvery:  opts.LeaseRenewInterval,
		dialer:      &dnDialer{d: dnconn.NewDialer(opts.DomainSocketPath, dialTimeout)},
		packetSize:  opts.WritePacketSize,
	}
	sc, err := f.newDataTransferSASL(opts)
	if err != nil {
		return nil, err
	}
	f.dialer.sasl = sc
	if opts.WritePacketSize < 0 || opts.WritePacketSize > maxWritePacketSize {
		return nil, fmt.Errorf("client: write packet size %d is not between 0 and %d", opts.WritePacketSize, maxWritePacketSize)
	}
	if f.renewEvery <= 0 {
		f.renewEvery = leaseRenewInterval
	}
	f.heartbeat = heartbeatInterval
	f.retryWindow = retryWindow
	if opts.RetryWindowBase > 0 {
		f.retryWindow = opts.RetryWindowBase
	}
	if f.clientName == "" {
		// Hadoop's client appends a random int and its thread id; a small
		// random number stands in for the thread id.
		var r [6]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, fmt.Errorf("client: client name: %w", err)
		}
		f.clientName = fmt.Sprintf("DFSClient_NONMAPREDUCE_%d_%d",
			int32(binary.BigEndian.Uint32(r[:4])), 1+int(binary.BigEndian.Uint16(r[4:]))%1000)
	}
	auth := opts.Authority
	if auth == "" {
		auth = opts.Addresses[0]
	}
	f.uri = "hdfs://" + auth
	for _, a := range append([]string{opts.Authority}, opts.Addresses...) {
		if a != "" {
			f.authorities = append(f.authorities, normAuthority(a))
		}
	}
	wd := opts.WorkingDir
	if wd == "" {
		wd = "/user/" + opts.User
	}
	if !strings.HasPrefix(wd, "/") {
		return nil, &fs.PathError{Op: "chdir", Path: wd, Err: fs.ErrInvalid}
	}
	f.workingDir = path.Clean(wd)
	return f, nil
}

// idempotent reports the ClientProtocol methods this package calls that may
// be resent after a lost response: the ones Hadoop marks @Idempotent, and
// the @AtMostOnce ones (create, append, delete, rename, rename2, concat,
// updatePipeline), which the NameNode's retry cache protects — a resend
// keeps its call id, and the NameNode that carried the call out answers it
// from the cache, as does a standby that took over, which rebuilt the cache
// from the call ids the edit log records.
func idempotent(method string) bool {
	switch method {
	case "getFileInfo", "getListing", "mkdirs", "setPermission", "setOwner",
		"setTimes", "setReplication", "getContentSummary", "getQuotaUsage",
		"setQuota", "getFsStats", "getServerDefaults", "complete", "checkAccess",
		"getBlockLocations", "renewLease", "fsync", "updateBlockForPipeline", "truncate",
		"reportBadBlocks", "abandonBlock", "addBlock", "recoverLease",
		"create", "append", "delete", "rename", "rename2", "concat", "updatePipeline":
		return true
	}
	return false
}

func effectiveUser(u string) (string, error) {
	if u != "" {
		return u, nil
	}
	cur, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("client: current user: %w", err)
	}
	return cur.Username, nil
}

// User returns the effective user name.
func (f *FileSystem) User() string { return f.user }

// WorkingDir returns the directory relative paths are resolved against.
func (f *FileSystem) WorkingDir() string { return f.workingDir }

// URI returns the file system's URI, hdfs://<authority>.
func (f *FileSystem) URI() string { return f.uri }

// ClientName returns the lease-holder name this client sends.
func (f *FileSystem) ClientName() string { return f.clientName }

// Close releases the NameNode connections. Calls after Close fail with
// ErrClosed.
func (f *FileSystem) Close() error {
	if f.closed.Swap(true) {
		return nil
	}
	f.stopLeases()
	return f.rpc.Close()
}

func (f *FileSystem) call(ctx context.Context, method string, req, resp proto.Message) error {
	if f.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return f.rpc.Call(ctx, method, req, resp)
}

// Resolve turns a path as a user writes it into the absolute, clean path
// sent to the NameNode:
//
//	/a/b/            -> /a/b
//	a/b              -> <WorkingDir>/a/b
//	hdfs://nn:8020/a -> /a      (the authority must be this file system's)
//	hdfs:/a          -> /a
//
// Any other scheme, or another authority, fails with ErrWrongFS.
func (f *FileSystem) Resolve(name string) (string, error) {
	p := name
	if i := strings.Index(p, ":"); i > 0 && !strings.Contains(p[:i], "/") {
		scheme := p[:i]
		if !strings.EqualFold(scheme, "hdfs") {
			return "", ErrWrongFS
		}
		p = p[i+1:]
		if strings.HasPrefix(p, "//") {
			rest := p[2:]
			auth := rest
			p = "/"
			if j := strings.Index(rest, "/"); j >= 0 {
				auth, p = rest[:j], rest[j:]
			}
			if auth != "" && !f.ownsAuthority(auth) {
				return "", ErrWrongFS
			}
		}
	}
	if p == "" {
		return "", fs.ErrInvalid
	}
	if !strings.HasPrefix(p, "/") {
		p = f.workingDir + "/" + p
	}
	return path.Clean(p), nil
}

func (f *FileSystem) ownsAuthority(a string) bool {
	n := strings.ToLower(strings.TrimSpace(a))
	for _, x := range f.authorities {
		if x == n || x == n+":"+DefaultPort {
			return true
		}
	}
	return false
}

// normAuthority lower-cases an authority for comparison.
func normAuthority(a string) string {
	return strings.ToLower(strings.TrimSpace(a))
}

// resolve is Resolve with the error already a *fs.PathError for op.
func (f *FileSystem) resolve(op, name string) (string, error) {
	p, err := f.Resolve(name)
	if err != nil {
		return "", &fs.PathError{Op: op, Path: name, Err: err}
	}
	return p, nil
}

// permBits maps an fs.FileMode to HDFS's 16-bit permission: rwxrwxrwx and
// the sticky bit (01000). Every other bit is dropped.
func permBits(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}
