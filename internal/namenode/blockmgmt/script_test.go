package blockmgmt

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/*.script")

// TestScripts runs testdata/*.script. Each case is a command line, a "----"
// line and the expected output, ended by a blank line (go test -rewrite
// regenerates the outputs). Commands:
//
//	nodes a1 a2 b1          register nodes; the letter names the rack
//	activate | tick         Activate / Tick at the current time
//	advance 10m             move the clock
//	hb a1 [xceivers]        heartbeat; prints the commands
//	hball                   heartbeat every live node, printing commands
//	block ID repl [uc|complete] [file=N] [len=N] [gs=N]
//	fbr a1 ID[:len[:gs[:state]]] ...
//	ibr a1 received|receiving|deleted ID[:len[:gs]] ...
//	commit ID len gs | setrepl ID N | remove ID... | bad ID a1 ...
//	choose N writer [exclude=a1,b1]
//	check               CheckHeartbeats
//	work                ComputeWork
//	holders ID | locations ID reader | stats | safemode | enter | leave [force]
//	register a1             register (again); prints a refusal
//	hosts [decom=a1,b1] [maint=a2@30m,...] [deny=b2]
//	                        SetHostPolicy from these lists; prints the changes
//	refresh                 SetHostPolicy again with the same answers
//	admin                   CheckAdmin; prints changes, then every node leaving
//	                        service with its counts
//	report decommissioning|entering|inmaintenance|live|dead|all
//	adminstats              the admin-state counters of Stats
//	config tracked=N blocks=N maintmin=N
//	getblocks a1 [size=N] [min=N]   GetBlocks (the balancer's getBlocks)
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.script")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runScript(t, f) })
	}
}

func runScript(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, DefaultConfig(), 42)
	racks := map[string]string{}
	h.m.cfg.Topology = func(ip string) string { return racks[ip] }
	var out strings.Builder
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		// Skip the old expectation.
		j := i + 1
		if j < len(lines) && lines[j] == "----" {
			j++
			for j < len(lines) && lines[j] != "" {
				j++
			}
		}
		expected := ""
		if i+2 <= j-1 {
			expected = strings.Join(lines[i+2:j], "\n")
		}
		got := strings.TrimRight(scriptCmd(t, h, racks, line), "\n")
		out.WriteString(line + "\n----\n")
		if got != "" {
			out.WriteString(got + "\n")
		}
		out.WriteString("\n")
		if j < len(lines) && lines[j] == "" {
			j++ // the blank line ending the case
		}
		if !*rewrite && got != expected {
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", path, i+1, line, got, expected)
		}
		i = j - 1
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func parseBlock(t *testing.T, s string, def Block) (Block, ReplicaState) {
	parts := strings.Split(s, ":")
	b := def
	st := Finalized
	num := func(p string) int64 {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			t.Fatalf("bad number %q", p)
		}
		return n
	}
	b.ID = num(parts[0])
	if len(parts) > 1 {
		b.NumBytes = num(parts[1])
	}
	if len(parts) > 2 {
		b.GenStamp = num(parts[2])
	}
	if len(parts) > 3 {
		switch parts[3] {
		case "rbw":
			st = RBW
		case "rwr":
			st = RWR
		}
	}
	return b, st
}

func fmtCmds(h *harness, cmds []Command) string {
	var parts []string
	for _, c := range cmds {
		switch c := c.(type) {
		case Transfer:
			parts = append(parts, fmt.Sprintf("transfer blk_%d_%d -> %s", c.Block.ID, c.Block.GenStamp, strings.Join(h.names(c.Targets), ",")))
		case Invalidate:
			var ids []string
			for _, b := range c.Blocks {
				ids = append(ids, fmt.Sprintf("blk_%d_%d", b.ID, b.GenStamp))
			}
			parts = append(parts, "invalidate "+strings.Join(ids, " "))
		case Register:
			parts = append(parts, "register")
		}
	}
	return strings.Join(parts, "; ")
}

func fmtChanges(ch []AdminChange) string {
	var out strings.Builder
	for _, c := range ch {
		fmt.Fprintf(&out, "%s %v -> %v\n", c.ID.Hostname, c.From, c.To)
	}
	return out.String()
}

func scriptCmd(t *testing.T, h *harness, racks map[string]string, line string) string {
	f := strings.Fields(line)
	kv := map[string]string{}
	var args []string
	for _, a := range f[1:] {
		if k, v, ok := strings.Cut(a, "="); ok {
			kv[k] = v
		} else {
			args = append(args, a)
		}
	}
	atoi := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("%s: bad number %q", line, s)
		}
		return n
	}
	errStr := func(err error) string {
		if err != nil {
			return "error: " + err.Error()
		}
		return ""
	}
	defer h.check()
	switch f[0] {
	case "register":
		id, ok := h.byN[args[0]]
		if !ok {
			t.Fatalf("%s: unknown node", line)
		}
		return errStr(h.m.RegisterDatanode(id, h.now))
	case "hosts":
		pol := map[string]HostVerdict{}
		for k, list := range kv {
			for _, e := range strings.Split(list, ",") {
				name, dur, _ := strings.Cut(e, "@")
				v := pol[name]
				switch k {
				case "decom":
					v.Decommission = true
				case "deny":
					v.Disallowed = true
				case "maint":
					v.MaintenanceUntil = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
					if dur != "" {
						d, err := time.ParseDuration(dur)
						if err != nil {
							t.Fatal(err)
						}
						v.MaintenanceUntil = h.now.Add(d)
					}
				default:
					t.Fatalf("%s: unknown list %s", line, k)
				}
				pol[name] = v
			}
		}
		return fmtChanges(h.m.SetHostPolicy(func(id DatanodeID) HostVerdict { return pol[id.Hostname] }, h.now))
	case "getblocks":
		size, minSize := int64(1<<62), int64(0)
		if v, ok := kv["size"]; ok {
			size = int64(atoi(v))
		}
		if v, ok := kv["min"]; ok {
			minSize = int64(atoi(v))
		}
		node, ok := h.byN[args[0]]
		if !ok {
			node = DatanodeID{UUID: "nobody", IPAddr: "10.9.9.9", XferPort: 9866}
		}
		bs, err := h.m.GetBlocks(node, size, minSize)
		if err != nil {
			return errStr(err)
		}
		var lines []string
		for _, b := range bs {
			lines = append(lines, fmt.Sprintf("blk_%d len=%d on %s", b.ID, b.NumBytes, strings.Join(h.names(b.Holders), ",")))
		}
		return strings.Join(lines, "\n")
	case "refresh":
		return fmtChanges(h.m.SetHostPolicy(h.m.hosts, h.now))
	case "admin":
		out := fmtChanges(h.m.CheckAdmin(h.now))
		for _, d := range h.m.order {
			if d.admin == Normal {
				continue
			}
			st := ""
			if d.lv != nil {
				st = fmt.Sprintf(" short=%d oos-only=%d open=%d", d.lv.status.UnderReplicated, d.lv.status.OutOfServiceOnly, d.lv.status.InOpenFiles)
				if !d.lv.tracked {
					st += " (waiting)"
				}
			}
			if d.dead {
				st += " dead"
			}
			out += fmt.Sprintf("%s %v%s\n", d.id.Hostname, d.admin, st)
		}
		return out
	case "report":
		kind := map[string]ReportKind{"all": ReportAll, "live": ReportLive, "dead": ReportDead,
			"decommissioning": ReportDecommissioning, "entering": ReportEnteringMaintenance, "inmaintenance": ReportInMaintenance}[args[0]]
		var names []string
		for _, in := range h.m.DatanodeReport(kind, h.now) {
			names = append(names, in.ID.Hostname)
		}
		return strings.Join(names, ",")
	case "adminstats":
		s := h.m.Stats(h.now)
		return fmt.Sprintf("decommissioning=%d decom-live=%d decom-dead=%d entering=%d inmaint-live=%d inmaint-dead=%d",
			s.DecommissioningNodes, s.DecomLiveNodes, s.DecomDeadNodes, s.EnteringMaintenance, s.InMaintenanceLiveNodes, s.InMaintenanceDeadNodes)
	case "config":
		for k, v := range kv {
			switch k {
			case "tracked":
				h.m.cfg.DecommissionMaxTrackedNodes = atoi(v)
			case "blocks":
				h.m.cfg.DecommissionBlocksPerInterval = atoi(v)
			case "maintmin":
				h.m.cfg.MaintenanceReplicationMin = atoi(v)
			default:
				t.Fatalf("%s: unknown setting %s", line, k)
			}
		}
		return ""
	case "nodes":
		for _, n := range args {
			ip := fmt.Sprintf("10.0.0.%d", len(h.dns)+1)
			racks[ip] = "/" + n[:1]
			h.addNode(n, ip)
		}
		return ""
	case "activate":
		h.m.Activate(h.now)
		return fmt.Sprintf("safemode=%v", h.m.InSafeMode())
	case "tick":
		h.m.Tick(h.now)
		return fmt.Sprintf("safemode=%v", h.m.InSafeMode())
	case "advance":
		d, err := time.ParseDuration(args[0])
		if err != nil {
			t.Fatal(err)
		}
		h.advance(d)
		return ""
	case "hb":
		x := 0
		if len(args) > 1 {
			x = atoi(args[1])
		}
		r := StorageReport{StorageID: stID(args[0]), Capacity: 200 * gib, DfsUsed: gib, Remaining: h.space[args[0]]}
		if v, ok := kv["remaining"]; ok {
			r.Remaining = int64(atoi(v)) * mib
			h.space[args[0]] = r.Remaining
		}
		cmds, err := h.m.Heartbeat(h.id(args[0]).UUID, []StorageReport{r}, x, 0, h.now)
		if err != nil {
			return errStr(err)
		}
		return fmtCmds(h, cmds)
	case "hball":
		var names []string
		for _, d := range h.m.order {
			if !d.dead && !slices.Contains(args, d.id.Hostname) {
				names = append(names, d.id.Hostname)
			}
		}
		var outs []string
		for _, n := range names {
			if c := fmtCmds(h, h.heartbeat(n)); c != "" {
				outs = append(outs, n+": "+c)
			}
		}
		return strings.Join(outs, "\n")
	case "block":
		st := Complete
		if slices.Contains(args, "uc") {
			st = UnderConstruction
		}
		b := Block{ID: int64(atoi(args[0])), GenStamp: 1001}
		if v, ok := kv["len"]; ok {
			b.NumBytes = int64(atoi(v))
		}
		if v, ok := kv["gs"]; ok {
			b.GenStamp = int64(atoi(v))
		}
		file := int64(1)
		if v, ok := kv["file"]; ok {
			file = int64(atoi(v))
		}
		return errStr(h.m.AddBlock(file, b, atoi(args[1]), st, nil))
	case "fbr", "ibr":
		name := args[0]
		var res ReportResult
		var err error
		if f[0] == "fbr" {
			var reps []ReportedReplica
			for _, a := range args[1:] {
				b, st := parseBlock(t, a, Block{GenStamp: 1001})
				reps = append(reps, ReportedReplica{Block: b, State: st})
			}
			res, err = h.m.ProcessFullBlockReport(h.id(name).UUID, stID(name), reps, h.now)
		} else {
			status := map[string]ReceivedStatus{"received": Received, "receiving": Receiving, "deleted": Deleted}[args[1]]
			var items []ReceivedDeleted
			for _, a := range args[2:] {
				b, _ := parseBlock(t, a, Block{GenStamp: 1001})
				items = append(items, ReceivedDeleted{Block: b, Status: status, DeleteHint: kv["hint"]})
			}
			res, err = h.m.ProcessIncremental(h.id(name).UUID, stID(name), items, h.now)
		}
		if err != nil {
			return errStr(err)
		}
		return fmt.Sprintf("added=%d removed=%d invalidated=%d corrupt=%d", res.Added, res.Removed, res.Invalidated, res.Corrupt)
	case "pipeline":
		var ids []DatanodeID
		for _, n := range args[1:] {
			ids = append(ids, h.id(n))
		}
		h.m.SetPipeline(int64(atoi(args[0])), ids)
		return ""
	case "commit":
		st, err := h.m.CommitBlock(Block{ID: int64(atoi(args[0])), NumBytes: int64(atoi(args[1])), GenStamp: int64(atoi(args[2]))})
		if err != nil {
			return errStr(err)
		}
		return st.String()
	case "setrepl":
		h.m.SetReplication([]int64{int64(atoi(args[0]))}, atoi(args[1]))
		return ""
	case "remove":
		var ids []int64
		for _, a := range args {
			ids = append(ids, int64(atoi(a)))
		}
		h.m.RemoveBlocks(ids)
		return ""
	case "bad":
		var uuids []string
		for _, n := range args[1:] {
			uuids = append(uuids, h.id(n).UUID)
		}
		return errStr(h.m.ReportBadBlocks(Block{ID: int64(atoi(args[0]))}, uuids))
	case "choose":
		var ex []DatanodeID
		if v, ok := kv["exclude"]; ok {
			for _, n := range strings.Split(v, ",") {
				ex = append(ex, h.id(n))
			}
		}
		writer := args[1]
		if id, ok := h.byN[writer]; ok {
			writer = id.IPAddr
		}
		return strings.Join(h.names(h.m.ChooseTargets(atoi(args[0]), writer, ex, nil, 128*mib, h.now)), ",")
	case "check":
		return "dead: " + strings.Join(h.names(h.m.CheckHeartbeats(h.now)), ",")
	case "work":
		w := h.m.ComputeWork(h.now)
		return fmt.Sprintf("transfers=%d invalidates=%d timedout=%d unschedulable=%d", w.Transfers, w.Invalidates, w.TimedOut, w.Unschedulable)
	case "holders":
		id := int64(atoi(args[0]))
		info, ok := h.m.BlockInfo(id)
		if !ok {
			return "unknown"
		}
		var parts []string
		for _, r := range h.m.reps(h.m.blocks.get(id)) {
			p := h.m.stOf(r).dn.id.Hostname
			if r.state != Finalized {
				p += "(" + r.state.String() + ")"
			}
			if r.flags&rCorrupt != 0 {
				p += "(corrupt)"
			}
			parts = append(parts, p)
		}
		slices.Sort(parts)
		c := h.m.count(h.m.blocks.get(id))
		extra := ""
		if c.outOfService > 0 {
			extra += fmt.Sprintf(" oos=%d", c.outOfService)
		}
		if c.maint > 0 {
			extra += fmt.Sprintf(" maint=%d", c.maint)
		}
		return fmt.Sprintf("%s repl=%d live=%d%s corrupt=%d level=%d: %s", info.State, info.Replication, c.live, extra, info.Corrupt,
			h.m.needed.level(id), strings.Join(parts, " "))
	case "locations":
		reader := args[1]
		if id, ok := h.byN[reader]; ok {
			reader = id.IPAddr
		}
		lbs, err := h.m.GetBlockLocations([]int64{int64(atoi(args[0]))}, reader, h.now)
		if err != nil {
			return errStr(err)
		}
		var names []string
		for _, l := range lbs[0].Locations {
			names = append(names, l.ID.Hostname)
		}
		return fmt.Sprintf("%s corrupt=%v uc=%v", strings.Join(names, ","), lbs[0].Corrupt, lbs[0].UnderConstruction)
	case "stats":
		s := h.m.Stats(h.now)
		return fmt.Sprintf("live=%d dead=%d stale=%d blocks=%d under=%d corrupt=%d missing=%d missing1=%d pending-del=%d pending-repl=%d",
			s.LiveNodes, s.DeadNodes, s.StaleNodes, s.TotalBlocks, s.UnderReplicated, s.CorruptBlocks, s.MissingBlocks,
			s.MissingReplOneBlocks, s.PendingDeletion, s.PendingReplication)
	case "safemode":
		on, msg := h.m.SafeModeStatus(h.now)
		return fmt.Sprintf("on=%v %s", on, strings.ReplaceAll(msg, "\n", " | "))
	case "enter":
		h.m.EnterSafeMode()
		return ""
	case "leave":
		return errStr(h.m.LeaveSafeMode(slices.Contains(args, "force")))
	}
	t.Fatalf("unknown command %q", line)
	return ""
}
