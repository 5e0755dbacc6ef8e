package plan

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// node builds a node of 100 units capacity on rack r with u used.
func node(name, rack string, used int64) Node {
	return Node{UUID: name, IP: "10.0.0." + name[1:], Hostname: name, XferPort: 9866, Rack: rack,
		Capacity: 100, Used: used, Remaining: 100 - used}
}

func fmtPlan(it Iteration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "avg=%.1f left=%d moving=%d\n", it.Average, it.BytesLeftToMove, it.BytesToMove)
	for _, g := range it.Groups {
		fmt.Fprintf(&b, "%s %s util=%.1f max=%d sched=%d\n", g.UUID, g.Class, g.Utilization, g.MaxSize, g.Scheduled)
	}
	for _, t := range it.Tasks {
		fmt.Fprintf(&b, "%s->%s %d\n", t.Source, t.Target, t.Size)
	}
	return b.String()
}

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []Node
		p     Params
		want  string
	}{{
		name:  "one empty node of four",
		nodes: []Node{node("n1", "/r", 60), node("n2", "/r", 60), node("n3", "/r", 60), node("n4", "/r", 0)},
		p:     Params{Threshold: 10, MaxSizeToMove: 1000},
		want: `avg=45.0 left=35 moving=45
n1 over-utilized util=60.0 max=15 sched=15
n2 over-utilized util=60.0 max=15 sched=15
n3 over-utilized util=60.0 max=15 sched=15
n4 underutilized util=0.0 max=45 sched=45
n1->n4 15
n2->n4 15
n3->n4 15
`,
	}, {
		name:  "same rack first",
		nodes: []Node{node("a1", "/a", 90), node("b1", "/b", 90), node("b2", "/b", 10), node("a2", "/a", 10)},
		p:     Params{Threshold: 10, MaxSizeToMove: 1000},
		want: `avg=50.0 left=60 moving=80
a1 over-utilized util=90.0 max=40 sched=40
b1 over-utilized util=90.0 max=40 sched=40
b2 underutilized util=10.0 max=40 sched=40
a2 underutilized util=10.0 max=40 sched=40
a1->a2 40
b1->b2 40
`,
	}, {
		name:  "balanced",
		nodes: []Node{node("n1", "/r", 50), node("n2", "/r", 45), node("n3", "/r", 41)},
		p:     Params{Threshold: 10, MaxSizeToMove: 1000},
		want: `avg=45.3 left=0 moving=0
n1 above-average util=50.0 max=4 sched=0
n2 below-average util=45.0 max=0 sched=0
n3 below-average util=41.0 max=4 sched=0
`,
	}, {
		name:  "above average senders fill an under-utilized node",
		nodes: []Node{node("n1", "/r", 52), node("n2", "/r", 50), node("n3", "/r", 30)},
		p:     Params{Threshold: 10, MaxSizeToMove: 1000},
		want: `avg=44.0 left=4 moving=14
n1 above-average util=52.0 max=8 sched=8
n2 above-average util=50.0 max=6 sched=6
n3 underutilized util=30.0 max=14 sched=14
n3<-n1 8
n3<-n2 6
`,
	}, {
		name:  "the per-iteration cap and a target without room for a block",
		nodes: []Node{node("n1", "/r", 95), node("n2", "/r", 5), {UUID: "n3", Rack: "/r", Capacity: 100, Used: 5, Remaining: 3}},
		p:     Params{Threshold: 10, MaxSizeToMove: 20, BlockSize: 4},
		want: `avg=35.0 left=50 moving=20
n1 over-utilized util=95.0 max=20 sched=20
n2 underutilized util=5.0 max=20 sched=20
n3 underutilized util=5.0 max=0 sched=0
n1->n2 20
`,
	}, {
		name:  "a node above average that is not a source stays out",
		nodes: []Node{node("n1", "/r", 90), node("n2", "/r", 80), node("n3", "/r", 10)},
		p:     Params{Threshold: 10, MaxSizeToMove: 1000, Source: func(n Node) bool { return n.Hostname == "n2" }},
		want: `avg=60.0 left=40 moving=20
n2 over-utilized util=80.0 max=20 sched=20
n3 underutilized util=10.0 max=50 sched=20
n2->n3 20
`,
	}, {
		name:  "no capacity",
		nodes: []Node{{UUID: "n1"}},
		p:     Params{Threshold: 10},
		want:  "avg=0.0 left=0 moving=0\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := fmtPlan(Plan(tc.nodes, tc.p))
			// Tasks an under-utilized node received are printed as
			// target<-source in the wanted text where the receiver chose.
			want := tc.want
			if strings.Contains(want, "<-") {
				var lines []string
				for _, l := range strings.Split(want, "\n") {
					if a, b, ok := strings.Cut(l, "<-"); ok {
						tgt := a
						src, size, _ := strings.Cut(b, " ")
						l = src + "->" + tgt + " " + size
					}
					lines = append(lines, l)
				}
				want = strings.Join(lines, "\n")
			}
			if got != want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestSortTopNodes(t *testing.T) {
	nodes := []Node{node("n1", "/r", 70), node("n2", "/r", 95), node("n3", "/r", 0)}
	it := Plan(nodes, Params{Threshold: 10, MaxSizeToMove: 1000, SortTopNodes: true})
	if it.Tasks[0].Source != "n2" {
		t.Fatalf("first task %+v, want the most utilized node first", it.Tasks[0])
	}
	it = Plan(nodes, Params{Threshold: 10, MaxSizeToMove: 1000})
	if it.Tasks[0].Source != "n1" {
		t.Fatalf("first task %+v, want input order", it.Tasks[0])
	}
}

func TestMatches(t *testing.T) {
	n := Node{IP: "10.0.0.5", Hostname: "dn5.example.com", XferPort: 9866}
	for list, want := range map[string]bool{
		"dn5.example.com": true, "10.0.0.5": true, "10.0.0.5:9866": true, "dn5.example.com:9866": true,
		"10.0.0.5:1": false, "dn5": false, "": false,
	} {
		if got := Matches(map[string]bool{list: true}, n); got != want {
			t.Errorf("%q: got %v", list, got)
		}
	}
}

func TestChooseMove(t *testing.T) {
	racks := map[string]string{"a1": "/a", "a2": "/a", "a3": "/a", "b1": "/b", "b2": "/b"}
	busy := map[string]bool{}
	moved := map[int64]bool{}
	c := Cluster{
		Rack:  func(u string) string { return racks[u] },
		Free:  func(u string) bool { return !busy[u] },
		Moved: func(id int64) bool { return moved[id] },
	}
	blk := func(id int64, holders ...string) Block { return Block{ID: id, Size: 10, Holders: holders} }
	for _, tc := range []struct {
		name   string
		tasks  []Pending
		blocks []Block
		busy   []string
		moved  []int64
		want   string
	}{
		{name: "first good block, proxy on the target's rack",
			tasks: []Pending{{"b2", 30}}, blocks: []Block{blk(1, "a1", "b2"), blk(2, "a1", "a2", "b1")},
			want: "blk 2 -> b2 via b1 (task 0, block 1)"},
		{name: "a move that would leave the source's rack empty of it is refused",
			tasks: []Pending{{"b2", 30}}, blocks: []Block{blk(3, "a1", "b1")}, want: "none"},
		{name: "the same rack never reduces racks",
			tasks: []Pending{{"a3", 30}}, blocks: []Block{blk(3, "a1", "b1")}, want: "blk 3 -> a3 via a1 (task 0, block 0)"},
		{name: "a new rack is fine", tasks: []Pending{{"b1", 30}}, blocks: []Block{blk(4, "a1", "a2")},
			want: "blk 4 -> b1 via a1 (task 0, block 0)"},
		{name: "a busy proxy on the target's rack gives way to another holder",
			tasks: []Pending{{"b2", 30}}, blocks: []Block{blk(2, "a1", "a2", "b1")}, busy: []string{"b1"},
			want: "blk 2 -> b2 via a1 (task 0, block 0)"},
		{name: "a busy target is skipped for the next task",
			tasks: []Pending{{"b2", 30}, {"a3", 10}}, blocks: []Block{blk(2, "a1", "a2", "b1")}, busy: []string{"b2"},
			want: "blk 2 -> a3 via a1 (task 1, block 0)"},
		{name: "finished tasks and moved blocks are skipped",
			tasks: []Pending{{"b2", 0}, {"a3", 10}}, blocks: []Block{blk(5, "a1"), blk(6, "a1")}, moved: []int64{5},
			want: "blk 6 -> a3 via a1 (task 1, block 1)"},
		{name: "every holder busy", tasks: []Pending{{"a3", 10}}, blocks: []Block{blk(7, "a1", "b1")}, busy: []string{"a1", "b1"},
			want: "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clear(busy)
			clear(moved)
			for _, b := range tc.busy {
				busy[b] = true
			}
			for _, id := range tc.moved {
				moved[id] = true
			}
			m, ok := ChooseMove("a1", tc.tasks, tc.blocks, c)
			got := "none"
			if ok {
				got = fmt.Sprintf("blk %d -> %s via %s (task %d, block %d)", m.Block.ID, m.Target, m.Proxy, m.Task, m.BlockIndex)
			}
			if got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
	if !reflect.DeepEqual(blk(1, "x"), Block{ID: 1, Size: 10, Holders: []string{"x"}}) {
		t.Fatal("helper")
	}
}
