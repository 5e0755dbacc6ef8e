package lease

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/scripttest"
)

// TestManagerScript drives a Manager with a manual clock (t= seconds).
//
//	new [soft=S] [hard=S]            fresh table with those limits (seconds)
//	add h=H f=F t=T                  AddLease
//	renew h=H t=T                    RenewLease
//	remove h=H f=F                   RemoveLease
//	removefile f=F                   RemoveFile
//	reassign f=F from=A to=B t=T     ReassignLease (to=- removes)
//	holder f=F                       Holder
//	files h=H                        Files
//	soft h=H t=T / hard h=H t=T      SoftLimitExpired / HardLimitExpired
//	expired t=T [max=N]              ExpiredHardLimit
//	release t=T [max=N]              one monitor pass: ExpiredHardLimit, then every
//	                                 returned file is reassigned to RecoveryHolder
//	                                 except those listed in stuck=F,F
//	rebuild t=T                      Rebuild from input lines "F H"
//	nnholder t=T                     RecoveryHolder
//	leases                           Leases, plus NumLeases / NumFiles
func TestManagerScript(t *testing.T) {
	for _, name := range []string{"manager.txt", "monitor.txt"} {
		t.Run(name, func(t *testing.T) {
			m := NewManager(Limits{})
			runScript(t, name, func(t *testing.T, c *scripttest.Case) string {
				return managerCmd(t, &m, c)
			})
		})
	}
}

func managerCmd(t *testing.T, mp **Manager, c *scripttest.Case) string {
	m := *mp
	file := func() uint64 { return uint64(c.Int(t, "f")) }
	switch c.Cmd {
	case "new":
		*mp = NewManager(Limits{
			Soft: time.Duration(c.IntOr(t, "soft", 0)) * time.Second,
			Hard: time.Duration(c.IntOr(t, "hard", 0)) * time.Second,
		})
		l := (*mp).Limits()
		return fmt.Sprintf("soft=%v hard=%v", l.Soft, l.Hard)
	case "add":
		m.AddLease(c.Str(t, "h"), file(), at(t, c))
		return dumpLeases(m)
	case "renew":
		ok := m.RenewLease(c.Str(t, "h"), at(t, c))
		return fmt.Sprintf("renewed=%v\n%s", ok, dumpLeases(m))
	case "remove":
		ok := m.RemoveLease(c.Str(t, "h"), file())
		return fmt.Sprintf("removed=%v\n%s", ok, dumpLeases(m))
	case "removefile":
		ok := m.RemoveFile(file())
		return fmt.Sprintf("removed=%v\n%s", ok, dumpLeases(m))
	case "reassign":
		to := c.Str(t, "to")
		if to == "-" {
			to = ""
		}
		if err := m.ReassignLease(file(), c.Str(t, "from"), to, at(t, c)); err != nil {
			return "error: " + err.Error()
		}
		return dumpLeases(m)
	case "holder":
		h, ok := m.Holder(file())
		return fmt.Sprintf("holder=%q ok=%v", h, ok)
	case "files":
		return fmt.Sprint(m.Files(c.Str(t, "h")))
	case "soft":
		return fmt.Sprintf("soft-expired=%v", m.SoftLimitExpired(c.Str(t, "h"), at(t, c)))
	case "hard":
		return fmt.Sprintf("hard-expired=%v", m.HardLimitExpired(c.Str(t, "h"), at(t, c)))
	case "expired":
		return dumpExpired(m.ExpiredHardLimit(at(t, c), int(c.IntOr(t, "max", 0))))
	case "release":
		now := at(t, c)
		stuck := map[uint64]bool{}
		if c.Has("stuck") {
			for _, s := range strings.Split(c.Args["stuck"], ",") {
				n, err := strconv.ParseUint(s, 10, 64)
				if err != nil {
					t.Fatalf("line %d: stuck: %v", c.Line, err)
				}
				stuck[n] = true
			}
		}
		ex := m.ExpiredHardLimit(now, int(c.IntOr(t, "max", 0)))
		for _, e := range ex {
			for _, f := range e.FileIDs {
				if stuck[f] {
					continue
				}
				if err := m.ReassignLease(f, e.Holder, m.RecoveryHolder(now), now); err != nil {
					t.Fatalf("line %d: %v", c.Line, err)
				}
			}
		}
		return dumpExpired(ex) + "\n" + dumpLeases(m)
	case "rebuild":
		var ucs []UC
		for _, l := range c.Input {
			f, h, _ := strings.Cut(l, " ")
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				t.Fatalf("line %d: %v", c.Line, err)
			}
			ucs = append(ucs, UC{FileID: n, Holder: h})
		}
		m.Rebuild(ucs, at(t, c))
		return dumpLeases(m)
	case "nnholder":
		return m.RecoveryHolder(at(t, c))
	case "leases":
		return dumpLeases(m)
	}
	t.Fatalf("line %d: unknown command %q", c.Line, c.Cmd)
	return ""
}

func dumpLeases(m *Manager) string {
	var b strings.Builder
	for _, l := range m.Leases() {
		fmt.Fprintf(&b, "%s renewed=%s files=%v\n", l.Holder, secs(l.LastRenewed), l.FileIDs)
	}
	fmt.Fprintf(&b, "leases=%d files=%d", m.NumLeases(), m.NumFiles())
	return b.String()
}

func dumpExpired(ex []Expired) string {
	if len(ex) == 0 {
		return "expired: none"
	}
	var parts []string
	for _, e := range ex {
		parts = append(parts, fmt.Sprintf("%s%v", e.Holder, e.FileIDs))
	}
	return "expired: " + strings.Join(parts, " ")
}

