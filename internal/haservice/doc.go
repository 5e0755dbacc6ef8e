// Package haservice is HAServiceProtocol, the protocol by which an
// administrator (hdfs haadmin) or a failover controller moves the active
// role between the NameNodes of a nameservice, and the logic around it:
// the service's states, the server side (Register) and the client side
// (Client), the targets of a command (ResolveNameNode), fencing
// (dfs.ha.fencing.methods) and the failover sequence (FailoverController).
// It belongs to no role: the NameNode implements Service and registers it
// on its RPC server; haadmin and the ZooKeeper failover controller call
// it. It imports no role package.
//
// It also holds ZKFCProtocol (RegisterZKFC, ZKFCClient), which a ZooKeeper
// failover controller serves on dfs.ha.zkfc.port (Target.ZKFCAddress):
// cedeActive and gracefulFailover, through which haadmin -failover moves
// the active role when automatic failover is on.
//
// # States
//
//	INITIALIZING ──start──▶ STANDBY ⇄ ACTIVE      transitionToActive / transitionToStandby
//	                           │
//	                           └──▶ OBSERVER       transitionToObserver (if the service has one)
//	          any state ──shutdown──▶ STOPPING     (sent on the wire as INITIALIZING)
//
// A service is asked to change state with a RequestSource: REQUEST_BY_USER
// (haadmin), REQUEST_BY_USER_FORCED (haadmin --forcemanual) or
// REQUEST_BY_ZKFC. CheckStateChange is Hadoop's rule for which the service
// accepts given dfs.ha.automatic-failover.enabled.
//
// # Failover
//
// hdfs haadmin -failover nn1 nn2 runs FailoverController.Failover:
//
//	haadmin                       nn1 (active)              nn2 (standby)
//	   │ getServiceStatus, monitorHealth ─────────────────────────▶│ standby, ready, healthy?
//	   │ transitionToStandby ───────▶│  (graceful fence, 5 s)      │
//	   │   failed, or --forcefence:  │                             │
//	   │   fence nn1 with dfs.ha.fencing.methods, in order,        │
//	   │   until one succeeds; none did: stop, nn2 stays standby   │
//	   │ transitionToActive ──────────────────────────────────────▶│ (60 s)
//	   │   failed and nn1 was only gracefully fenced:              │
//	   │   fail back: the same sequence from nn2 to nn1, forced    │
//
// Fencing is what keeps two actives from writing: a failover never makes
// the new service active while the old one may still be active and was
// not fenced. With the quorum journal the old active is also fenced by
// the journal's epochs, which is why shell(/bin/true) is a common last
// method.
//
// # Fencing methods
//
// dfs.ha.fencing.methods (also .NS and .NS.NN) lists one method per line,
// tried in order; '#' starts a comment:
//
//	shell(cmd)            bash -e -c cmd, success when it exits 0; it sees
//	                      the inherited environment, every configuration
//	                      key with '.' and '-' as '_', and $target_host,
//	                      $target_port, $target_address,
//	                      $target_nameserviceid, $target_namenodeid of the
//	                      service being fenced; its output is logged
//	sshfence([user][:port])  parsed; fencing with it fails ("sshfence is
//	                      not supported; use shell(...)") and the next
//	                      method is tried
//	powershell(...)       likewise
//
// The class names (org.apache.hadoop.ha.ShellCommandFencer, ...) are
// accepted too; anything else is a configuration error naming the key.
//
// # Concurrency
//
// Client, Fencer, FailoverController and Target are safe for concurrent
// use. Register's handlers run on the ipc server's handler goroutines, so
// a Service's methods are called concurrently. The package starts no
// goroutine of its own; a shell fencing command's output is copied by
// os/exec's goroutines, which end before Fence returns.
//
//	srv := ipc.NewServer(ipc.ServerConfig{})
//	haservice.Register(srv, nn) // nn implements haservice.Service
//
//	t1, _ := haservice.ResolveNameNode(ctx, c, "ns1", "nn1", nil)
//	t2, _ := haservice.ResolveNameNode(ctx, c, "ns1", "nn2", nil)
//	cfg, _ := haservice.ConfigFrom(c)
//	fc := &haservice.FailoverController{Config: cfg, Source: haservice.RequestByUser,
//		Dial: haservice.ClientDialer("hdfs", cfg, logger), Logger: logger}
//	err := fc.Failover(ctx, t1, t2, false, false)
package haservice
