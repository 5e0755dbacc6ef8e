package blockmgmt

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestConfig(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := c.DeadInterval(); got != 10*time.Minute+30*time.Second {
		t.Fatalf("dead interval %v, want 10m30s", got)
	}
	bad := []func(*Config){
		func(c *Config) { c.MinReplication = 0 },
		func(c *Config) { c.DefaultReplication = 600 },
		func(c *Config) { c.ReplicationMaxStreamsHardLimit = 1 },
		func(c *Config) { c.InvalidateWorkPct = 0 },
		func(c *Config) { c.HeartbeatInterval = 0 },
	}
	for i, f := range bad {
		c := DefaultConfig()
		f(&c)
		if err := c.Validate(); !errors.Is(err, ErrBadConfig) {
			t.Errorf("case %d: Validate = %v, want ErrBadConfig", i, err)
		}
	}
}

func TestDeadNodeIsReplicated(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 1, "a1", "a2", "a3", "a4")
	b := Block{ID: 1 << 30, NumBytes: 10 * mib, GenStamp: 1001}
	h.addComplete(1, b, 3, "a1", "a2", "a3")
	if got := h.holders(b.ID); !slices.Equal(got, []string{"a1", "a2", "a3"}) {
		t.Fatalf("holders %v", got)
	}
	if s := h.m.Stats(h.now); s.UnderReplicated != 0 || s.MissingBlocks != 0 {
		t.Fatalf("stats %+v", s)
	}

	// a1 goes silent; the others keep heartbeating.
	dead := h.m.Config().DeadInterval()
	step := 3 * time.Second
	for elapsed := time.Duration(0); elapsed+step <= dead; elapsed += step {
		h.advance(step)
		h.heartbeatAll("a1")
		if d := h.m.CheckHeartbeats(h.now); len(d) != 0 {
			t.Fatalf("declared dead after %v: %v", elapsed+step, h.names(d))
		}
	}
	// Exactly at the dead interval the node is stale but not dead.
	if rep := h.m.DatanodeReport(ReportLive, h.now); len(rep) != 4 || !rep[0].Stale {
		t.Fatalf("live report %+v", rep)
	}
	h.advance(time.Millisecond)
	if d := h.m.CheckHeartbeats(h.now); len(d) != 1 || d[0].UUID != "uuid-a1" {
		t.Fatalf("dead = %v", d)
	}
	h.check()
	if got := h.holders(b.ID); !slices.Equal(got, []string{"a2", "a3"}) {
		t.Fatalf("holders after death %v", got)
	}
	if rep := h.m.DatanodeReport(ReportDead, h.now); len(rep) != 1 || rep[0].ID.UUID != "uuid-a1" || !rep[0].Dead {
		t.Fatalf("dead report %+v", rep)
	}
	if s := h.m.Stats(h.now); s.UnderReplicated != 1 || s.LiveNodes != 3 || s.DeadNodes != 1 {
		t.Fatalf("stats %+v", s)
	}
	if _, err := h.m.Heartbeat("uuid-a1", nil, 0, 0, h.now); !errors.Is(err, ErrUnregistered) {
		t.Fatalf("dead node heartbeat err = %v", err)
	}

	if w := h.m.ComputeWork(h.now); w.Transfers != 1 {
		t.Fatalf("work %+v", w)
	}
	tr := transfers(h.heartbeatAll("a1"))
	if len(tr) != 1 {
		t.Fatalf("transfers %v", tr)
	}
	for src, ts := range tr {
		if src != "a2" && src != "a3" {
			t.Fatalf("source %s holds no replica", src)
		}
		if len(ts) != 1 || ts[0].Block != b || len(ts[0].Targets) != 1 || ts[0].Targets[0].UUID != "uuid-a4" {
			t.Fatalf("transfer %+v", ts)
		}
	}
	// Pending: a second pass schedules nothing more.
	if w := h.m.ComputeWork(h.now); w.Transfers != 0 {
		t.Fatalf("second pass %+v", w)
	}
	h.ibr("a4", ReceivedDeleted{Block: b, Status: Received})
	if got := h.holders(b.ID); !slices.Equal(got, []string{"a2", "a3", "a4"}) {
		t.Fatalf("holders after transfer %v", got)
	}
	if s := h.m.Stats(h.now); s.UnderReplicated != 0 || s.PendingReplication != 0 {
		t.Fatalf("stats %+v", s)
	}

	// The dead node comes back: registration revives it, its report brings the
	// replica back, and the block is now over-replicated by one.
	if err := h.m.RegisterDatanode(h.id("a1"), h.now); err != nil {
		t.Fatal(err)
	}
	h.heartbeat("a1")
	h.fbr("a1", fin(b))
	if got := h.holders(b.ID); len(got) != 3 {
		t.Fatalf("excess replica kept: %v", got)
	}
	if s := h.m.Stats(h.now); s.PendingDeletion != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestRegistration(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 2, "a1", "a2")
	b := Block{ID: 7, NumBytes: 1, GenStamp: 1}
	h.addComplete(1, b, 2, "a1", "a2")

	// Same UUID, new address: the descriptor follows.
	id := h.id("a1")
	id.IPAddr = "10.0.9.9"
	if err := h.m.RegisterDatanode(id, h.now); err != nil {
		t.Fatal(err)
	}
	if got := h.m.findNode("10.0.9.9"); got == nil || got.id.UUID != "uuid-a1" {
		t.Fatal("new address not indexed")
	}
	if h.m.findNode("10.0.0.1") != nil {
		t.Fatal("old address still indexed")
	}
	if got := h.holders(b.ID); len(got) != 2 {
		t.Fatalf("replicas lost on re-registration: %v", got)
	}

	// A new UUID on a2's transfer address replaces a2 and its replicas.
	nid := h.id("a2")
	nid.UUID = "uuid-fresh"
	if err := h.m.RegisterDatanode(nid, h.now); err != nil {
		t.Fatal(err)
	}
	if _, err := h.m.Heartbeat("uuid-a2", nil, 0, 0, h.now); !errors.Is(err, ErrUnregistered) {
		t.Fatalf("replaced node heartbeat: %v", err)
	}
	if rep := h.m.DatanodeReport(ReportAll, h.now); len(rep) != 2 {
		t.Fatalf("report %+v", rep)
	}
	if got := h.holders(b.ID); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("holders %v", got)
	}
	if err := h.m.RegisterDatanode(DatanodeID{IPAddr: "1.2.3.4"}, h.now); !errors.Is(err, ErrUnregistered) {
		t.Fatalf("registration without uuid: %v", err)
	}
	h.check()
}

