package server

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	qpb "github.com/hdfsgo/hdfsgo/internal/proto/qjournal"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/protocol"
	"github.com/hdfsgo/hdfsgo/internal/storage"
)

// JournalNode sync (Hadoop's JournalNodeSyncer): every
// dfs.journalnode.sync.interval the JournalNode asks one of its peers, in
// turn, for its manifest of finalized segments
// (InterQJournalProtocol.getEditLogManifestFromJournal) and downloads the
// ones it lacks over /getJournal into <journal>/edits.sync/, checks their
// records, fsyncs them and moves them into current/. Only segments that
// end at or below the journal's committed txid are taken: those a quorum
// holds, so no recovery can decide them otherwise.

// syncRPCTimeout bounds one manifest call to a peer.
const syncRPCTimeout = 20 * time.Second

// syncLoop runs until ctx ends (Close).
func (jn *JournalNode) syncLoop(ctx context.Context) {
	t := jn.deps.Clock.NewTicker(jn.cfg.SyncInterval)
	defer t.Stop()
	next := map[string]int{} // journal id → index of the next peer to ask
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		for _, j := range jn.Journals() {
			if ctx.Err() != nil {
				return
			}
			if n, err := jn.SyncOnce(ctx, j, next); err != nil {
				jn.deps.Logger.Warn("journal sync", "journal", j.jid, "err", err)
			} else if n > 0 {
				jn.deps.Logger.Info("journal sync fetched missing segments", "journal", j.jid, "segments", n)
			}
		}
	}
}

