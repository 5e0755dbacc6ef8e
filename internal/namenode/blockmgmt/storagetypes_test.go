package blockmgmt

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// Hadoop's built-in policies, as the NameNode resolves them.
var testPolicies = map[uint8]StoragePolicy{
	2:  {Name: "COLD", Types: []int32{TypeArchive}},
	5:  {Name: "WARM", Types: []int32{TypeDisk, TypeArchive}, CreationFallbacks: []int32{TypeDisk, TypeArchive}, ReplicationFallbacks: []int32{TypeDisk, TypeArchive}},
	7:  {Name: "HOT", Types: []int32{TypeDisk}, ReplicationFallbacks: []int32{TypeArchive}},
	10: {Name: "ONE_SSD", Types: []int32{TypeSSD, TypeDisk}, CreationFallbacks: []int32{TypeSSD, TypeDisk}, ReplicationFallbacks: []int32{TypeSSD, TypeDisk}},
	12: {Name: "ALL_SSD", Types: []int32{TypeSSD}, CreationFallbacks: []int32{TypeDisk}, ReplicationFallbacks: []int32{TypeDisk}},
	15: {Name: "LAZY_PERSIST", Types: []int32{TypeRAMDisk, TypeDisk}, CreationFallbacks: []int32{TypeDisk}, ReplicationFallbacks: []int32{TypeDisk}},
}

func resolveTestPolicy(id uint8) StoragePolicy {
	if id == 0 {
		id = 7
	}
	return testPolicies[id]
}

func typeNames(ts []int32) string {
	var out []string
	for _, t := range ts {
		out = append(out, typeName(t))
	}
	return fmt.Sprint(out)
}

func TestChooseTypes(t *testing.T) {
	cases := []struct {
		policy      uint8
		repl        int
		chosen      []int32
		unavailable []int32
		newBlock    bool
		want        string
	}{
		{7, 3, nil, nil, true, "[DISK DISK DISK]"},
		{10, 3, nil, nil, true, "[SSD DISK DISK]"},
		{10, 3, []int32{TypeSSD}, nil, false, "[DISK DISK]"},
		{10, 3, []int32{TypeDisk, TypeDisk}, nil, false, "[SSD]"},
		{12, 2, nil, []int32{TypeSSD}, true, "[DISK DISK]"},
		{12, 3, []int32{TypeSSD}, []int32{TypeSSD}, false, "[DISK DISK]"},
		{2, 3, nil, []int32{TypeArchive}, true, "[]"},
		{7, 2, nil, []int32{TypeDisk}, true, "[]"},
		{7, 2, nil, []int32{TypeDisk}, false, "[ARCHIVE ARCHIVE]"},
		{15, 2, nil, nil, true, "[DISK DISK]"},
		{5, 3, nil, []int32{TypeArchive}, true, "[DISK DISK DISK]"},
	}
	for _, c := range cases {
		un := map[int32]bool{}
		for _, u := range c.unavailable {
			un[u] = true
		}
		got := typeNames(resolveTestPolicy(c.policy).chooseTypes(c.repl, c.chosen, un, c.newBlock))
		if got != c.want {
			t.Errorf("policy %d repl %d chosen %v unavailable %v new %v: %s, want %s", c.policy, c.repl, c.chosen, c.unavailable, c.newBlock, got, c.want)
		}
	}
}

// typedHarness is a harness whose nodes carry volumes of the given types:
// node name → types, the first volume reported under stID(name).
func typedHarness(t *testing.T, nodes map[string][]int32, order ...string) *harness {
	t.Helper()
	cfg := DefaultConfig()
	cfg.StoragePolicy = resolveTestPolicy
	h := activeHarness(t, cfg, 11, order...)
	for _, n := range order {
		typedBeat(h, n, nodes[n])
	}
	return h
}

func typedStID(name string, i int, typ int32) string {
	if i == 0 {
		return stID(name)
	}
	return stID(name) + "-" + typeName(typ)
}

func typedBeat(h *harness, name string, types []int32) {
	h.heartbeatTyped(name, types)
}

func targetTypes(ts []Target) []string {
	var out []string
	for _, t := range ts {
		out = append(out, typeName(t.StorageType))
	}
	slices.Sort(out)
	return out
}

