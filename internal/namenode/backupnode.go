package namenode

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/namenode/backup"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/storage"
)

// The Backup Node's journal (seed 000 §2.4, seed 003).
//
// The active streams every batch of its edit log to the Backup Node with
// JournalProtocol (backupstream.go on its side): startLogSegment(txid) at
// every roll, journal(firstTxnId, numTxns, records) with the records as the
// active's journals hold them. The Backup Node checks the caller (a
// superuser, of its namespace: UnregisteredNodeException otherwise),
// decodes the batch (editlog.DecodeBatch: exactly numTxns records from
// firstTxnId, nothing else), and asks its state machine (package backup)
// what to do: drop it (DROP_UNTIL_NEXT_ROLL), write it to its local
// journal — the journal spool, in the checkpoint edits dirs, as segments
// named and finalized like the active's — (JOURNAL_ONLY), or write it and
// apply it through the one apply path (IN_SYNC). A batch it refuses fails
// the call, and the active drops the stream; a local write that fails stops
// the Backup Node (it cannot keep its copy). State changes are logged
// ("Backup Node journal state") and kept for the status page.
//
// During a checkpoint the namespace is frozen (JOURNAL_ONLY from the roll
// the active's startCheckpoint makes): the checkpointer rolls it forward
// and saves it, then converges: it applies the spool's finalized segments,
// then, holding the journal lock so that no batch comes in meanwhile, the
// one being written, and the node is IN_SYNC again.
type backupNode struct {
	nn       *NameNode
	journals []*editlog.FileJournal // the local edits dirs' journals (also read through nn.ns.elog)

	mu struct {
		sync.Mutex
		m *backup.Machine
		// changed is closed and replaced at every roll and state change.
		changed chan struct{}
		history []backup.Transition
	}
}

func newBackupNode(nn *NameNode, journals []*editlog.FileJournal, lastTxID int64) *backupNode {
	b := &backupNode{nn: nn, journals: journals}
	b.mu.m = backup.New(lastTxID)
	b.mu.changed = make(chan struct{})
	nn.deps.Logger.Info("Backup Node journal state", "state", backup.DropUntilNextRoll.String(), "lastApplied", lastTxID)
	return b
}

// register serves JournalProtocol on the node's RPC server.
func (b *backupNode) register() {
	s := b.nn.rpc.Service(JournalProtocolName)
	s.Describe(hdfs.File_hdfs_JournalProtocol_proto.Services().ByName("JournalProtocolService"))
	handle(b.nn, s, "journal", b.journal)
	handle(b.nn, s, "startLogSegment", b.startLogSegment)
	handle(b.nn, s, "fence", b.fence)
}

// noteLocked logs the machine's state changes and wakes waiters.
func (b *backupNode) noteLocked(wake bool) {
	for _, t := range b.mu.m.Transitions() {
		b.nn.deps.Logger.Info("Backup Node journal state", "from", t.From.String(), "state", t.To.String(), "txid", t.TxID, "why", t.Why)
		b.mu.history = append(b.mu.history, t)
		if len(b.mu.history) > 100 {
			b.mu.history = b.mu.history[1:]
		}
		wake = true
	}
	if wake {
		close(b.mu.changed)
		b.mu.changed = make(chan struct{})
	}
}

// checkCaller refuses a stream from a non-superuser or from another
// namespace (BackupNodeRpcServer.verifyJournalRequest).
func (b *backupNode) checkCaller(ctx context.Context, info *hdfs.JournalInfoProto) error {
	if err := (&clientRPC{nn: b.nn, ns: b.nn.ns}).checkSuper(ctx); err != nil {
		return err
	}
	v := b.nn.version
	switch {
	case int32(info.GetNamespaceID()) != v.NamespaceID:
		return remoteerr.New(remoteerr.ClassUnregisteredNode, "Invalid namespaceID in journal request - expected %d actual %d", v.NamespaceID, int32(info.GetNamespaceID()))
	case info.GetClusterID() != v.ClusterID:
		return remoteerr.New(remoteerr.ClassUnregisteredNode, "Invalid clusterId in journal request - expected %s actual %s", v.ClusterID, info.GetClusterID())
	case int32(info.GetLayoutVersion()) != storage.NameNodeLayoutVersion:
		return remoteerr.New("org.apache.hadoop.hdfs.server.common.IncorrectVersionException",
			"Unexpected version of the journal request. Reported: %d. Expecting = %d.", int32(info.GetLayoutVersion()), storage.NameNodeLayoutVersion)
	}
	return nil
}

