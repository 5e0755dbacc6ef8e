package ipc

import (
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
)

// scanLoop checks the connections every IdleScanInterval until the server
// begins closing. It is started by NewServer and waited for by the
// handler shutdown (stopHandlers).
func (s *Server) scanLoop(t clock.Ticker) {
	defer close(s.scanDone)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C():
			// The clock's reading, not the tick's: ticks nobody took
			// are dropped, so a tick's time may be stale.
			s.scan(s.clk.Now())
			s.stats.scans.Add(1)
		}
	}
}

// scan closes, in this order of precedence, connections that have not
// finished their handshake within HandshakeTimeout, connections whose
// oldest unwritten reply is older than PurgeInterval, and — only while
// more than IdleThreshold connections are open, and at most KillMax per
// scan — connections idle for more than twice MaxIdleTime (Hadoop's
// rule: ipc.client.connection.maxidletime is what a client may stay idle,
// the server allows twice that).
func (s *Server) scan(now time.Time) {
	s.mu.Lock()
	conns := make([]*serverConn, 0, len(s.mu.conns))
	for c := range s.mu.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	lim := &s.lim
	open := len(conns)
	killed := 0
	idleSince := now.Add(-2 * lim.MaxIdleTime).UnixNano()
	for _, c := range conns {
		if c.killed.Load() {
			open-- // closed by an earlier scan, not gone yet
			continue
		}
		switch {
		case !c.handshaken.Load() && now.Sub(c.accepted) >= lim.HandshakeTimeout:
			s.stats.unfinished.Add(1)
			s.peerLog.Info("ipc: closing connection: no connection context", "remote", c.remote(),
				"within", lim.HandshakeTimeout)
			c.kill()
			open--
		case purgeDue(c.oldestReply(), now, lim.PurgeInterval):
			s.stats.purged.Add(1)
			s.peerLog.Warn("ipc: closing connection: its client took no replies", "remote", c.remote(),
				"for", lim.PurgeInterval, "key", "ipc.server.purge.interval")
			c.kill()
			open--
		case open > lim.IdleThreshold && killed < lim.KillMax && c.lastContact.Load() < idleSince && c.idle():
			s.stats.idleClosed.Add(1)
			s.log.Debug("ipc: closing idle connection", "remote", c.remote(), "open", open)
			c.kill()
			open--
			killed++
		}
	}
}

func purgeDue(oldest, now time.Time, purge time.Duration) bool {
	return !oldest.IsZero() && now.Sub(oldest) >= purge
}
