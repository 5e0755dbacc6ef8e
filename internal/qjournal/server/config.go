package server

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/protocol"
	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// Config is what a JournalNode reads from the configuration, typed. Build
// it with ConfigFrom; tests may fill it directly.
type Config struct {
	// EditsDir holds one directory per journal id
	// (dfs.journalnode.edits.dir, /tmp/hadoop/dfs/journalnode/).
	EditsDir string
	// RPCAddress serves QJournalProtocol and InterQJournalProtocol
	// (dfs.journalnode.rpc-address, 0.0.0.0:8485).
	RPCAddress string
	// HTTPAddress serves /getJournal, the status page and /jmx
	// (dfs.journalnode.http-address, 0.0.0.0:8480).
	HTTPAddress string
	// Kerberos is the JournalNode's identity when
	// hadoop.security.authentication=kerberos
	// (dfs.journalnode.kerberos.principal, dfs.journalnode.keytab.file):
	// its RPC server requires Kerberos and it calls the other JournalNodes
	// with it. nil: SIMPLE.
	Kerberos *security.Identity
	// Handlers is the RPC handler count (dfs.journalnode.handler.count, 5).
	Handlers int
	// MaxDataLength is ipc.maximum.data.length (128 MiB): the largest
	// journal() batch a writer can send.
	MaxDataLength int
	// RPCLimits and HTTPLimits bound what clients can make the JournalNode
	// hold (see ipc.Limits and web.Limits for the keys).
	RPCLimits  ipc.Limits
	HTTPLimits web.Limits
	// EditCacheSize bounds the in-memory cache of recent edits that serves
	// getJournaledEdits (dfs.journalnode.edit-cache-size.bytes, 1 MiB). The
	// cache exists only with TailEditsInProgress, as in Hadoop.
	EditCacheSize int64
	// TailEditsInProgress is dfs.ha.tail-edits.in-progress (false): it turns
	// the edit cache on.
	TailEditsInProgress bool
	// EnableSync makes the JournalNode fetch finalized segments it missed
	// from the other JournalNodes (dfs.journalnode.enable.sync, true), every
	// SyncInterval (dfs.journalnode.sync.interval, 120 s).
	EnableSync   bool
	SyncInterval time.Duration
	// SharedEditsURIs are the qjournal:// URIs of the configuration
	// (dfs.namenode.shared.edits.dir, also suffixed per nameservice and
	// NameNode): where the JournalNode finds its peers for sync.
	SharedEditsURIs []string
	// HTTPOpenTimeout and HTTPReadTimeout bound segment downloads from other
	// JournalNodes (dfs.qjournal.http.open.timeout.ms and
	// dfs.qjournal.http.read.timeout.ms, 60 s each).
	HTTPOpenTimeout, HTTPReadTimeout time.Duration
}

// ConfigFrom reads a JournalNode's configuration; a bad value names its key.
func ConfigFrom(c *conf.Conf) (Config, error) {
	cfg := Config{
		EditsDir:    strings.TrimSpace(c.String(conf.DFSJournalNodeEditsDir)),
		RPCAddress:  strings.TrimSpace(c.String(conf.DFSJournalNodeRPCAddress)),
		HTTPAddress: strings.TrimSpace(c.String(conf.DFSJournalNodeHTTPAddress)),
	}
	var errs []error
	r := c.Reader(&errs)
	num, dur, flag := r.Int, r.Duration, r.Bool
	cfg.Handlers = int(num(conf.DFSJournalNodeHandlerCount))
	cfg.MaxDataLength = int(num(conf.IPCMaximumDataLength))
	cfg.EditCacheSize = num(conf.DFSJournalNodeEditCacheSize)
	cfg.TailEditsInProgress = flag(conf.DFSHATailEditsInProgress)
	cfg.EnableSync = flag(conf.DFSJournalNodeEnableSync)
	cfg.SyncInterval = dur(conf.DFSJournalNodeSyncInterval)
	cfg.HTTPOpenTimeout = dur(conf.DFSQJournalHTTPOpenTimeout)
	cfg.HTTPReadTimeout = dur(conf.DFSQJournalHTTPReadTimeout)
	var err error
	if cfg.Kerberos, err = security.RoleIdentity(c, security.JournalNode, cfg.RPCAddress, os.Getenv); err != nil {
		errs = append(errs, err)
	}
	if cfg.RPCLimits, err = ipc.LimitsFrom(c); err != nil {
		errs = append(errs, err)
	}
	if cfg.HTTPLimits, err = web.LimitsFrom(c); err != nil {
		errs = append(errs, err)
	}
	if d, err := conf.LocalDir(cfg.EditsDir); err == nil {
		cfg.EditsDir = d
	} else {
		errs = append(errs, fmt.Errorf("journalnode: %s: %w", conf.DFSJournalNodeEditsDir, err))
	}
	keys := []string{conf.DFSNameNodeSharedEditsDir}
	for _, ns := range c.Nameservices() {
		keys = append(keys, conf.Suffixed(conf.DFSNameNodeSharedEditsDir, ns))
		for _, nn := range c.NameNodeIDs(ns) {
			keys = append(keys, conf.Suffixed(conf.DFSNameNodeSharedEditsDir, ns, nn))
		}
	}
	for _, k := range keys {
		for _, u := range c.Strings(k) {
			if strings.HasPrefix(u, protocol.URIScheme+"://") {
				cfg.SharedEditsURIs = append(cfg.SharedEditsURIs, u)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// Validate rejects bad values, naming the key.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("journalnode: %s: %s", key, fmt.Sprintf(format, args...)))
	}
	if c.EditsDir == "" {
		bad(conf.DFSJournalNodeEditsDir, "must name a directory")
	}
	if c.Handlers <= 0 {
		bad(conf.DFSJournalNodeHandlerCount, "%d must be positive", c.Handlers)
	}
	if c.EditCacheSize < 0 {
		bad(conf.DFSJournalNodeEditCacheSize, "%d must not be negative", c.EditCacheSize)
	}
	if c.EnableSync && c.SyncInterval <= 0 {
		bad(conf.DFSJournalNodeSyncInterval, "%v must be positive", c.SyncInterval)
	}
	if c.HTTPOpenTimeout <= 0 {
		bad(conf.DFSQJournalHTTPOpenTimeout, "%v must be positive", c.HTTPOpenTimeout)
	}
	if c.HTTPReadTimeout <= 0 {
		bad(conf.DFSQJournalHTTPReadTimeout, "%v must be positive", c.HTTPReadTimeout)
	}
	for _, u := range c.SharedEditsURIs {
		if _, _, err := protocol.ParseURI(u); err != nil {
			bad(conf.DFSNameNodeSharedEditsDir, "%v", err)
		}
	}
	return errors.Join(errs...)
}