// stopOn stops the node when its journal cannot be kept.
func (b *backupNode) stopOn(err error) error {
	b.nn.ns.stop(err, "Backup Node cannot keep its journal; stopping")
	return remoteerr.New(remoteerr.ClassIOException, "%v", err)
}

func (b *backupNode) journal(ctx context.Context, req *hdfs.JournalRequestProto) (*hdfs.JournalResponseProto, error) {
	if err := b.checkCaller(ctx, req.GetJournalInfo()); err != nil {
		return nil, err
	}
	if hook := b.nn.cfg.Testing.BeforeJournal; hook != nil {
		hook()
	}
	first, n := int64(req.GetFirstTxnId()), int(req.GetNumTxns())
	ops, err := editlog.DecodeBatch(req.GetRecords(), first, n)
	if err != nil {
		return nil, remoteerr.New(remoteerr.ClassIOException, "journal: %v", err)
	}
	last := first + int64(n) - 1
	b.mu.Lock()
	defer b.mu.Unlock()
	d, err := b.mu.m.Journal(first, int64(n))
	b.noteLocked(false)
	if err != nil {
		return nil, remoteerr.New(remoteerr.ClassIOException, "%v", err)
	}
	if d.Log {
		for _, j := range b.journals {
			if err := j.Write(ctx, req.GetRecords(), first, last); err != nil {
				return nil, b.stopOn(err)
			}
			if err := j.Flush(ctx); err != nil {
				return nil, b.stopOn(err)
			}
		}
	}
	if d.Apply {
		ns := b.nn.ns
		ns.cpMu.Lock()
		defer ns.cpMu.Unlock()
		for i, o := range ops {
			if err := ns.applyEdit(first+int64(i), o); err != nil {
				return nil, b.stopOn(err)
			}
		}
	}
	return &hdfs.JournalResponseProto{}, nil
}

func (b *backupNode) startLogSegment(ctx context.Context, req *hdfs.StartLogSegmentRequestProto) (*hdfs.StartLogSegmentResponseProto, error) {
	if err := b.checkCaller(ctx, req.GetJournalInfo()); err != nil {
		return nil, err
	}
	txid := int64(req.GetTxid())
	b.mu.Lock()
	defer b.mu.Unlock()
	r, err := b.mu.m.StartLogSegment(txid)
	if err != nil {
		b.noteLocked(false)
		return nil, remoteerr.New(remoteerr.ClassIOException, "%v", err)
	}
	for _, j := range b.journals {
		switch {
		case r.Finalize:
			err = j.FinalizeSegment(ctx, r.First, r.Last)
		case r.Abandon:
			err = j.AbandonSegment(ctx)
		}
		if err == nil {
			err = j.StartSegment(ctx, r.Start)
		}
		if err != nil {
			b.noteLocked(true)
			return nil, b.stopOn(err)
		}
	}
	if r.Gap && r.First != 0 {
		b.nn.deps.Logger.Warn("the NameNode's stream skipped transactions; the next checkpoint fetches them", "after", r.Last, "segment", r.Start)
	}
	b.noteLocked(true)
	return &hdfs.StartLogSegmentResponseProto{}, nil
}

func (b *backupNode) fence(ctx context.Context, req *hdfs.FenceRequestProto) (*hdfs.FenceResponseProto, error) {
	b.nn.deps.Logger.Info("Fenced", "by", req.GetFencerInfo(), "epoch", req.GetEpoch())
	return nil, remoteerr.New(remoteerr.ClassUnsupported, "BackupNode does not support fence")
}

// state is the journal state.
func (b *backupNode) state() backup.State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.m.State()
}

// describe is the journal state and the last txid written, for the pages.
func (b *backupNode) describe() (string, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.m.State().String(), b.mu.m.WrittenTxID()
}

