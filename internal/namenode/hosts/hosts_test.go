package hosts

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

func TestParsePlain(t *testing.T) {
	in := "# the first rack\n" +
		"dn1.example.com  dn2.example.com:9866\n" +
		"\t10.0.0.7 # a comment ends the line dn9\n" +
		"[2001:db8::7]:9866 2001:db8::8 \r\n" +
		"bad:port:x [zz]:1 host:70000 :9866\n"
	got, warns := ParsePlain([]byte(in))
	want := []Entry{
		{Host: "dn1.example.com"}, {Host: "dn2.example.com", Port: 9866}, {Host: "10.0.0.7"},
		{Host: "2001:db8::7", Port: 9866}, {Host: "2001:db8::8"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries:\n got %+v\nwant %+v", got, want)
	}
	if len(warns) != 4 {
		t.Fatalf("want 4 warnings (bad:port:x, [zz]:1, host:70000, :9866), got %q", warns)
	}
	for i, w := range []string{"bad:port:x", "[zz]:1", "host:70000", ":9866"} {
		if !strings.Contains(warns[i], w) {
			t.Errorf("warning %d %q does not name %q", i, warns[i], w)
		}
	}
}

func TestParseJSON(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Entry
		err      string
	}{
		{name: "empty", in: " \n"},
		{name: "array", in: `[
			{"hostName": "dn1"},
			{"hostName": "dn2", "port": 9866, "upgradeDomain": "ud1"},
			{"hostName": "10.0.0.3", "adminState": "DECOMMISSIONED"},
			{"hostName": "dn4", "adminState": "IN_MAINTENANCE", "maintenanceExpireTimeInMS": 1767225600000}
		]`, want: []Entry{
			{Host: "dn1", AdminState: StateNormal, MaintenanceExpire: math.MaxInt64},
			{Host: "dn2", Port: 9866, UpgradeDomain: "ud1", AdminState: StateNormal, MaintenanceExpire: math.MaxInt64},
			{Host: "10.0.0.3", AdminState: StateDecommissioned, MaintenanceExpire: math.MaxInt64},
			{Host: "dn4", AdminState: StateInMaintenance, MaintenanceExpire: 1767225600000},
		}},
		{name: "legacy", in: `{"hostName": "dn1"} {"hostName": "dn2", "adminState": "NORMAL"}`, want: []Entry{
			{Host: "dn1", AdminState: StateNormal, MaintenanceExpire: math.MaxInt64},
			{Host: "dn2", AdminState: StateNormal, MaintenanceExpire: math.MaxInt64},
		}},
		{name: "unknown field", in: `[{"hostName": "dn1", "rack": "/r1"}]`, err: `unknown field "rack"`},
		{name: "no host", in: `[{"port": 1}]`, err: "entry 1 has no hostName"},
		{name: "bad state", in: `[{"hostName": "a"}, {"hostName": "b", "adminState": "DECOMMISSION_INPROGRESS"}]`,
			err: `entry 2 (b): adminState "DECOMMISSION_INPROGRESS"`},
		{name: "bad port", in: `[{"hostName": "a", "port": 65536}]`, err: "port 65536"},
		{name: "trailing", in: `[{"hostName": "a"}] x`, err: "after the array"},
		{name: "truncated", in: `[{"hostName": "a"}`, err: "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseJSON([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrSyntax) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func fakeDNS(host string) ([]string, error) {
	switch host {
	case "dn1":
		return []string{"10.0.0.1"}, nil
	case "dn2":
		return []string{"10.0.0.2", "::ffff:10.0.0.22"}, nil
	}
	return nil, errors.New("no such host")
}

func node(ip string, port int) blockmgmt.DatanodeID {
	return blockmgmt.DatanodeID{UUID: "u-" + ip, IPAddr: ip, Hostname: "dn-claimed", XferPort: port}
}

func TestPlainPolicy(t *testing.T) {
	inc, _ := ParsePlain([]byte("dn1 dn2:9866 10.0.0.3 ghost"))
	exc, _ := ParsePlain([]byte("dn2 10.0.0.3:1"))
	p, warns := Resolve(Files{Include: inc, Exclude: exc}, fakeDNS)
	if len(warns) != 1 || !strings.Contains(warns[0], "ghost") {
		t.Fatalf("warnings %q: want one naming ghost", warns)
	}
	for _, tc := range []struct {
		ip   string
		port int
		want blockmgmt.HostVerdict
	}{
		{"10.0.0.1", 1, blockmgmt.HostVerdict{}},
		{"10.0.0.2", 9866, blockmgmt.HostVerdict{Decommission: true}},
		{"10.0.0.22", 9866, blockmgmt.HostVerdict{Decommission: true}}, // second address of dn2
		{"10.0.0.2", 9867, blockmgmt.HostVerdict{Disallowed: true, Decommission: true}},
		{"10.0.0.3", 1, blockmgmt.HostVerdict{Decommission: true}},
		{"10.0.0.3", 2, blockmgmt.HostVerdict{}},
		{"10.0.0.9", 1, blockmgmt.HostVerdict{Disallowed: true}},
		{"::ffff:10.0.0.1", 1, blockmgmt.HostVerdict{}},
		{"not-an-ip", 1, blockmgmt.HostVerdict{Disallowed: true}},
	} {
		if got := p.Verdict(node(tc.ip, tc.port)); got != tc.want {
			t.Errorf("%s:%d: got %+v, want %+v", tc.ip, tc.port, got, tc.want)
		}
	}
	// An empty include list lets everyone in.
	open, _ := Resolve(Files{Exclude: exc}, fakeDNS)
	if v := open.Verdict(node("10.9.9.9", 1)); v.Disallowed {
		t.Fatalf("empty include list refused a node: %+v", v)
	}
	if got := p.Listed(); len(got) != 3 || got[0].Host != "10.0.0.1" || got[1].Port != 9866 {
		t.Fatalf("Listed = %+v", got)
	}
	if !p.Excluded("10.0.0.3", 1) || p.Excluded("10.0.0.1", 1) {
		t.Fatal("Excluded wrong")
	}
}

func TestCombinedPolicy(t *testing.T) {
	nodes, err := ParseJSON([]byte(`[
		{"hostName": "dn1"},
		{"hostName": "dn2", "port": 9866, "adminState": "DECOMMISSIONED"},
		{"hostName": "10.0.0.3", "adminState": "IN_MAINTENANCE", "maintenanceExpireTimeInMS": 1767225600000},
		{"hostName": "10.0.0.4", "adminState": "IN_MAINTENANCE"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	p, warns := Resolve(Files{Combined: true, Nodes: nodes}, fakeDNS)
	if len(warns) != 0 {
		t.Fatal(warns)
	}
	forever := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ip   string
		port int
		want blockmgmt.HostVerdict
	}{
		{"10.0.0.1", 5, blockmgmt.HostVerdict{}},
		{"10.0.0.2", 9866, blockmgmt.HostVerdict{Decommission: true}},
		{"10.0.0.2", 5, blockmgmt.HostVerdict{Disallowed: true}},
		{"10.0.0.3", 5, blockmgmt.HostVerdict{MaintenanceUntil: time.UnixMilli(1767225600000)}},
		{"10.0.0.4", 5, blockmgmt.HostVerdict{MaintenanceUntil: forever}},
		{"10.0.0.5", 5, blockmgmt.HostVerdict{Disallowed: true}},
	} {
		if got := p.Verdict(node(tc.ip, tc.port)); !got.MaintenanceUntil.Equal(tc.want.MaintenanceUntil) ||
			got.Disallowed != tc.want.Disallowed || got.Decommission != tc.want.Decommission {
			t.Errorf("%s:%d: got %+v, want %+v", tc.ip, tc.port, got, tc.want)
		}
	}
	// No NORMAL entry: every node may register.
	only, _ := ParseJSON([]byte(`[{"hostName": "10.0.0.3", "adminState": "DECOMMISSIONED"}]`))
	q, _ := Resolve(Files{Combined: true, Nodes: only}, nil)
	if v := q.Verdict(node("10.0.0.8", 1)); v.Disallowed {
		t.Fatalf("no in-service entry, yet %+v", v)
	}
	if v := q.Verdict(node("10.0.0.3", 1)); !v.Decommission || v.Disallowed {
		t.Fatalf("got %+v", v)
	}
}

// Bounds for AllocBound: the parsers keep a few copies of their input.
const (
	allocPerByte = 64
	allocFixed   = 64 << 10
)

func FuzzParsePlain(f *testing.F) {
	for _, s := range []string{"dn1 dn2:9866\n# c\n10.0.0.1", "[::1]:1 ::1 :: [", "a:b:c #x y\n\tz:0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var es []Entry
		testtool.AllocBound(t, len(data), allocPerByte, allocFixed, func() { es, _ = ParsePlain(data) })
		for _, e := range es {
			if e.Host == "" || e.Port < 0 || e.Port > 65535 {
				t.Fatalf("bad entry %+v from %q", e, data)
			}
			if strings.ContainsAny(e.Host, " \t\n#") {
				t.Fatalf("entry %+v holds a separator", e)
			}
		}
	})
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`[{"hostName":"a","port":1,"adminState":"IN_MAINTENANCE","maintenanceExpireTimeInMS":5}]`,
		`{"hostName":"a"}{"hostName":"b"}`, `[`, `[{}]`, `[{"hostName":"a","x":1}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var es []Entry
		var err error
		testtool.AllocBound(t, len(data), allocPerByte, allocFixed, func() { es, err = ParseJSON(data) })
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error outside the vocabulary: %v", err)
			}
			return
		}
		for _, e := range es {
			if e.Host == "" || e.Port < 0 || e.Port > 65535 {
				t.Fatalf("bad entry %+v", e)
			}
			switch e.AdminState {
			case StateNormal, StateDecommissioned, StateInMaintenance:
			default:
				t.Fatalf("bad state in %+v", e)
			}
		}
		p, _ := Resolve(Files{Combined: true, Nodes: es}, nil)
		p.Verdict(node("10.0.0.1", 1))
	})
}
