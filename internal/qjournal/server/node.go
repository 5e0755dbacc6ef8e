package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/user"
	"sort"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/protocol"
	"github.com/hdfsgo/hdfsgo/internal/security/authorize"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// Deps are the JournalNode's connections to the outside world.
type Deps struct {
	FS     vfs.FS
	Clock  clock.Clock
	Logger *slog.Logger
	// Listener and HTTPListener, when set, are served instead of listening
	// on Config.RPCAddress and Config.HTTPAddress (tests pass port 0).
	Listener, HTTPListener net.Listener
	// Conf is shown at /conf (nil: /conf says none is available).
	Conf *conf.Conf
}

func (d *Deps) fill() {
	if d.FS == nil {
		d.FS = vfs.Default
	}
	if d.Clock == nil {
		d.Clock = clock.Real{}
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
}

// JournalNode is a running JournalNode: the RPC server, the web server and
// the journals it holds, opened on first use.
type JournalNode struct {
	cfg      Config
	deps     Deps
	rpc      *ipc.Server
	rpcAddr  net.Addr
	web      *web.Server
	http     *http.Client // downloads from other JournalNodes
	serveErr chan error
	done     chan struct{}

	syncStop   context.CancelFunc
	syncDone   chan struct{}
	closeOnce  sync.Once
	closeErr   error
	failed     error // set before done is closed when the RPC server died
	failedOnce sync.Once

	mu struct {
		sync.Mutex
		journals map[string]*Journal
		closed   bool
	}
}

// Start creates the edits dir if needed, opens the journals it holds and
// serves RPC and HTTP.
func Start(ctx context.Context, cfg Config, deps Deps) (*JournalNode, error) {
	deps.fill()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := storage.MkdirAllSync(deps.FS, cfg.EditsDir, 0o700); err != nil {
		return nil, fmt.Errorf("journalnode: %s=%s: %w", conf.DFSJournalNodeEditsDir, cfg.EditsDir, err)
	}
	jn := &JournalNode{cfg: cfg, deps: deps, serveErr: make(chan error, 1), done: make(chan struct{})}
	jn.mu.journals = map[string]*Journal{}
	jn.http = &http.Client{Transport: &http.Transport{
		DialContext:           (&net.Dialer{Timeout: cfg.HTTPOpenTimeout}).DialContext,
		ResponseHeaderTimeout: cfg.HTTPReadTimeout,
		MaxIdleConnsPerHost:   4,
	}}
	self := ""
	if u, err := user.Current(); err == nil {
		self = u.Username
	}
	admins, err := authorize.WebAdmins(deps.Conf, self)
	if err != nil {
		return nil, fmt.Errorf("journalnode: %w", err)
	}
	jn.web, err = web.New(web.Config{Addr: cfg.HTTPAddress, Listener: deps.HTTPListener, Role: "JournalNode",
		KeyName: conf.DFSJournalNodeHTTPAddress, Conf: deps.Conf, Logger: deps.Logger, Limits: cfg.HTTPLimits, Admins: admins})
	if err != nil {
		return nil, fmt.Errorf("journalnode: %w", err)
	}
	// Open the journals already on disk, so their lock is taken now and
	// their state shows on the status page.
	names, err := deps.FS.List(cfg.EditsDir)
	if err != nil {
		jn.web.Close(ctx)
		return nil, fmt.Errorf("journalnode: %s: %w", cfg.EditsDir, err)
	}
	for _, n := range names {
		if protocol.CheckJournalID(n) != nil {
			continue
		}
		if fi, err := deps.FS.Stat(join(cfg.EditsDir, n)); err != nil || !fi.IsDir() {
			continue
		}
		if _, err := jn.journal(n); err != nil {
			jn.closeJournals()
			jn.web.Close(ctx)
			return nil, err
		}
	}
	l := deps.Listener
	if l == nil {
		if l, err = net.Listen("tcp", cfg.RPCAddress); err != nil {
			jn.closeJournals()
			jn.web.Close(ctx)
			return nil, fmt.Errorf("journalnode: listen on %s (%s): %w", cfg.RPCAddress, conf.DFSJournalNodeRPCAddress, err)
		}
	}
	authz, err := authorize.IPC(deps.Conf)
	if err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("journalnode: %w", err)
	}
	jn.rpc = ipc.NewServer(ipc.ServerConfig{Handlers: cfg.Handlers, MaxDataLength: cfg.MaxDataLength,
		Limits: cfg.RPCLimits, Logger: deps.Logger, Kerberos: cfg.Kerberos.ServerAcceptor(), Authorize: authz})
	jn.rpcAddr = l.Addr()
	jn.registerRPC()
	jn.registerWeb()
	go func() { jn.serveErr <- jn.rpc.Serve(l) }()
	jn.web.Start()
	syncCtx, cancel := context.WithCancel(context.Background())
	jn.syncStop, jn.syncDone = cancel, make(chan struct{})
	go func() {
		defer close(jn.syncDone)
		if cfg.EnableSync {
			jn.syncLoop(syncCtx)
		}
	}()
	go jn.watch()
	deps.Logger.Info("JournalNode started", "rpc", jn.rpcAddr.String(), "http", jn.web.Addr().String(), "editsDir", cfg.EditsDir)
	return jn, nil
}

