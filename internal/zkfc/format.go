package zkfc

import (
	"context"
	"fmt"
	"log/slog"
)

// FormatOptions are -formatZK's choices.
type FormatOptions struct {
	// Force clears an existing parent znode without asking.
	Force bool
	// Confirm asks whether to clear the existing parent znode; nil
	// (-nonInteractive) refuses.
	Confirm func(parent string) bool
	Logger  *slog.Logger
}

// Format is hdfs zkfc -formatZK: it creates the parent znode
// (ha.zookeeper.parent-znode/NS and the znodes above it) with the
// configured ACL. An existing one is cleared first (everything under it
// deleted) if Force or Confirm allow, else Format returns ErrFormatDenied.
// Every controller of the nameservice must be stopped meanwhile.
func Format(ctx context.Context, cfg Config, opts FormatOptions) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if !cfg.Local.AutoFailover {
		return fmt.Errorf("%w: Automatic failover is not enabled for %s. Please ensure that automatic failover is enabled in the configuration before running the ZK failover controller.", ErrAutoFailoverDisabled, cfg.Local)
	}
	s, err := openSession(ctx, &cfg, 0, log, func(int, sessionEvent) {})
	if err != nil {
		return fmt.Errorf("Unable to start failover controller. Unable to connect to ZooKeeper quorum at %s. Please check the configured value for ha.zookeeper.quorum and ensure that ZooKeeper is running: %w", cfg.Quorum(), err)
	}
	defer s.close()
	exists, err := s.parentExists()
	if err != nil {
		return err
	}
	if exists {
		if !opts.Force && (opts.Confirm == nil || !opts.Confirm(cfg.ParentZNode)) {
			return fmt.Errorf("%w: the parent znode %s exists", ErrFormatDenied, cfg.ParentZNode)
		}
		log.Info("Recursively deleting " + cfg.ParentZNode + " from ZK...")
		if err := s.clearParent(); err != nil {
			return fmt.Errorf("Unable to clear zk parent znode: %w", err)
		}
		log.Info("Successfully deleted " + cfg.ParentZNode + " from ZK.")
	}
	if err := s.ensureParent(); err != nil {
		return err
	}
	log.Info("Successfully created " + cfg.ParentZNode + " in ZK.")
	return nil
}
