package client

import (
	"errors"
	"fmt"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// Config is what a QuorumJournalManager reads from the configuration,
// typed. The timeouts bound how long each kind of quorum call waits for a
// majority (Hadoop's dfs.qjournal.* keys, milliseconds there).
type Config struct {
	// QueueLimitBytes bounds the edits queued for one JournalNode
	// (dfs.qjournal.queued-edits.limit.mb, 10 MiB); a JournalNode further
	// behind is marked out of sync and skipped until the next segment.
	QueueLimitBytes int64

	StartSegmentTimeout       time.Duration // dfs.qjournal.start-segment.timeout.ms, 20 s
	PrepareRecoveryTimeout    time.Duration // dfs.qjournal.prepare-recovery.timeout.ms, 120 s
	AcceptRecoveryTimeout     time.Duration // dfs.qjournal.accept-recovery.timeout.ms, 120 s
	FinalizeSegmentTimeout    time.Duration // dfs.qjournal.finalize-segment.timeout.ms, 120 s
	SelectInputStreamsTimeout time.Duration // dfs.qjournal.select-input-streams.timeout.ms, 20 s
	GetJournalStateTimeout    time.Duration // dfs.qjournal.get-journal-state.timeout.ms, 120 s
	NewEpochTimeout           time.Duration // dfs.qjournal.new-epoch.timeout.ms, 120 s
	// WriteTxnsTimeout bounds the wait for a quorum to make a batch durable
	// (dfs.qjournal.write-txns.timeout.ms, 20 s); past it the edit log
	// fails and the NameNode stops.
	WriteTxnsTimeout time.Duration
	// OperationsTimeout bounds format and the other administrative calls
	// that need every JournalNode (dfs.qjm.operations.timeout, 60 s).
	OperationsTimeout time.Duration
	// HTTPOpenTimeout and HTTPReadTimeout bound segment reads over
	// /getJournal (dfs.qjournal.http.open.timeout.ms and
	// dfs.qjournal.http.read.timeout.ms, 60 s).
	HTTPOpenTimeout, HTTPReadTimeout time.Duration
	// TailInProgress reads the segment being written through
	// getJournaledEdits, from the JournalNodes' edit caches
	// (dfs.ha.tail-edits.in-progress, false).
	TailInProgress bool
	// RPCMaxTxns is how many transactions one getJournaledEdits asks for
	// (dfs.ha.tail-edits.qjm.rpc.max-txns, 5000).
	RPCMaxTxns int
	// User is the user the RPC connections name (the NameNode's).
	User string
	// Kerberos, when set, authenticates the connections to the
	// JournalNodes (the NameNode's keytab, a ticket for
	// dfs.journalnode.kerberos.principal); Protection is
	// hadoop.rpc.protection. nil: SIMPLE.
	Kerberos   *security.Initiator
	Protection security.QOP
	// NameserviceID is sent in the requests that carry one (Hadoop 3's
	// nameServiceId); "" sends none.
	NameserviceID string
}

// DefaultConfig is Hadoop's defaults.
func DefaultConfig() Config {
	return Config{
		QueueLimitBytes:           10 << 20,
		StartSegmentTimeout:       20 * time.Second,
		PrepareRecoveryTimeout:    120 * time.Second,
		AcceptRecoveryTimeout:     120 * time.Second,
		FinalizeSegmentTimeout:    120 * time.Second,
		SelectInputStreamsTimeout: 20 * time.Second,
		GetJournalStateTimeout:    120 * time.Second,
		NewEpochTimeout:           120 * time.Second,
		WriteTxnsTimeout:          20 * time.Second,
		OperationsTimeout:         60 * time.Second,
		HTTPOpenTimeout:           60 * time.Second,
		HTTPReadTimeout:           60 * time.Second,
		RPCMaxTxns:                5000,
	}
}

// ConfigFrom reads the keys; a bad value names its key.
func ConfigFrom(c *conf.Conf) (Config, error) {
	cfg := DefaultConfig()
	var errs []error
	dur := func(key string, dst *time.Duration) {
		v, err := c.Duration(key)
		if err != nil {
			errs = append(errs, err)
			return
		}
		*dst = v
	}
	mb, err := c.Int(conf.DFSQJournalQueueSizeLimit)
	if err != nil {
		errs = append(errs, err)
	}
	cfg.QueueLimitBytes = mb << 20
	dur(conf.DFSQJournalStartSegmentTimeout, &cfg.StartSegmentTimeout)
	dur(conf.DFSQJournalPrepareRecoveryTimeout, &cfg.PrepareRecoveryTimeout)
	dur(conf.DFSQJournalAcceptRecoveryTimeout, &cfg.AcceptRecoveryTimeout)
	dur(conf.DFSQJournalFinalizeSegmentTimeout, &cfg.FinalizeSegmentTimeout)
	dur(conf.DFSQJournalSelectInputStreamsTimeout, &cfg.SelectInputStreamsTimeout)
	dur(conf.DFSQJournalGetJournalStateTimeout, &cfg.GetJournalStateTimeout)
	dur(conf.DFSQJournalNewEpochTimeout, &cfg.NewEpochTimeout)
	dur(conf.DFSQJournalWriteTxnsTimeout, &cfg.WriteTxnsTimeout)
	dur(conf.DFSQJMOperationsTimeout, &cfg.OperationsTimeout)
	dur(conf.DFSQJournalHTTPOpenTimeout, &cfg.HTTPOpenTimeout)
	dur(conf.DFSQJournalHTTPReadTimeout, &cfg.HTTPReadTimeout)
	if cfg.TailInProgress, err = c.Bool(conf.DFSHATailEditsInProgress); err != nil {
		errs = append(errs, err)
	}
	n, err := c.Int(conf.DFSHATailEditsQJMRPCMaxTxns)
	if err != nil {
		errs = append(errs, err)
	}
	cfg.RPCMaxTxns = int(n)
	if err := errors.Join(errs...); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// Validate rejects values that cannot work, naming the key.
func (c Config) Validate() error {
	var errs []error
	pos := func(key string, d time.Duration) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("qjournal: %s: %v must be positive", key, d))
		}
	}
	if c.QueueLimitBytes <= 0 {
		errs = append(errs, fmt.Errorf("qjournal: %s: %d must be positive", conf.DFSQJournalQueueSizeLimit, c.QueueLimitBytes>>20))
	}
	pos(conf.DFSQJournalStartSegmentTimeout, c.StartSegmentTimeout)
	pos(conf.DFSQJournalPrepareRecoveryTimeout, c.PrepareRecoveryTimeout)
	pos(conf.DFSQJournalAcceptRecoveryTimeout, c.AcceptRecoveryTimeout)
	pos(conf.DFSQJournalFinalizeSegmentTimeout, c.FinalizeSegmentTimeout)
	pos(conf.DFSQJournalSelectInputStreamsTimeout, c.SelectInputStreamsTimeout)
	pos(conf.DFSQJournalGetJournalStateTimeout, c.GetJournalStateTimeout)
	pos(conf.DFSQJournalNewEpochTimeout, c.NewEpochTimeout)
	pos(conf.DFSQJournalWriteTxnsTimeout, c.WriteTxnsTimeout)
	pos(conf.DFSQJMOperationsTimeout, c.OperationsTimeout)
	pos(conf.DFSQJournalHTTPOpenTimeout, c.HTTPOpenTimeout)
	pos(conf.DFSQJournalHTTPReadTimeout, c.HTTPReadTimeout)
	if c.RPCMaxTxns <= 0 {
		errs = append(errs, fmt.Errorf("qjournal: Must specify %s greater than 0!", conf.DFSHATailEditsQJMRPCMaxTxns))
	}
	return errors.Join(errs...)
}
