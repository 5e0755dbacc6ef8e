package namenode

import (
	"context"
	"fmt"
)

// The Secondary NameNode's one-shot commands (hdfs secondarynamenode
// -checkpoint [force], -geteditsize). They open the checkpoint storage as
// the daemon does (so not while one runs on the same dirs), without its web
// server and loop.

// SecondaryCheckpoint is what `hdfs secondarynamenode -checkpoint` did.
type SecondaryCheckpoint struct {
	// Uncheckpointed is how many transactions the NameNode had logged
	// beyond the Secondary's newest image.
	Uncheckpointed int64
	// Done is whether a checkpoint was taken; TxID is its image's txid.
	Done bool
	TxID int64
}

// RunSecondaryCheckpoint takes one checkpoint when the NameNode has more
// uncheckpointed transactions than dfs.namenode.checkpoint.txns, or always
// with force. format wipes the checkpoint dirs first.
func RunSecondaryCheckpoint(ctx context.Context, cfg Config, deps Deps, force, format bool) (SecondaryCheckpoint, error) {
	nn, err := StartHelper(ctx, RoleSecondary, cfg, deps, HelperOptions{Once: true, Format: format})
	if err != nil {
		return SecondaryCheckpoint{}, err
	}
	defer nn.Close()
	c := nn.helper
	n, err := c.uncheckpointed(ctx)
	if err != nil {
		return SecondaryCheckpoint{}, err
	}
	res := SecondaryCheckpoint{Uncheckpointed: n}
	if n <= nn.cfg.CheckpointTxns && !force {
		return res, nil
	}
	if err := c.doCheckpoint(ctx); err != nil {
		return res, fmt.Errorf("checkpoint: %w", err)
	}
	res.Done, res.TxID = true, c.counters().lastTxID
	return res, nil
}

// SecondaryEditSize is how many transactions the NameNode logged beyond
// the Secondary's newest image (`hdfs secondarynamenode -geteditsize`).
func SecondaryEditSize(ctx context.Context, cfg Config, deps Deps, format bool) (int64, error) {
	nn, err := StartHelper(ctx, RoleSecondary, cfg, deps, HelperOptions{Once: true, Format: format})
	if err != nil {
		return 0, err
	}
	defer nn.Close()
	return nn.helper.uncheckpointed(ctx)
}