func TestStatsCapacity(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 3, "a1", "a2")
	s := h.m.Stats(h.now)
	if s.Capacity != 400*gib || s.Remaining != 200*gib || s.Used != 2*gib {
		t.Fatalf("stats %+v", s)
	}
	// A failed storage stops counting and loses its replicas.
	b := Block{ID: 9, NumBytes: 1, GenStamp: 1}
	h.addComplete(1, b, 2, "a1", "a2")
	if _, err := h.m.Heartbeat("uuid-a1", []StorageReport{{StorageID: stID("a1"), Capacity: 200 * gib, Failed: true}}, 0, 0, h.now); err != nil {
		t.Fatal(err)
	}
	if got := h.holders(b.ID); !slices.Equal(got, []string{"a2"}) {
		t.Fatalf("holders %v", got)
	}
	if s := h.m.Stats(h.now); s.Capacity != 200*gib || s.UnderReplicated != 1 {
		t.Fatalf("stats %+v", s)
	}
	h.check()
}

// TestCopyTargetDies: a re-replication scheduled to a node that then dies is
// scheduled again as soon as the death is noticed, not after the pending
// timeout.
func TestCopyTargetDies(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PendingReconstructionTimeout = time.Hour // longer than the dead interval
	h := activeHarness(t, cfg, 2, "a1", "a2", "a3", "a4", "a5")
	b := Block{ID: 1<<30 + 7, NumBytes: mib, GenStamp: 1001}
	h.addComplete(1, b, 3, "a1", "a2")
	if w := h.m.ComputeWork(h.now); w.Transfers != 1 {
		t.Fatalf("work %+v", w)
	}
	var target string
	for _, ts := range transfers(h.heartbeatAll()) {
		target = h.name(ts[0].Targets[0].UUID)
	}
	if target == "" {
		t.Fatal("no transfer scheduled")
	}
	// The target goes silent until it is dead; the copy never arrives.
	dead := h.m.Config().DeadInterval()
	for elapsed := time.Duration(0); elapsed <= dead; elapsed += 3 * time.Second {
		h.advance(3 * time.Second)
		h.heartbeatAll(target)
		h.m.CheckHeartbeats(h.now)
	}
	h.check()
	if w := h.m.ComputeWork(h.now); w.Transfers != 1 {
		t.Fatalf("after the target died, work %+v: the copy was not scheduled again", w)
	}
	for _, ts := range transfers(h.heartbeatAll(target)) {
		if got := h.name(ts[0].Targets[0].UUID); got == target {
			t.Fatalf("copy scheduled to the dead node %s again", got)
		}
	}
}

