// Package elector is the decision logic of a ZooKeeper failover controller
// as a pure state machine: Hadoop's ActiveStandbyElector (who holds the
// ephemeral lock znode is active) joined with the rules by which the
// ZKFailoverController takes part in the election (it joins while its
// service is healthy, quits when it is not, cedes on request, and quits
// when the service reports a state other than the one it was put in).
//
// An Elector takes inputs — ZooKeeper session events and operation
// results, watch events, health states, service states reported by the
// health checks, cede requests, timers and the results of the actions it
// asked for — and returns Actions: ZooKeeper operations, calls to the local
// service, fencing, timers, log lines. It does no I/O, reads no clock and
// starts no goroutine; it is not safe for concurrent use.
//
// # The driver's contract
//
// The driver (package zkfc) owns one Elector on one goroutine. It performs
// the returned actions in order. An action that has a result (see
// ActionKind) is answered by calling the matching method at once, before
// the next action of the list and before any other input, and the actions
// that call returns are performed first (depth first): this is how
// Hadoop's elector runs its callbacks under one lock, and it is what lets
// the Elector treat a chain such as "lock created → read breadcrumb → fence
// → write breadcrumb → make active" as uninterrupted. Inputs carry the
// session they belong to; an input of a session that is no longer current
// is ignored (a result of a stale ZooKeeper client).
//
// # Winning the election
//
//	create lock (ephemeral, our data) ──OK──▶ read ActiveBreadCrumb
//	     │                                      ├ none ─────────────▶ create breadcrumb
//	     │ NODEEXISTS: become standby,          ├ ours ─────────────▶ set breadcrumb
//	     │ watch the lock                       └ another's: fence it ─▶ set breadcrumb
//	     │                                                               │
//	     ▼                                        transitionToActive ◀──┘
//	lock deleted (watch): join again              failed anywhere: close the session,
//	                                              rejoin after 1 s
//
// The breadcrumb (persistent) names the last active; a new active fences
// it unless it left gracefully (quitting without the need to fence deletes
// it). Fencing itself (graceful transitionToStandby, then
// dfs.ha.fencing.methods) is the driver's FenceOldActive action.
//
// # ZooKeeper unreachable
//
// A disconnected session puts the elector in NEUTRAL and changes nothing
// else: the active service stays active, as Hadoop's does. When the
// session reconnects the lock is checked again: still ours in the session
// that won it, the elector is ACTIVE again with nothing written (where
// Hadoop rewrites the breadcrumb, and gives the lock up if the connection
// flaps again meanwhile, as it does while a ZooKeeper ensemble restarts
// server by server); when ZooKeeper says it
// expired (which the client only learns on reconnecting) the elector closes
// it and joins with a new session: it wins again if the lock is free (its
// own breadcrumb needs no fencing) or becomes standby if another holds it.
// Another controller can only take over once ZooKeeper itself expired the
// session, after ha.zookeeper.session-timeout.ms, and it then fences this
// service before making its own active.
package elector