func TestLimitsValidate(t *testing.T) {
	cases := []struct {
		l    Limits
		want bool // valid
	}{
		{Limits{}, true},
		{Limits{Soft: time.Second, Hard: time.Second}, true},
		{Limits{Hard: 30 * time.Second}, true}, // shorter than the default soft limit: soft follows it
		{Limits{Soft: -time.Second}, false},
		{Limits{Hard: -time.Second}, false},
	}
	for _, c := range cases {
		err := c.l.Validate()
		if (err == nil) != c.want {
			t.Errorf("%+v: Validate = %v, want valid=%v", c.l, err, c.want)
		}
		if err != nil && !errors.Is(err, ErrBadLimits) {
			t.Errorf("%+v: %v is not ErrBadLimits", c.l, err)
		}
	}
	if got := NewManager(Limits{Hard: 30 * time.Second}).Limits(); got != (Limits{Soft: 30 * time.Second, Hard: 30 * time.Second}) {
		t.Errorf("a hard limit below the soft one: limits %+v, want the soft limit cut to it", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewManager accepted a negative hard limit")
		}
	}()
	NewManager(Limits{Hard: -1})
}

func TestReassignNotHolder(t *testing.T) {
	m := NewManager(Limits{})
	m.AddLease("a", 1, epoch)
	if err := m.ReassignLease(1, "b", "c", epoch); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("reassign by a non-holder: %v", err)
	}
	if err := m.ReassignLease(2, "a", "c", epoch); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("reassign of a file without lease: %v", err)
	}
}

// TestManagerInvariants checks, over a long pseudo-random sequence, that the
// order list is sorted by renewal, that every index agrees with the leases,
// and that ExpiredHardLimit returns exactly the expired files over a cycle of
// bounded calls.
func TestManagerInvariants(t *testing.T) {
	m := NewManager(Limits{Soft: 10 * time.Second, Hard: 100 * time.Second})
	seed := uint64(12345)
	next := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int((seed >> 33) % uint64(n))
	}
	now := epoch
	for step := range 20000 {
		now = now.Add(time.Duration(next(3)) * time.Second)
		h := fmt.Sprintf("c%d", next(30))
		f := uint64(next(200))
		switch next(6) {
		case 0, 1:
			m.AddLease(h, f, now)
		case 2:
			m.RenewLease(h, now)
		case 3:
			m.RemoveLease(h, f)
		case 4:
			m.RemoveFile(f)
		case 5:
			if cur, ok := m.Holder(f); ok {
				if err := m.ReassignLease(f, cur, h, now); err != nil {
					t.Fatal(err)
				}
			}
		}
		if step%500 == 0 {
			checkInvariants(t, m, now)
		}
	}
}

func checkInvariants(t *testing.T, m *Manager, now time.Time) {
	t.Helper()
	infos := m.Leases()
	files := 0
	want := map[uint64]bool{}
	for i, l := range infos {
		if i > 0 && l.LastRenewed.Before(infos[i-1].LastRenewed) {
			t.Fatalf("leases out of order at %d: %v before %v", i, l.LastRenewed, infos[i-1].LastRenewed)
		}
		if len(l.FileIDs) == 0 {
			t.Fatalf("empty lease %s kept", l.Holder)
		}
		for _, f := range l.FileIDs {
			if h, _ := m.Holder(f); h != l.Holder {
				t.Fatalf("file %d: Holder=%q, listed under %q", f, h, l.Holder)
			}
			if now.Sub(l.LastRenewed) > m.Limits().Hard {
				want[f] = true
			}
		}
		files += len(l.FileIDs)
	}
	if files != m.NumFiles() || len(infos) != m.NumLeases() {
		t.Fatalf("counts: %d files / %d leases listed, NumFiles=%d NumLeases=%d", files, len(infos), m.NumFiles(), m.NumLeases())
	}
	// Bounded calls without releasing anything cycle over all expired files.
	got := map[uint64]int{}
	for range len(want)/3 + 2 {
		for _, e := range m.ExpiredHardLimit(now, 3) {
			for _, f := range e.FileIDs {
				if !want[f] {
					t.Fatalf("file %d returned but not expired", f)
				}
				got[f]++
			}
		}
	}
	for f := range want {
		if got[f] == 0 {
			t.Fatalf("expired file %d never returned (%d expired)", f, len(want))
		}
	}
}

func BenchmarkRenew(b *testing.B) {
	m := NewManager(Limits{})
	names := make([]string, 100000)
	for i := range names {
		names[i] = fmt.Sprintf("c%d", i)
		m.AddLease(names[i], uint64(i), epoch)
	}
	now := epoch
	for i := 0; b.Loop(); i++ {
		now = now.Add(time.Millisecond)
		m.RenewLease(names[i%len(names)], now)
	}
}

// BenchmarkExpiredPass measures a bounded monitor pass over a table where
// 1000 of 100000 leases expired.
func BenchmarkExpiredPass(b *testing.B) {
	m := NewManager(Limits{})
	for i := range 100000 {
		at := epoch.Add(time.Hour)
		if i < 1000 {
			at = epoch
		}
		m.AddLease(fmt.Sprintf("c%d", i), uint64(i), at)
	}
	now := epoch.Add(DefaultHardLimit + time.Second)
	for b.Loop() {
		if len(m.ExpiredHardLimit(now, 100)) == 0 {
			b.Fatal("nothing expired")
		}
	}
}
