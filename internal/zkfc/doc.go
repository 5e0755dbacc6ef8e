// Package zkfc is the ZooKeeper failover controller, `hdfs zkfc`: one runs
// beside each NameNode of an HA nameservice with
// dfs.ha.automatic-failover.enabled, and together, through a lock in
// ZooKeeper, they keep exactly one NameNode active (Hadoop's
// DFSZKFailoverController). It is a role of its own: it talks to the
// NameNodes only over HAServiceProtocol and imports no other role.
//
// # What runs
//
//	health monitor ──health states, reported states──▶ ┌──────────────┐
//	(getServiceStatus + monitorHealth                   │  loop: the   │──▶ ZooKeeper session
//	 every ha.health-monitor.check-interval.ms)         │  elector     │    (lock, breadcrumb)
//	ZooKeeper client ──session and watch events───────▶ │  (package    │──▶ local NameNode
//	ZKFCProtocol (cedeActive, gracefulFailover) ──────▶ │  elector)    │    (transitions)
//	timers ───────────────────────────────────────────▶ └──────────────┘──▶ old active (fencing)
//
// The decision logic is pure (packages health and elector); this package
// is its driver: one loop goroutine owns the elector and performs its
// actions, answering each before taking the next input, as the elector's
// contract says. The health monitor, the ZooKeeper client's goroutines,
// the RPC handlers and the timers only post to the loop's inbox.
//
// # ZooKeeper
//
// Under ha.zookeeper.parent-znode (/hadoop-ha) each nameservice has
//
//	/hadoop-ha/NS                           created by -formatZK
//	/hadoop-ha/NS/ActiveStandbyElectorLock  ephemeral: the active's session holds it
//	/hadoop-ha/NS/ActiveBreadCrumb          persistent: the last active, fenced by the next
//
// both holding an ActiveNodeInfo (NodeInfo), byte for byte what Hadoop's
// controller writes, with the ACL of ha.zookeeper.acl; sessions carry the
// credentials of ha.zookeeper.auth (digest:user:password). A quorum
// string may end in a chroot ("h1:2181,h2:2181/hdfs").
//
// # When ZooKeeper is unreachable
//
// The active NameNode stays active: a disconnected controller changes
// nothing (Hadoop's neutral mode). If ZooKeeper itself restarts, sessions
// survive it (the servers keep them, with a fresh timeout) and nothing
// changes. If the active's controller alone is cut off for longer than
// ha.zookeeper.session-timeout.ms, ZooKeeper expires its session and
// deletes its lock; the other controller takes the lock, fences this
// NameNode (transitionToStandby over RPC if it answers, else
// dfs.ha.fencing.methods) and makes its own active. When the cut-off
// controller reconnects it learns that its session expired, joins again
// with a new session and finds the lock taken: it makes its NameNode
// standby (if fencing had not already).
//
// # Exit codes of hdfs zkfc (Hadoop's)
//
//	2 -formatZK refused to clear an existing parent znode   ErrFormatDenied
//	3 the parent znode does not exist (run -formatZK)       ErrNoParentZNode
//	4 the local NameNode has no fencing method              ErrNoFencer
//	5 automatic failover is not enabled                     ErrAutoFailoverDisabled
//	6 ZooKeeper cannot be reached                           ErrNoZooKeeper
//
// A Controller is safe for concurrent use; Close stops every goroutine it
// started.
//
//	cfg, err := zkfc.ConfigFrom(ctx, c, "hdfs", nil)
//	ctl, err := zkfc.Start(ctx, cfg, zkfc.Deps{Logger: logger})
//	<-ctl.Done() // a fatal error, or: ctl.Close() on SIGTERM
package zkfc