func TestPlacementByStorageType(t *testing.T) {
	mixed := map[string][]int32{
		"a1": {TypeDisk, TypeSSD}, "a2": {TypeDisk, TypeArchive},
		"b1": {TypeDisk, TypeSSD}, "b2": {TypeDisk, TypeArchive},
		"c1": {TypeDisk, TypeSSD}, "c2": {TypeDisk, TypeArchive},
	}
	names := []string{"a1", "a2", "b1", "b2", "c1", "c2"}
	cases := []struct {
		policy uint8
		want   []string
	}{
		{0, []string{"DISK", "DISK", "DISK"}},
		{7, []string{"DISK", "DISK", "DISK"}},
		{12, []string{"SSD", "SSD", "SSD"}},
		{10, []string{"DISK", "DISK", "SSD"}},
		{2, []string{"ARCHIVE", "ARCHIVE", "ARCHIVE"}},
		{5, []string{"ARCHIVE", "ARCHIVE", "DISK"}},
	}
	for _, c := range cases {
		for trial := range 5 {
			h := typedHarness(t, mixed, names...)
			ts := h.m.ChooseStorageTargets(3, fmt.Sprintf("10.0.0.%d", trial+1), nil, nil, mib, c.policy, h.now)
			if got := targetTypes(ts); !slices.Equal(got, c.want) {
				t.Fatalf("policy %d trial %d: types %v, want %v", c.policy, trial, got, c.want)
			}
			seen := map[string]bool{}
			for _, tg := range ts {
				if seen[tg.UUID] {
					t.Fatalf("policy %d: node %s chosen twice", c.policy, tg.UUID)
				}
				seen[tg.UUID] = true
				dn := h.m.nodes[tg.UUID]
				var st *storage
				for _, s := range dn.storages {
					if s.id == tg.StorageID {
						st = s
					}
				}
				if st == nil || typeOf(st) != tg.StorageType {
					t.Fatalf("policy %d: target %+v names no storage of its type on the node", c.policy, tg)
				}
			}
		}
	}
}

func TestPlacementFallback(t *testing.T) {
	// Only DISK volumes: ALL_SSD and ONE_SSD fall back to DISK; COLD has
	// no fallback and finds no target.
	h := typedHarness(t, map[string][]int32{"a1": {TypeDisk}, "b1": {TypeDisk}, "c1": {TypeDisk}}, "a1", "b1", "c1")
	for _, p := range []uint8{12, 10} {
		if got := targetTypes(h.m.ChooseStorageTargets(3, "", nil, nil, mib, p, h.now)); !slices.Equal(got, []string{"DISK", "DISK", "DISK"}) {
			t.Fatalf("policy %d without SSD: %v", p, got)
		}
	}
	if _, err := h.m.ChoosePipeline(3, "", nil, nil, mib, 2, h.now); !errors.Is(err, ErrNotEnoughTargets) {
		t.Fatalf("COLD without ARCHIVE: %v", err)
	}
	// One SSD in the cluster: ALL_SSD takes it and DISK for the rest.
	h = typedHarness(t, map[string][]int32{"a1": {TypeDisk}, "b1": {TypeDisk, TypeSSD}, "c1": {TypeDisk}}, "a1", "b1", "c1")
	if got := targetTypes(h.m.ChooseStorageTargets(3, "", nil, nil, mib, 12, h.now)); !slices.Equal(got, []string{"DISK", "DISK", "SSD"}) {
		t.Fatalf("ALL_SSD with one SSD: %v", got)
	}
	// HOT on nodes with only SSD: no DISK and no creation fallback.
	h = typedHarness(t, map[string][]int32{"a1": {TypeSSD}, "b1": {TypeSSD}}, "a1", "b1")
	if ts := h.m.ChooseStorageTargets(2, "", nil, nil, mib, 7, h.now); len(ts) != 0 {
		t.Fatalf("HOT on SSD-only nodes: %v", targetTypes(ts))
	}
	// A full SSD counts as unavailable.
	h = typedHarness(t, map[string][]int32{"a1": {TypeDisk, TypeSSD}, "b1": {TypeDisk}}, "a1", "b1")
	full := []StorageReport{
		{StorageID: typedStID("a1", 0, TypeDisk), Capacity: 200 * gib, Remaining: 100 * gib, StorageType: TypeDisk},
		{StorageID: typedStID("a1", 1, TypeSSD), Capacity: 200 * gib, Remaining: 0, StorageType: TypeSSD},
	}
	if _, err := h.m.Heartbeat(h.id("a1").UUID, full, 0, 0, h.now); err != nil {
		t.Fatal(err)
	}
	if got := targetTypes(h.m.ChooseStorageTargets(2, "", nil, nil, mib, 12, h.now)); !slices.Equal(got, []string{"DISK", "DISK"}) {
		t.Fatalf("ALL_SSD with the SSD full: %v", got)
	}
}