// History is the Backup Node's journal state changes (the last hundred),
// oldest first; nil on any other node.
func (nn *NameNode) History() []backup.Transition {
	if nn.helper == nil || nn.helper.bn == nil {
		return nil
	}
	b := nn.helper.bn
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]backup.Transition(nil), b.mu.history...)
}

// BackupState is a Backup Node's journal state (DROP_UNTIL_NEXT_ROLL,
// JOURNAL_ONLY, IN_SYNC); "" on any other node.
func (nn *NameNode) BackupState() string {
	if nn.helper == nil || nn.helper.bn == nil {
		return ""
	}
	return nn.helper.bn.state().String()
}

func (b *backupNode) freeze() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.m.FreezeAtNextRoll()
}

func (b *backupNode) applied(txid int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.m.Applied(txid)
}

func (b *backupNode) reloaded(txid int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.m.Reloaded(txid)
}

// waitFrozen waits until the namespace no longer follows the stream
// (JOURNAL_ONLY): the roll of the checkpoint's startCheckpoint reached the
// node. A node whose stream has not joined yet (DROP_UNTIL_NEXT_ROLL) goes
// on after the timeout: its checkpoint can still save an image, and it
// joins later; an IN_SYNC one fails the checkpoint.
func (b *backupNode) waitFrozen(ctx context.Context, timeout time.Duration) error {
	t := b.nn.deps.Clock.NewTimer(timeout)
	defer t.Stop()
	for {
		st, changed := b.watch()
		if st == backup.JournalOnly {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C():
			if st == backup.DropUntilNextRoll {
				b.nn.deps.Logger.Warn("the NameNode's stream has not joined; checkpointing without it")
				return nil
			}
			return fmt.Errorf("namenode: the NameNode's roll did not reach the Backup Node within %v", timeout)
		}
	}
}

// watch returns the state and the channel closed at its next change.
func (b *backupNode) watch() (backup.State, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.m.State(), b.mu.changed
}

// converge brings the namespace up to the journal spool after a
// checkpoint: the spool's finalized segments without the lock, then the
// segment being written under it; then the node is IN_SYNC.
func (b *backupNode) converge(ctx context.Context) error {
	ns := b.nn.ns
	for {
		step, err := b.nextStep()
		if err != nil {
			return err
		}
		if step.Final {
			done, err := b.finishConverging(ctx)
			if done || err != nil {
				return err
			}
			continue // the log rolled meanwhile: a finalized segment first
		}
		if err := b.applySpool(ctx, step); err != nil {
			return err
		}
		b.applied(ns.applied())
	}
}

func (b *backupNode) nextStep() (backup.Step, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.m.Converge()
}

// finishConverging applies the segment being written with the journal lock
// held, so that no batch comes in meanwhile, and moves to IN_SYNC. It
// reports false when the log rolled since the last step, so that a
// finalized segment comes first.
func (b *backupNode) finishConverging(ctx context.Context) (bool, error) {
	ns := b.nn.ns
	b.mu.Lock()
	defer b.mu.Unlock()
	step, err := b.mu.m.Converge()
	if err != nil || !step.Final {
		return false, err
	}
	b.nn.deps.Logger.Info("Going to finish converging with the in-progress journal segment", "from", step.From, "to", step.To)
	err = b.applySpool(ctx, step)
	if err == nil {
		b.mu.m.Applied(ns.applied())
		err = b.mu.m.Converged()
	}
	b.noteLocked(false)
	if err == nil {
		b.nn.deps.Logger.Info("Successfully synced BackupNode with NameNode", "txid", ns.applied())
	}
	return true, err
}

// applySpool applies the local journal's edits step.From..step.To.
func (b *backupNode) applySpool(ctx context.Context, step backup.Step) error {
	if step.To < step.From {
		return nil
	}
	ns := b.nn.ns
	last, _, err := ns.catchUp(ctx, editlog.ReadOptions{To: step.To, InProgress: step.Final}, ns.elog.ReadOps)
	if err == nil && last < step.To {
		err = fmt.Errorf("the journal spool ends at txid %d, want %d", last, step.To)
	}
	if err != nil {
		return fmt.Errorf("namenode: applying the journal spool %d-%d: %w", step.From, step.To, err)
	}
	return nil
}
