package ipc

import (
	"errors"
	"fmt"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// NoLimit, as Limits.MaxConnections, turns the connection limit off (what
// Hadoop's ipc.server.max.connections = 0 means).
const NoLimit = -1

// Defaults of Limits. Those with a Hadoop key are Hadoop's, except
// DefaultMaxConnections (see Limits.MaxConnections); the others are ours.
const (
	DefaultMaxConnections    = 16384
	DefaultMaxIdleTime       = 10 * time.Second
	DefaultIdleThreshold     = 4000
	DefaultKillMax           = 10
	DefaultIdleScanInterval  = 10 * time.Second
	DefaultPurgeInterval     = 15 * time.Minute
	DefaultHandshakeTimeout  = 20 * time.Second
	DefaultMaxConnReplyBytes = 4 << 20
	DefaultMaxReplyBytes     = 256 << 20
	DefaultMaxConnCalls      = 128
	DefaultMaxRequestBytes   = 256 << 20
)

// Limits bound what one client, or all of them together, can make a Server
// hold: connections, queued replies, calls and request bytes read but not
// answered, and time. A client within them never notices them; zero fields
// take the defaults.
type Limits struct {
	// MaxConnections is ipc.server.max.connections: a connection accepted
	// while this many are open is closed at once, before anything is read
	// or written, and logged (rate-limited). Hadoop's default is 0,
	// unlimited; ours is DefaultMaxConnections (16384), because every
	// connection costs memory and a file descriptor, and a NameNode that
	// runs out of descriptors cannot roll its edit log. 16384 is far above
	// what a cluster's DataNodes and clients open, and at the measured
	// cost of an idle connection (see doc.go) stays near 100 MiB. A
	// configured 0 means unlimited, as in Hadoop (NoLimit here).
	MaxConnections int
	// MaxIdleTime is ipc.client.connection.maxidletime (10 s). A connection
	// that has no call in flight, no reply left to write and has received
	// nothing for twice this long is idle.
	MaxIdleTime time.Duration
	// IdleThreshold is ipc.client.idlethreshold (4000): idle connections
	// are closed only while more than this many connections are open, so
	// that clients which break when their connection is closed (the stock
	// Go client does) are left alone under a normal load.
	IdleThreshold int
	// KillMax is ipc.client.kill.max (10): idle connections closed per scan.
	KillMax int
	// IdleScanInterval is ipc.client.connection.idle-scan-interval.ms
	// (10 s): how often connections are checked for idleness, for an
	// unfinished handshake and for replies that wait too long.
	IdleScanInterval time.Duration
	// PurgeInterval is ipc.server.purge.interval (15 minutes): a connection
	// whose oldest unwritten reply has waited this long is closed (the
	// scan checks it, and a write of replies is given no more time than
	// this before the connection is closed).
	PurgeInterval time.Duration
	// HandshakeTimeout (no Hadoop key; 20 s): a connection that has not
	// sent its preamble and connection context this long after it was
	// accepted is closed, however many connections are open.
	HandshakeTimeout time.Duration
	// MaxConnReplyBytes (no Hadoop key; 4 MiB): while a connection has more
	// reply bytes queued than this, nothing more is read from it until its
	// client has taken some (backpressure: calls are delayed, never
	// dropped).
	MaxConnReplyBytes int64
	// MaxReplyBytes (no Hadoop key; 256 MiB): while all connections
	// together have more reply bytes queued than this, connections that
	// have replies of their own waiting are not read. A client that reads
	// its replies has none waiting when it sends its next call, so it is
	// served as usual.
	MaxReplyBytes int64
	// MaxConnCalls (no Hadoop key; 128): calls read from one connection and
	// not yet answered; at the limit the connection is not read until one
	// is answered.
	MaxConnCalls int
	// MaxRequestBytes (no Hadoop key; 256 MiB): request bytes of calls read
	// and not yet answered, over all connections; a reader whose call would
	// pass it waits. A single call larger than this is let in when no other
	// call holds any.
	MaxRequestBytes int64
}

// LimitsFrom reads the Limits that have Hadoop keys from c; the others
// keep their defaults. Errors name the key.
func LimitsFrom(c *conf.Conf) (Limits, error) {
	var l Limits
	var errs []error
	num := func(key string) int {
		v, err := c.Int32(key)
		if err != nil {
			errs = append(errs, err)
		}
		return int(v)
	}
	dur := c.Reader(&errs).Duration
	l.MaxConnections = num(conf.IPCServerMaxConnections)
	if l.MaxConnections == 0 {
		l.MaxConnections = NoLimit
	}
	l.MaxIdleTime = dur(conf.IPCClientConnectionMaxIdleTime)
	l.IdleThreshold = num(conf.IPCClientIdleThreshold)
	l.KillMax = num(conf.IPCClientKillMax)
	l.IdleScanInterval = dur(conf.IPCClientConnectionIdleScanInterval)
	l.PurgeInterval = dur(conf.IPCServerPurgeInterval)
	if len(errs) > 0 {
		return Limits{}, errors.Join(errs...)
	}
	return l, l.Validate()
}

// Validate rejects negative limits, naming the Hadoop key where there is one.
func (l Limits) Validate() error {
	var errs []error
	bad := func(name string, v any) {
		errs = append(errs, fmt.Errorf("ipc: %s: %v must not be negative", name, v))
	}
	if l.MaxConnections < 0 && l.MaxConnections != NoLimit {
		bad(conf.IPCServerMaxConnections, l.MaxConnections)
	}
	if l.MaxIdleTime < 0 {
		bad(conf.IPCClientConnectionMaxIdleTime, l.MaxIdleTime)
	}
	if l.IdleThreshold < 0 {
		bad(conf.IPCClientIdleThreshold, l.IdleThreshold)
	}
	if l.KillMax < 0 {
		bad(conf.IPCClientKillMax, l.KillMax)
	}
	if l.IdleScanInterval < 0 {
		bad(conf.IPCClientConnectionIdleScanInterval, l.IdleScanInterval)
	}
	if l.PurgeInterval < 0 {
		bad(conf.IPCServerPurgeInterval, l.PurgeInterval)
	}
	if l.HandshakeTimeout < 0 {
		bad("handshake timeout", l.HandshakeTimeout)
	}
	if l.MaxConnReplyBytes < 0 {
		bad("queued reply bytes per connection", l.MaxConnReplyBytes)
	}
	if l.MaxReplyBytes < 0 {
		bad("queued reply bytes", l.MaxReplyBytes)
	}
	if l.MaxConnCalls < 0 {
		bad("calls in flight per connection", l.MaxConnCalls)
	}
	if l.MaxRequestBytes < 0 {
		bad("request bytes in flight", l.MaxRequestBytes)
	}
	return errors.Join(errs...)
}

// withDefaults fills zero fields with the defaults.
func (l Limits) withDefaults() Limits {
	set := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	setInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if l.MaxConnections == 0 || (l.MaxConnections < 0 && l.MaxConnections != NoLimit) {
		l.MaxConnections = DefaultMaxConnections
	}
	setDur(&l.MaxIdleTime, DefaultMaxIdleTime)
	setInt(&l.IdleThreshold, DefaultIdleThreshold)
	setInt(&l.KillMax, DefaultKillMax)
	setDur(&l.IdleScanInterval, DefaultIdleScanInterval)
	setDur(&l.PurgeInterval, DefaultPurgeInterval)
	setDur(&l.HandshakeTimeout, DefaultHandshakeTimeout)
	set(&l.MaxConnReplyBytes, DefaultMaxConnReplyBytes)
	set(&l.MaxReplyBytes, DefaultMaxReplyBytes)
	setInt(&l.MaxConnCalls, DefaultMaxConnCalls)
	set(&l.MaxRequestBytes, DefaultMaxRequestBytes)
	return l
}
