package blockmgmt

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func rackOf(n string) byte { return n[0] }

func TestPlacementRules(t *testing.T) {
	const bs = 128 * mib
	type tc struct {
		name   string
		nodes  []string
		writer string // node name, or an IP not in the cluster
		n      int
		setup  func(h *harness)
		excl   []string
		check  func(t *testing.T, got []string)
	}
	twoRacks := []string{"a1", "a2", "a3", "b1", "b2", "b3"}
	cases := []tc{
		{name: "writer local, then remote rack pair", nodes: twoRacks, writer: "a2", n: 3,
			check: func(t *testing.T, got []string) {
				if len(got) != 3 || got[0] != "a2" || rackOf(got[1]) != 'b' || rackOf(got[2]) != 'b' || got[1] == got[2] {
					t.Fatalf("targets %v", got)
				}
			}},
		{name: "off-cluster writer spans two racks", nodes: twoRacks, writer: "192.168.1.1", n: 3,
			check: func(t *testing.T, got []string) {
				if len(got) != 3 {
					t.Fatalf("targets %v", got)
				}
				if rackOf(got[1]) == rackOf(got[0]) && rackOf(got[2]) == rackOf(got[0]) {
					t.Fatalf("all on one rack: %v", got)
				}
			}},
		{name: "excluded nodes never chosen", nodes: twoRacks, writer: "a1", n: 3, excl: []string{"a1", "b1", "b2"},
			check: func(t *testing.T, got []string) {
				if len(got) != 3 || slices.ContainsFunc(got, func(s string) bool { return s == "a1" || s == "b1" || s == "b2" }) {
					t.Fatalf("targets %v", got)
				}
				if !slices.Contains(got, "b3") {
					t.Fatalf("remote rack not used: %v", got)
				}
			}},
		{name: "full node skipped", nodes: twoRacks, writer: "a1", n: 3,
			setup: func(h *harness) { h.space["a1"] = bs - 1; h.heartbeat("a1") },
			check: func(t *testing.T, got []string) {
				if len(got) != 3 || slices.Contains(got, "a1") {
					t.Fatalf("targets %v", got)
				}
			}},
		{name: "stale node skipped when avoiding stale", nodes: []string{"a1", "a2", "a3", "a4"}, writer: "a1", n: 3,
			setup: func(h *harness) {
				h.m.cfg.AvoidStaleForWrite = true
				h.advance(31 * time.Second)
				h.heartbeatAll("a1")
			},
			check: func(t *testing.T, got []string) {
				if len(got) != 3 || slices.Contains(got, "a1") {
					t.Fatalf("targets %v", got)
				}
			}},
		{name: "overloaded node skipped", nodes: []string{"a1", "a2", "a3", "a4"}, writer: "a1", n: 2,
			setup: func(h *harness) { h.heartbeatX("a1", 40); h.heartbeatX("a2", 1) },
			check: func(t *testing.T, got []string) {
				if len(got) != 2 || slices.Contains(got, "a1") {
					t.Fatalf("targets %v", got)
				}
			}},
		{name: "fewer nodes than replicas", nodes: []string{"a1", "b1"}, writer: "a1", n: 3,
			check: func(t *testing.T, got []string) {
				if len(got) != 2 || got[0] != "a1" || got[1] != "b1" {
					t.Fatalf("targets %v", got)
				}
			}},
		{name: "ten replicas on two racks", nodes: twoRacks, writer: "a1", n: 10,
			check: func(t *testing.T, got []string) {
				if len(got) != 6 {
					t.Fatalf("targets %v", got)
				}
			}},
		{name: "one rack, no rack limit", nodes: []string{"a1", "a2", "a3"}, writer: "a3", n: 3,
			check: func(t *testing.T, got []string) {
				if len(got) != 3 || got[0] != "a3" {
					t.Fatalf("targets %v", got)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 25; seed++ {
				h := activeHarness(t, DefaultConfig(), seed, c.nodes...)
				if c.setup != nil {
					c.setup(h)
				}
				writer := c.writer
				if id, ok := h.byN[writer]; ok {
					writer = id.IPAddr
				}
				var ex []DatanodeID
				for _, e := range c.excl {
					ex = append(ex, h.id(e))
				}
				got := h.names(h.m.ChooseTargets(c.n, writer, ex, nil, bs, h.now))
				seen := map[string]bool{}
				for _, g := range got {
					if seen[g] {
						t.Fatalf("seed %d: %s chosen twice: %v", seed, g, got)
					}
					seen[g] = true
				}
				c.check(t, got)
			}
		})
	}
}

func TestPlacementFavoredAndScheduled(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 5, "a1", "a2", "b1", "b2")
	got := h.names(h.m.ChooseTargets(2, "", nil, []DatanodeID{h.id("b2"), h.id("a2")}, mib, h.now))
	slices.Sort(got)
	if !slices.Equal(got, []string{"a2", "b2"}) {
		t.Fatalf("favored ignored: %v", got)
	}
	// A node with room for one block only takes one scheduled block.
	h.space["a1"] = 3 * mib / 2
	h.heartbeat("a1")
	got = h.names(h.m.ChooseTargets(1, "a1", nil, nil, mib, h.now))
	if !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("first block %v", got)
	}
	if err := h.m.AddBlock(1, Block{ID: 1, GenStamp: 1}, 1, UnderConstruction, h.m.ChooseTargets(1, "a1", nil, nil, mib, h.now)); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if got := h.names(h.m.ChooseTargets(1, "a1", nil, nil, mib, h.now)); slices.Contains(got, "a1") {
			t.Fatalf("node with a block scheduled and room for one chosen again: %v", got)
		}
	}
}

