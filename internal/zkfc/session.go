package zkfc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/hdfsgo/hdfsgo/internal/zkfc/elector"
)

// session is one ZooKeeper session of a controller (Hadoop's elector
// closes a session and opens a new one to rejoin, never reuses one). Its
// methods may be called from any goroutine; zk.Conn is safe for
// concurrent use.
type session struct {
	id   int
	conn *zk.Conn
	cfg  *Config
	log  *slog.Logger
}

// sessionEvent is what a session reports to the controller's loop.
type sessionEvent int

const (
	evConnected sessionEvent = iota
	evDisconnected
	evExpired
	evAuthFailed
	evLockDeleted
	evLockChanged
)

// openSession connects to the quorum and waits, at most the session
// timeout, for a session; then it adds the configured credentials. Events
// of the session go to onEvent, which must not block (it runs on the
// ZooKeeper client's goroutines).
func openSession(ctx context.Context, cfg *Config, id int, log *slog.Logger, onEvent func(id int, ev sessionEvent)) (*session, error) {
	lock := cfg.Chroot + cfg.LockPath()
	ready := make(chan struct{})
	var once sync.Once
	callback := func(ev zk.Event) {
		switch ev.Type {
		case zk.EventSession:
			switch ev.State {
			case zk.StateHasSession:
				once.Do(func() { close(ready) })
				onEvent(id, evConnected)
			case zk.StateDisconnected:
				onEvent(id, evDisconnected)
			case zk.StateExpired:
				onEvent(id, evExpired)
			case zk.StateAuthFailed:
				onEvent(id, evAuthFailed)
			}
		case zk.EventNodeDeleted:
			if ev.Path == lock {
				onEvent(id, evLockDeleted)
			}
		case zk.EventNodeCreated, zk.EventNodeDataChanged, zk.EventNodeChildrenChanged:
			if ev.Path == lock {
				onEvent(id, evLockChanged)
			}
		}
	}
	bind := cfg.ZKBindHost
	dialer := func(network, address string, timeout time.Duration) (net.Conn, error) {
		d := net.Dialer{Timeout: timeout}
		if bind != "" {
			d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(bind)}
		}
		return d.Dial(network, address)
	}
	conn, _, err := zk.Connect(cfg.Servers, cfg.SessionTimeout,
		zk.WithEventCallback(callback), zk.WithDialer(dialer),
		zk.WithLogger(zkLogger{log}), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoZooKeeper, err)
	}
	t := time.NewTimer(cfg.SessionTimeout)
	defer t.Stop()
	select {
	case <-ready:
	case <-t.C:
		conn.Close()
		return nil, fmt.Errorf("%w: Connection timed out: couldn't connect to ZooKeeper in %d milliseconds", ErrNoZooKeeper, cfg.SessionTimeout.Milliseconds())
	case <-ctx.Done():
		conn.Close()
		return nil, ctx.Err()
	}
	for _, a := range cfg.Auth {
		if err := conn.AddAuth(a.Scheme, a.Auth); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%w: adding %s credentials: %w", ErrNoZooKeeper, a.Scheme, err)
		}
	}
	return &session{id: id, conn: conn, cfg: cfg, log: log}, nil
}

// close ends the session: ZooKeeper deletes its ephemeral lock at once.
func (s *session) close() { s.conn.Close() }

// zkLogger sends the ZooKeeper client's messages to slog at DEBUG.
type zkLogger struct{ log *slog.Logger }

func (l zkLogger) Printf(format string, args ...any) {
	l.log.Debug("zookeeper: " + fmt.Sprintf(format, args...))
}

// path is p under the quorum's chroot.
func (s *session) path(p string) string { return s.cfg.Chroot + p }

// result classifies an operation's error as the elector needs it, with
// ZooKeeper's code names.
func result(err error) elector.Result {
	switch {
	case err == nil:
		return elector.Result{Code: elector.OK, Name: "OK"}
	case errors.Is(err, zk.ErrNoNode):
		return elector.Result{Code: elector.NoNode, Name: "NONODE"}
	case errors.Is(err, zk.ErrNodeExists):
		return elector.Result{Code: elector.NodeExists, Name: "NODEEXISTS"}
	case errors.Is(err, zk.ErrSessionExpired):
		return elector.Result{Code: elector.SessionExpired, Name: "SESSIONEXPIRED"}
	case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrNoServer), errors.Is(err, zk.ErrClosing):
		return elector.Result{Code: elector.ConnectionLoss, Name: "CONNECTIONLOSS"}
	}
	names := []struct {
		err  error
		name string
	}{
		{zk.ErrNoAuth, "NOAUTH"}, {zk.ErrBadVersion, "BADVERSION"}, {zk.ErrInvalidACL, "INVALIDACL"},
		{zk.ErrAuthFailed, "AUTHFAILED"}, {zk.ErrNotEmpty, "NOTEMPTY"}, {zk.ErrNoChildrenForEphemerals, "NOCHILDRENFOREPHEMERALS"},
		{zk.ErrSessionMoved, "SESSIONMOVED"}, {zk.ErrBadArguments, "BADARGUMENTS"}, {zk.ErrAPIError, "APIERROR"},
	}
	for _, n := range names {
		if errors.Is(err, n.err) {
			return elector.Result{Code: elector.Failed, Name: n.name}
		}
	}
	return elector.Result{Code: elector.Failed, Name: strings.ToUpper(strings.TrimPrefix(err.Error(), "zk: "))}
}