// peers are the RPC addresses of the other JournalNodes of journal jid,
// from the qjournal:// URIs of the configuration.
func (jn *JournalNode) peers(jid string) []string {
	var out []string
	seen := map[string]bool{}
	for _, u := range jn.cfg.SharedEditsURIs {
		addrs, id, err := protocol.ParseURI(u)
		if err != nil || id != jid {
			continue
		}
		for _, a := range addrs {
			if !seen[a] && !jn.isSelf(a) {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// isSelf reports whether addr is this JournalNode's RPC address.
func (jn *JournalNode) isSelf(addr string) bool {
	own, ok := jn.rpcAddr.(*net.TCPAddr)
	if !ok {
		return addr == jn.rpcAddr.String()
	}
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil || ta.Port != own.Port {
		return false
	}
	if !own.IP.IsUnspecified() {
		return ta.IP.Equal(own.IP)
	}
	if ta.IP.IsLoopback() {
		return true
	}
	ifs, _ := net.InterfaceAddrs()
	for _, a := range ifs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ta.IP) {
			return true
		}
	}
	return false
}

// SyncOnce asks journal j's next peer for its finalized segments and
// fetches the committed ones j lacks; it returns how many it fetched.
// next carries the round-robin position between calls (nil: first peer).
func (jn *JournalNode) SyncOnce(ctx context.Context, j *Journal, next map[string]int) (int, error) {
	if !j.IsFormatted() {
		return 0, nil
	}
	peers := jn.peers(j.jid)
	if len(peers) == 0 {
		return 0, nil
	}
	i := 0
	if next != nil {
		i = next[j.jid] % len(peers)
		next[j.jid] = i + 1
	}
	peer := peers[i]
	cc := ipc.ClientConfig{Addresses: []string{peer}, User: "journalnode",
		Protocol: protocol.InterQJournalProtocol, MaxRetries: -1, DialTimeout: jn.cfg.HTTPOpenTimeout}
	if id := jn.cfg.Kerberos; id != nil {
		cc.Kerberos, cc.Protection = id.InitiatorFor(id.Acceptor.Principal), id.Acceptor.Protection
	}
	c := ipc.NewClient(cc)
	defer c.Close()
	cctx, cancel := context.WithTimeout(ctx, syncRPCTimeout)
	defer cancel()
	var resp qpb.GetEditLogManifestResponseProto
	err := c.Call(cctx, "getEditLogManifestFromJournal", &qpb.GetEditLogManifestRequestProto{
		Jid: &qpb.JournalIdProto{Identifier: proto.String(j.jid)}, SinceTxId: proto.Uint64(0), InProgressOk: proto.Bool(false)}, &resp)
	if err != nil {
		return 0, fmt.Errorf("asking %s for its manifest: %w", peer, err)
	}
	base, err := peerHTTP(peer, resp.GetFromURL(), resp.GetHttpPort())
	if err != nil {
		return 0, err
	}
	mine, committed, err := j.Manifest(0, false)
	if err != nil {
		return 0, err
	}
	have := map[[2]int64]bool{}
	oldest := int64(-1)
	for _, s := range mine {
		have[[2]int64{s.Start, s.End}] = true
		if oldest < 0 || s.Start < oldest {
			oldest = s.Start
		}
	}
	si, ok := j.storageInfoString()
	if !ok {
		return 0, nil
	}
	fetched := 0
	for _, l := range resp.GetManifest().GetLogs() {
		a, b := int64(l.GetStartTxId()), int64(l.GetEndTxId())
		if l.GetIsInProgress() || have[[2]int64{a, b}] || b > committed || a < 1 || b < a || (oldest >= 0 && a < oldest) {
			continue
		}
		if overlaps(mine, a, b) {
			jn.deps.Logger.Warn("journal sync: a peer's segment overlaps local ones with other bounds; leaving it", "journal", j.jid,
				"peer", peer, "segment", fmt.Sprintf("%d-%d", a, b))
			continue
		}
		if err := jn.syncSegment(ctx, j, protocol.GetJournalURL(base, j.jid, a, si), a, b); err != nil {
			return fetched, fmt.Errorf("fetching segment %d-%d from %s: %w", a, b, peer, err)
		}
		fetched++
	}
	return fetched, nil
}

func overlaps(segs []RemoteLog, a, b int64) bool {
	for _, s := range segs {
		if s.Start <= b && a <= s.End {
			return true
		}
	}
	return false
}

// peerHTTP is the peer's web base URL: its RPC host with the scheme and
// port of the fromURL it sent (or its httpPort).
func peerHTTP(peerRPC, fromURL string, port uint32) (string, error) {
	host, _, err := net.SplitHostPort(peerRPC)
	if err != nil {
		return "", err
	}
	p := strconv.FormatUint(uint64(port), 10)
	if fromURL != "" {
		u, err := url.Parse(fromURL)
		if err != nil || u.Scheme != "http" || u.Port() == "" {
			return "", fmt.Errorf("peer %s sent an unusable fromURL %q", peerRPC, clip(fromURL))
		}
		p = u.Port()
	}
	return "http://" + net.JoinHostPort(host, p), nil
}

// syncSegment downloads finalized segment a..b into edits.sync/, checks
// it, and moves it into current/.
func (jn *JournalNode) syncSegment(ctx context.Context, j *Journal, u string, a, b int64) error {
	dir := join(j.dir.Root, editsSyncDirName)
	if err := storage.MkdirAllSync(jn.deps.FS, dir, 0o700); err != nil {
		return err
	}
	tmp := join(dir, editlog.FinalizedName(a, b))
	if err := jn.fetch(ctx, u, tmp); err != nil {
		jn.deps.FS.Remove(tmp)
		return err
	}
	last, err := scanSegment(jn.deps.FS, tmp, a)
	if err != nil || last != b {
		jn.deps.FS.Remove(tmp)
		if err == nil {
			err = fmt.Errorf("the downloaded copy ends at txid %d", last)
		}
		return err
	}
	return j.installSynced(tmp, a, b)
}

// installSynced moves a fetched finalized segment into current/ if it is
// still missing and committed. A leftover in-progress copy of it (this
// node missed the finalize) is set aside.
func (j *Journal) installSynced(tmp string, a, b int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.checkFormattedLocked(); err != nil {
		return err
	}
	if b > j.mu.promise.Committed {
		return j.fs.Remove(tmp)
	}
	segs, err := j.segmentsLocked()
	if err != nil {
		return err
	}
	for _, s := range segs {
		switch {
		case !s.InProgress && s.Start <= b && a <= s.End:
			return j.fs.Remove(tmp) // someone put it (or another) in place meanwhile
		case s.InProgress && s.Start == a:
			if j.mu.out != nil && j.mu.curSeg == a {
				return j.fs.Remove(tmp)
			}
			if err := j.moveAsideLocked(s.name, staleSuffix); err != nil {
				return err
			}
		}
	}
	if err := j.fs.Rename(tmp, join(j.current(), editlog.FinalizedName(a, b))); err != nil {
		return err
	}
	if err := j.fs.SyncDir(j.current()); err != nil {
		return err
	}
	if j.mu.out == nil && b > j.mu.highest {
		j.mu.highest = b
	}
	j.log.Info("journal sync: installed a segment fetched from a peer", "segment", editlog.FinalizedName(a, b))
	return nil
}