func TestPipelineOrder(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 6, "a1", "a2", "b1")
	n := func(s string) *datanode { return h.m.nodes["uuid-"+s] }
	got := pipeline(n("a1"), []*datanode{n("b1"), n("a2")})
	if got[0] != n("a2") || got[1] != n("b1") {
		t.Fatalf("pipeline %s %s", got[0].id.Hostname, got[1].id.Hostname)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"/r1", "/r1", 2},
		{"/r1", "/r2", 4},
		{"/d1/r1", "/d1/r2", 4},
		{"/d1/r1", "/d2/r1", 6},
		{"/default-rack", "/d1/r1", 5},
	} {
		if got := distance(c.a, c.b); got != c.want {
			t.Errorf("distance(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestChoosePipeline(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 7)
	if _, err := h.m.ChoosePipeline(3, "10.9.9.9", nil, nil, mib, 0, h.now); !errors.Is(err, ErrNotEnoughTargets) {
		t.Fatalf("no nodes: %v", err)
	}
	h.addNode("a1", "10.0.0.1")
	h.addNode("b1", "10.0.0.2")
	chosen, err := h.m.ChoosePipeline(3, "10.0.0.2", nil, nil, mib, 0, h.now)
	got := TargetIDs(chosen)
	if err != nil || len(got) != 2 || got[0].UUID != "uuid-b1" {
		t.Fatalf("targets %v, %v", h.names(got), err)
	}
	if h.m.NumBlocks() != 0 {
		t.Fatal("choosing a pipeline recorded a block")
	}
	if err := h.m.AddBlock(1, Block{ID: 1, GenStamp: 1}, 3, UnderConstruction, nil); err != nil {
		t.Fatal(err)
	}
	h.m.SetPipeline(1, got)
	if info, ok := h.m.BlockInfo(1); !ok || info.State != UnderConstruction || info.Replication != 3 {
		t.Fatalf("info %+v", info)
	}
	if holders, _ := h.m.Holders(1, h.now); len(holders) != 2 {
		t.Fatalf("pipeline holders %v", h.names(holders))
	}
}