// retry runs op until it succeeds, fails otherwise than by losing the
// connection, or has been tried max times (Hadoop's zkDoWithRetries).
// extra, when set, is one more error that is retried.
func retry(max int, extra error, op func() error) error {
	for i := 1; ; i++ {
		err := op()
		if err == nil || i >= max {
			return err
		}
		if result(err).Code != elector.ConnectionLoss && (extra == nil || !errors.Is(err, extra)) {
			return err
		}
	}
}

// createLock creates the ephemeral lock holding data, once.
func (s *session) createLock(data []byte) elector.Result {
	_, err := s.conn.Create(s.path(s.cfg.LockPath()), data, zk.FlagEphemeral, s.cfg.ACL)
	return result(err)
}

// statLock checks the lock and sets a watch on it; mine says whether its
// ephemeral owner is this session.
func (s *session) statLock() (elector.Result, bool) {
	exists, stat, _, err := s.conn.ExistsW(s.path(s.cfg.LockPath()))
	if err != nil {
		return result(err), false
	}
	if !exists {
		return elector.Result{Code: elector.NoNode, Name: "NONODE"}, false
	}
	return result(nil), stat.EphemeralOwner == s.conn.SessionID()
}

// get reads a znode with retries.
func (s *session) get(p string) ([]byte, int32, error) {
	var data []byte
	var version int32
	err := retry(s.cfg.MaxRetries, nil, func() error {
		d, stat, err := s.conn.Get(s.path(p))
		if err == nil {
			data, version = d, stat.Version
		}
		return err
	})
	return data, version, err
}

// writeBreadcrumb creates the breadcrumb or sets it at version.
func (s *session) writeBreadcrumb(data []byte, create bool, version int32) elector.Result {
	p := s.path(s.cfg.BreadcrumbPath())
	return result(retry(s.cfg.MaxRetries, nil, func() error {
		if create {
			_, err := s.conn.Create(p, data, 0, s.cfg.ACL)
			return err
		}
		_, err := s.conn.Set(p, data, version)
		return err
	}))
}

// deleteOwnBreadcrumb deletes the breadcrumb if it holds data; failing is
// only logged: the next active will fence instead.
func (s *session) deleteOwnBreadcrumb(data []byte) {
	got, version, err := s.get(s.cfg.BreadcrumbPath())
	if err == nil && !bytes.Equal(got, data) {
		err = fmt.Errorf("We thought we were active, but in fact the active znode had the wrong data: %x", got)
	}
	if err == nil {
		err = retry(s.cfg.MaxRetries, nil, func() error { return s.conn.Delete(s.path(s.cfg.BreadcrumbPath()), version) })
	}
	if err != nil {
		s.log.Warn(fmt.Sprintf("Unable to delete our own bread-crumb of being active at %s. Expecting to be fenced by the next active.", s.cfg.BreadcrumbPath()), "err", err)
	}
}

// parentExists reports whether the parent znode exists.
func (s *session) parentExists() (bool, error) {
	var exists bool
	err := retry(s.cfg.MaxRetries, nil, func() error {
		ok, _, err := s.conn.Exists(s.path(s.cfg.ParentZNode))
		exists = ok
		return err
	})
	if err != nil {
		return false, fmt.Errorf("Couldn't determine existence of znode '%s': %w", s.cfg.ParentZNode, err)
	}
	return exists, nil
}

// ensureParent creates the parent znode and every znode above it, with
// the configured ACL (set again on those that exist with another).
func (s *session) ensureParent() error {
	parts := strings.Split(strings.TrimPrefix(s.cfg.ParentZNode, "/"), "/")
	prefix := ""
	for _, part := range parts {
		prefix += "/" + part
		p := s.path(prefix)
		err := retry(s.cfg.MaxRetries, nil, func() error {
			_, err := s.conn.Create(p, []byte{}, 0, s.cfg.ACL)
			return err
		})
		if err == nil {
			continue
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("Couldn't create %s: %w", prefix, err)
		}
		if err := retry(s.cfg.MaxRetries, zk.ErrBadVersion, func() error {
			acl, stat, err := s.conn.GetACL(p)
			if err != nil || sameACL(acl, s.cfg.ACL) {
				return err
			}
			_, err = s.conn.SetACL(p, s.cfg.ACL, stat.Aversion)
			return err
		}); err != nil {
			return fmt.Errorf("Couldn't set ACLs on parent ZNode: %s: %w", prefix, err)
		}
	}
	return nil
}

func sameACL(a, b []zk.ACL) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

// clearParent deletes the parent znode and everything under it.
func (s *session) clearParent() error {
	var del func(p string) error
	del = func(p string) error {
		var children []string
		if err := retry(s.cfg.MaxRetries, nil, func() error {
			c, _, err := s.conn.Children(p)
			children = c
			return err
		}); err != nil {
			if errors.Is(err, zk.ErrNoNode) {
				return nil
			}
			return err
		}
		for _, c := range children {
			if err := del(p + "/" + c); err != nil {
				return err
			}
		}
		err := retry(s.cfg.MaxRetries, nil, func() error { return s.conn.Delete(p, -1) })
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		return err
	}
	if err := del(s.path(s.cfg.ParentZNode)); err != nil {
		return fmt.Errorf("Couldn't clear parent znode %s: %w", s.cfg.ParentZNode, err)
	}
	return nil
}