func TestReReplicationByStorageType(t *testing.T) {
	nodes := map[string][]int32{
		"a1": {TypeDisk, TypeSSD}, "a2": {TypeDisk, TypeSSD}, "b1": {TypeDisk, TypeSSD}, "b2": {TypeDisk},
	}
	h := typedHarness(t, nodes, "a1", "a2", "b1", "b2")
	b := Block{ID: 1, GenStamp: 1, NumBytes: mib}
	if err := h.m.AddBlock(1, b, 3, Complete, nil); err != nil {
		t.Fatal(err)
	}
	h.m.SetStoragePolicy([]int64{1}, 12) // ALL_SSD
	for _, n := range []string{"a1", "b1"} {
		if _, err := h.m.ProcessIncremental(h.id(n).UUID, typedStID(n, 1, TypeSSD), []ReceivedDeleted{{Block: b, Status: Received}}, h.now); err != nil {
			t.Fatal(err)
		}
	}
	h.m.ComputeWork(h.now)
	var got []Transfer
	for _, n := range []string{"a1", "b1"} {
		for _, c := range h.heartbeatTyped(n, nodes[n]) {
			if tr, ok := c.(Transfer); ok {
				got = append(got, tr)
			}
		}
	}
	if len(got) != 1 || len(got[0].Targets) != 1 {
		t.Fatalf("transfers %+v", got)
	}
	tr := got[0]
	if tr.Targets[0].UUID != "uuid-a2" || tr.StorageTypes[0] != TypeSSD || tr.StorageIDs[0] != typedStID("a2", 1, TypeSSD) {
		t.Fatalf("transfer to %s storage %s type %s, want a2's SSD", tr.Targets[0].UUID, tr.StorageIDs[0], typeName(tr.StorageTypes[0]))
	}
}

func (h *harness) heartbeatTyped(name string, types []int32) []Command {
	h.t.Helper()
	var reps []StorageReport
	for i, typ := range types {
		reps = append(reps, StorageReport{StorageID: typedStID(name, i, typ), Capacity: 200 * gib, Remaining: 100 * gib, StorageType: typ})
	}
	cmds, err := h.m.Heartbeat(h.id(name).UUID, reps, 0, 0, h.now)
	if err != nil {
		h.t.Fatal(err)
	}
	return cmds
}

// TestPlacementByTypeRandom: on random clusters of typed volumes, every
// target names a storage of its node with room, no node is chosen twice,
// and the types chosen are the policy's when the cluster has room for
// them, else its creation fallbacks.
func TestPlacementByTypeRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	all := []int32{TypeDisk, TypeSSD, TypeArchive}
	ids := []uint8{2, 5, 7, 10, 12}
	for trial := range 200 {
		nodes := map[string][]int32{}
		var names []string
		for i := range 2 + r.IntN(5) {
			// One rack: the rack rules (which may leave a type unused on
			// a full rack, as in HDFS) are not what this checks.
			n := fmt.Sprintf("a%d", i)
			var ts []int32
			for _, typ := range all {
				if r.IntN(2) == 0 {
					ts = append(ts, typ)
				}
			}
			if len(ts) == 0 {
				ts = []int32{TypeDisk}
			}
			nodes[n] = ts
			names = append(names, n)
		}
		h := typedHarness(t, nodes, names...)
		id := ids[r.IntN(len(ids))]
		repl := 1 + r.IntN(4)
		got := h.m.ChooseStorageTargets(repl, "", nil, nil, mib, id, h.now)
		if len(got) > repl {
			t.Fatalf("trial %d: %d targets for %d replicas", trial, len(got), repl)
		}
		seen := map[string]bool{}
		counts := map[int32]int{}
		for _, tg := range got {
			if seen[tg.UUID] {
				t.Fatalf("trial %d: node %s twice", trial, tg.UUID)
			}
			seen[tg.UUID] = true
			dn := h.m.nodes[tg.UUID]
			ok := false
			for _, st := range dn.storages {
				if st.id == tg.StorageID && typeOf(st) == tg.StorageType && st.remaining >= mib {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("trial %d: target %+v is no storage of its node", trial, tg)
			}
			counts[tg.StorageType]++
		}
		// Every type the policy asks for that some unchosen node has must
		// not have been left for a fallback.
		pol := resolveTestPolicy(id)
		want := map[int32]int{}
		for _, typ := range pol.requested(repl) {
			want[typ]++
		}
		for typ, n := range want {
			if counts[typ] >= n {
				continue
			}
			for _, name := range names {
				if seen[h.id(name).UUID] {
					continue
				}
				if slices.Contains(nodes[name], typ) {
					t.Fatalf("trial %d: policy %s repl %d: %d of %d %s replicas placed, yet %s has %s free (targets %v)",
						trial, pol.Name, repl, counts[typ], n, typeName(typ), name, typeName(typ), targetTypes(got))
				}
			}
		}
	}
}