// watch stops the JournalNode when its RPC server dies.
func (jn *JournalNode) watch() {
	select {
	case err := <-jn.serveErr:
		if err != nil && !errors.Is(err, ipc.ErrServerClosed) {
			jn.failedOnce.Do(func() { jn.failed = fmt.Errorf("journalnode: RPC server stopped: %w", err) })
			jn.Close()
		}
	case <-jn.done:
	}
}

// RPCAddr is the address RPC is served on.
func (jn *JournalNode) RPCAddr() net.Addr { return jn.rpcAddr }

// HTTPAddr is the address of the web server.
func (jn *JournalNode) HTTPAddr() net.Addr { return jn.web.Addr() }

// HTTPURL is "http://host:port" of the web server, with the host the
// caller reached the RPC server on when the web server listens on every
// address.
func (jn *JournalNode) HTTPURL() string { return "http://" + jn.web.Addr().String() }

// Done is closed when the JournalNode stopped.
func (jn *JournalNode) Done() <-chan struct{} { return jn.done }

// Err is the failure that stopped the JournalNode, if any.
func (jn *JournalNode) Err() error { return jn.failed }

// Close stops serving, ends the sync loop and closes every journal (an
// open segment stays in progress, as after a crash).
func (jn *JournalNode) Close() error {
	jn.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var errs []error
		jn.syncStop()
		<-jn.syncDone
		if err := jn.rpc.Shutdown(ctx); err != nil && !errors.Is(err, ipc.ErrServerClosed) {
			errs = append(errs, err)
		}
		if err := jn.web.Close(ctx); err != nil {
			errs = append(errs, err)
		}
		jn.http.CloseIdleConnections()
		if err := jn.closeJournals(); err != nil {
			errs = append(errs, err)
		}
		jn.closeErr = errors.Join(errs...)
		close(jn.done)
		jn.deps.Logger.Info("JournalNode stopped")
	})
	return jn.closeErr
}

func (jn *JournalNode) closeJournals() error {
	jn.mu.Lock()
	js := jn.mu.journals
	jn.mu.journals = map[string]*Journal{}
	jn.mu.closed = true
	jn.mu.Unlock()
	var errs []error
	for _, j := range js {
		if err := j.close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// journal returns journal jid, opening (and creating) its directory on
// first use.
func (jn *JournalNode) journal(jid string) (*Journal, error) {
	if err := protocol.CheckJournalID(jid); err != nil {
		return nil, err
	}
	jn.mu.Lock()
	defer jn.mu.Unlock()
	if jn.mu.closed {
		return nil, errors.New("journalnode: shutting down")
	}
	if j := jn.mu.journals[jid]; j != nil {
		return j, nil
	}
	size := int64(0)
	if jn.cfg.TailEditsInProgress {
		size = jn.cfg.EditCacheSize
	}
	j, err := openJournal(jn.deps.FS, jn.cfg.EditsDir, jid, size, jn.deps.Clock, jn.deps.Logger, jn.fetch)
	if err != nil {
		return nil, err
	}
	jn.mu.journals[jid] = j
	jn.addJournalBean(j)
	return j, nil
}

// existingJournal returns journal jid if it is open.
func (jn *JournalNode) existingJournal(jid string) *Journal {
	jn.mu.Lock()
	defer jn.mu.Unlock()
	return jn.mu.journals[jid]
}

// Journals returns the open journals, by id.
func (jn *JournalNode) Journals() []*Journal {
	jn.mu.Lock()
	defer jn.mu.Unlock()
	out := make([]*Journal, 0, len(jn.mu.journals))
	for _, j := range jn.mu.journals {
		out = append(out, j)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].jid < out[b].jid })
	return out
}

// Journal returns journal jid if it is open (tests and tools).
func (jn *JournalNode) Journal(jid string) *Journal { return jn.existingJournal(jid) }