// TestCopyNodeRestarts: the target or the source of a scheduled copy
// restarts (registers again while still live, before it could be declared
// dead): the copy died with the old process and is scheduled again at once,
// not after the pending timeout.
func TestCopyNodeRestarts(t *testing.T) {
	for _, restart := range []string{"target", "source"} {
		t.Run(restart, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.PendingReconstructionTimeout = time.Hour
			h := activeHarness(t, cfg, 3, "a1", "a2", "a3", "a4", "a5")
			b := Block{ID: 1<<30 + 9, NumBytes: mib, GenStamp: 1001}
			h.addComplete(1, b, 3, "a1", "a2")
			if w := h.m.ComputeWork(h.now); w.Transfers != 1 {
				t.Fatalf("work %+v", w)
			}
			var source, target string
			for src, ts := range transfers(h.heartbeatAll()) {
				source, target = src, h.name(ts[0].Targets[0].UUID)
			}
			if target == "" {
				t.Fatal("no transfer scheduled")
			}
			if st := h.m.Stats(h.now); st.PendingReplication != 1 {
				t.Fatalf("pending %d", st.PendingReplication)
			}
			node := target
			if restart == "source" {
				node = source
			}
			if err := h.m.RegisterDatanode(h.id(node), h.now); err != nil {
				t.Fatal(err)
			}
			h.check()
			if st := h.m.Stats(h.now); st.PendingReplication != 0 || st.UnderReplicated != 1 {
				t.Fatalf("after the %s restarted: pending %d, under-replicated %d", restart, st.PendingReplication, st.UnderReplicated)
			}
			if w := h.m.ComputeWork(h.now); w.Transfers != 1 {
				t.Fatalf("after the %s restarted, work %+v: the copy was not scheduled again", restart, w)
			}
		})
	}
}

// setBalancerBandwidth reaches every live node once, with its next
// heartbeat.
func TestSetBalancerBandwidth(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 1, "a1", "a2")
	if err := h.m.SetBalancerBandwidth(0); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("bandwidth 0: %v", err)
	}
	if err := h.m.SetBalancerBandwidth(10 << 20); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a1", "a2"} {
		cmds, err := h.m.Heartbeat(h.id(n).UUID, nil, 0, 0, h.now)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(cmds, Command(BalancerBandwidth{Bandwidth: 10 << 20})) {
			t.Fatalf("%s: heartbeat commands %v, want the bandwidth", n, cmds)
		}
		cmds, _ = h.m.Heartbeat(h.id(n).UUID, nil, 0, 0, h.now)
		for _, c := range cmds {
			if _, ok := c.(BalancerBandwidth); ok {
				t.Fatalf("%s: bandwidth sent twice", n)
			}
		}
	}
}
