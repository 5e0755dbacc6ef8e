package namenode

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// Role is what a NameNode process is: the NameNode itself, or one of the
// helpers built on it that keep a copy of its namespace and take its
// checkpoints (Hadoop's NamenodeRole, plus the Secondary NameNode, which
// Hadoop runs as a daemon of its own).
type Role int

// Roles.
const (
	// RoleNameNode: hdfs namenode.
	RoleNameNode Role = iota
	// RoleBackup: hdfs namenode -backup. Receives every edit as a stream
	// (JournalProtocol), keeps its namespace in sync, serves reads and
	// checkpoints without downloading anything.
	RoleBackup
	// RoleCheckpoint: hdfs namenode -checkpoint. Downloads the image and
	// the edits, merges them and uploads the image.
	RoleCheckpoint
	// RoleSecondary: hdfs secondarynamenode. Like the Checkpoint Node, over
	// HTTP and rollEditLog only: no registration, no RPC server.
	RoleSecondary
)

func (r Role) String() string {
	switch r {
	case RoleNameNode:
		return "NameNode"
	case RoleBackup:
		return "Backup Node"
	case RoleCheckpoint:
		return "Checkpoint Node"
	case RoleSecondary:
		return "Secondary NameNode"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// wire is the role in a NamenodeRegistrationProto.
func (r Role) wire() hdfs.NamenodeRegistrationProto_NamenodeRoleProto {
	switch r {
	case RoleBackup:
		return hdfs.NamenodeRegistrationProto_BACKUP
	case RoleCheckpoint:
		return hdfs.NamenodeRegistrationProto_CHECKPOINT
	}
	return hdfs.NamenodeRegistrationProto_NAMENODE
}

// roleOf is a registration's role.
func roleOf(r hdfs.NamenodeRegistrationProto_NamenodeRoleProto) Role {
	switch r {
	case hdfs.NamenodeRegistrationProto_BACKUP:
		return RoleBackup
	case hdfs.NamenodeRegistrationProto_CHECKPOINT:
		return RoleCheckpoint
	}
	return RoleNameNode
}

// CheckpointConfig is what the Checkpoint Node, the Backup Node and the
// Secondary NameNode read, and the active's side of the Backup Node's
// stream.
type CheckpointConfig struct {
	// Dirs keep the helper's images (dfs.namenode.checkpoint.dir, default
	// file://${hadoop.tmp.dir}/dfs/namesecondary); EditsDirs its edits
	// (dfs.namenode.checkpoint.edits.dir, default the same). Hadoop's
	// Checkpoint and Backup Nodes use dfs.namenode.name.dir; here every
	// helper uses these keys, so that one hdfs-site.xml serves a NameNode
	// and its helpers on one host.
	Dirs, EditsDirs []string
	// MaxRetries is how many times in a row a merge may fail before the
	// helper stops (dfs.namenode.checkpoint.max-retries, 3); every failure
	// reloads the image on the next attempt.
	MaxRetries int
	// BackupAddress and BackupHTTPAddress are the Checkpoint or Backup
	// Node's RPC and web addresses (dfs.namenode.backup.address
	// 0.0.0.0:50100, dfs.namenode.backup.http-address 0.0.0.0:50105).
	BackupAddress, BackupHTTPAddress string
	// SecondaryHTTPAddress is the Secondary NameNode's web address
	// (dfs.namenode.secondary.http-address, 0.0.0.0:9868).
	SecondaryHTTPAddress string
	// ActiveRPCAddress and ActiveHTTPAddress are how a helper reaches the
	// NameNode: dfs.namenode.rpc-address (else fs.defaultFS) and
	// dfs.namenode.http-address, a wildcard host replaced by the RPC host.
	ActiveRPCAddress, ActiveHTTPAddress string
	// Timeout bounds each call between a NameNode and its helpers, and is
	// the active's write timeout on a Backup Node's stream: a stream whose
	// call takes longer is dropped (ipc.client.rpc-timeout.ms, 120 s;
	// Hadoop's 0, no timeout, is taken as 120 s).
	Timeout time.Duration
	// StreamQueueBytes bounds what the active holds for a Backup Node that
	// does not keep up; beyond it the stream is dropped. Not a Hadoop key:
	// 64 MiB (Hadoop's stream has no bound).
	StreamQueueBytes int
}

// DefaultStreamQueueBytes is CheckpointConfig.StreamQueueBytes's value.
const DefaultStreamQueueBytes = 64 << 20

// checkpointConfigFrom reads the helpers' keys.
func checkpointConfigFrom(c *conf.Conf, cfg *Config, errs *[]error) {
	k := &cfg.Checkpoint
	var err error
	if k.Dirs, err = dirList(c, conf.DFSNameNodeCheckpointDir); err != nil {
		*errs = append(*errs, err)
	}
	if k.EditsDirs, err = dirList(c, conf.DFSNameNodeCheckpointEditsDir); err != nil {
		*errs = append(*errs, err)
	}
	n, err := c.Int(conf.DFSNameNodeCheckpointMaxRetries)
	if err != nil {
		*errs = append(*errs, err)
	}
	k.MaxRetries = int(n)
	k.BackupAddress = c.String(conf.DFSNameNodeBackupAddress)
	k.BackupHTTPAddress = c.String(conf.DFSNameNodeBackupHTTPAddress)
	k.SecondaryHTTPAddress = c.String(conf.DFSNameNodeSecondaryHTTPAddress)
	if k.Timeout, err = c.Duration(conf.IPCClientRPCTimeout); err != nil {
		*errs = append(*errs, err)
	}
	if k.Timeout <= 0 {
		k.Timeout = 120 * time.Second
	}
	k.StreamQueueBytes = DefaultStreamQueueBytes
	k.ActiveRPCAddress = cfg.RPCAddress
	k.ActiveHTTPAddress = cfg.HTTPAddress
	if h, p, err := net.SplitHostPort(cfg.HTTPAddress); err == nil && (h == "" || net.ParseIP(h) != nil && net.ParseIP(h).IsUnspecified()) {
		if rh, _, err := net.SplitHostPort(cfg.RPCAddress); err == nil {
			k.ActiveHTTPAddress = net.JoinHostPort(rh, p)
		}
	}
}

// haRefusal is what a helper answers in an HA nameservice, where the
// standby NameNode takes the checkpoints (Hadoop's message for the
// Secondary; the same words for the others).
func haRefusal(role Role) error {
	switch role {
	case RoleSecondary:
		return errors.New("Cannot use SecondaryNameNode in an HA cluster. The Standby Namenode will perform checkpointing.")
	case RoleBackup:
		return errors.New("Cannot use a Backup Node in an HA cluster. The Standby NameNode keeps the namespace in sync and performs checkpointing.")
	}
	return errors.New("Cannot use a Checkpoint Node in an HA cluster. The Standby NameNode will perform checkpointing.")
}

// HelperConfigFrom builds the Config of a helper role from Hadoop
// configuration: its storage in dfs.namenode.checkpoint.dir and
// .edits.dir, its own addresses (dfs.namenode.backup.address and
// .http-address, or dfs.namenode.secondary.http-address), and the
// NameNode's addresses to reach it at. In an HA nameservice it refuses
// with Hadoop's message: the standby takes the checkpoints there.
func HelperConfigFrom(c *conf.Conf, role Role) (Config, error) {
	if role == RoleNameNode {
		return ConfigFrom(c)
	}
	if _, ids := haNameservice(c); len(ids) >= 2 {
		return Config{}, haRefusal(role)
	}
	cfg, err := ConfigFrom(c)
	if err != nil {
		return Config{}, err
	}
	k := cfg.Checkpoint
	if h, _, err := net.SplitHostPort(k.ActiveRPCAddress); err != nil || h == "" || net.ParseIP(h) != nil && net.ParseIP(h).IsUnspecified() {
		return Config{}, fmt.Errorf("namenode: the %s needs the NameNode's address: set %s (an hdfs:// URI) or %s; %q names no host",
			role, conf.FSDefaultFS, conf.DFSNameNodeRPCAddress, k.ActiveRPCAddress)
	}
	cfg.NameDirs, cfg.EditsDirs, cfg.EditsDirMinimum = k.Dirs, k.EditsDirs, 1
	switch role {
	case RoleSecondary:
		cfg.RPCAddress, cfg.HTTPAddress = "", k.SecondaryHTTPAddress
		if cfg.Kerberos != nil {
			// The Secondary NameNode logs in as itself
			// (dfs.secondary.namenode.kerberos.principal and .keytab.file).
			id, err := security.RoleIdentity(c, security.SecondaryNameNode, k.SecondaryHTTPAddress, os.Getenv)
			if err != nil {
				return Config{}, err
			}
			cfg.Kerberos, cfg.SuperUser = id, id.User
		}
	default:
		cfg.RPCAddress, cfg.HTTPAddress = k.BackupAddress, k.BackupHTTPAddress
	}
	var errs []error
	if len(cfg.NameDirs) == 0 {
		errs = append(errs, fmt.Errorf("namenode: %s: no checkpoint directory configured", conf.DFSNameNodeCheckpointDir))
	}
	if len(cfg.EditsDirs) == 0 {
		errs = append(errs, fmt.Errorf("namenode: %s: no checkpoint edits directory configured", conf.DFSNameNodeCheckpointEditsDir))
	}
	if k.MaxRetries < 0 {
		errs = append(errs, fmt.Errorf("namenode: %s: %d must not be negative", conf.DFSNameNodeCheckpointMaxRetries, k.MaxRetries))
	}
	if cfg.CheckpointCheckPeriod <= 0 {
		errs = append(errs, fmt.Errorf("namenode: %s: %v must be positive", conf.DFSNameNodeCheckpointCheck, cfg.CheckpointCheckPeriod))
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return cfg, cfg.Validate()
}
