package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// jmxDoc is /jmx decoded; each bean kept raw so key order can be checked.
type jmxDoc struct {
	Beans   []json.RawMessage `json:"beans"`
	Result  string            `json:"result"`
	Message string            `json:"message"`
}

func decodeJMX(t *testing.T, body string) jmxDoc {
	t.Helper()
	var d jmxDoc
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, body)
	}
	return d
}

func beanNames(t *testing.T, d jmxDoc) []string {
	t.Helper()
	names := []string{}
	for _, b := range d.Beans {
		var x struct{ Name string }
		if err := json.Unmarshal(b, &x); err != nil {
			t.Fatal(err)
		}
		names = append(names, x.Name)
	}
	return names
}

const (
	beanFS   = "Hadoop:service=NameNode,name=FSNamesystem"
	beanRPC  = "Hadoop:service=NameNode,name=RpcActivityForPort8020"
	beanJVM  = "Hadoop:service=NameNode,name=JvmMetrics"
	beanDN   = "Hadoop:service=DataNode,name=DataNodeInfo"
	beanOS   = "java.lang:type=OperatingSystem"
	beanMore = "Hadoop:service=NameNode,name=NameNodeInfo,sub=extra"
)

func jmxServer(t *testing.T) *testServer {
	ts := startServer(t, Config{})
	ts.AddBean(Bean{Name: beanFS, ModelerType: "FSNamesystem", Attrs: func() []Attr {
		return []Attr{
			{"tag.HAState", "active"},
			{"CapacityTotal", int64(1) << 40},
			{"BlocksTotal", 17},
			{"FSState", "Operational"},
		}
	}})
	ts.AddBean(Bean{Name: beanRPC, ModelerType: "RpcActivityForPort8020", Attrs: func() []Attr {
		return []Attr{{"RpcQueueTimeAvgTime", 0.25}, {"CallQueueLength", 0}}
	}})
	ts.AddBean(Bean{Name: beanJVM, ModelerType: "JvmMetrics"})
	ts.AddBean(Bean{Name: beanDN, ModelerType: "DataNodeInfo", Attrs: func() []Attr {
		return []Attr{{"Version", "3.4.1"}}
	}})
	ts.AddBean(Bean{Name: beanOS, ModelerType: "OperatingSystem", Attrs: func() []Attr {
		return []Attr{{"AvailableProcessors", 2}}
	}})
	ts.AddBean(Bean{Name: beanMore, ModelerType: "NameNodeInfo"})
	return ts.start()
}

func TestJMXAll(t *testing.T) {
	ts := jmxServer(t)
	code, hdr, body := ts.get(t, "/jmx")
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	if got := hdr.Get("Content-Type"); got != "application/json; charset=utf8" {
		t.Errorf("Content-Type = %q", got)
	}
	if hdr.Get("Access-Control-Allow-Origin") != "*" || hdr.Get("Access-Control-Allow-Methods") != "GET" {
		t.Errorf("CORS headers missing: %v", hdr)
	}
	if !strings.HasPrefix(body, "{\n  \"beans\": [\n    {\n      \"name\": ") {
		t.Errorf("not indented by two spaces:\n%s", body)
	}
	d := decodeJMX(t, body)
	want := []string{beanFS, beanRPC, beanJVM, beanDN, beanOS, beanMore}
	if got := beanNames(t, d); !slices.Equal(got, want) {
		t.Fatalf("beans = %q, want %q", got, want)
	}
	if got, want := objectKeys(t, d.Beans[0]), []string{"name", "modelerType", "tag.HAState", "CapacityTotal", "BlocksTotal", "FSState"}; !slices.Equal(got, want) {
		t.Errorf("FSNamesystem keys = %q, want %q", got, want)
	}
	if got, want := objectKeys(t, d.Beans[2]), []string{"name", "modelerType"}; !slices.Equal(got, want) {
		t.Errorf("JvmMetrics keys = %q, want %q", got, want)
	}
	var fs struct {
		ModelerType   string `json:"modelerType"`
		CapacityTotal int64
		FSState       string
	}
	if err := json.Unmarshal(d.Beans[0], &fs); err != nil {
		t.Fatal(err)
	}
	if fs.ModelerType != "FSNamesystem" || fs.CapacityTotal != 1<<40 || fs.FSState != "Operational" {
		t.Errorf("FSNamesystem = %+v", fs)
	}
}

func TestJMXQuery(t *testing.T) {
	ts := jmxServer(t)
	tests := []struct {
		qry  string
		want []string
	}{
		{"*:*", []string{beanFS, beanRPC, beanJVM, beanDN, beanOS, beanMore}},
		{"", []string{beanFS, beanRPC, beanJVM, beanDN, beanOS, beanMore}},
		{beanFS, []string{beanFS}},
		{"Hadoop:name=FSNamesystem,service=NameNode", []string{beanFS}}, // order does not matter
		{"Hadoop:service=NameNode", []string{}},                         // exact key set without ,*
		{"Hadoop:service=NameNode,*", []string{beanFS, beanRPC, beanJVM, beanMore}},
		{"Hadoop:*,service=NameNode", []string{beanFS, beanRPC, beanJVM, beanMore}},
		{"Hadoop:service=NameNode,name=*", []string{beanFS, beanRPC, beanJVM}},
		{"Hadoop:service=*,name=*Info", []string{beanDN}},
		{"Hadoop:service=NameNode,name=RpcActivityForPort????", []string{beanRPC}},
		{"Hadoop:service=NameNode,name=RpcActivityForPort???", []string{}},
		{"Had*:service=DataNode,*", []string{beanDN}},
		{"java.lang:*", []string{beanOS}},
		{"java.*:type=*", []string{beanOS}},
		{"?ava.lang:type=OperatingSystem", []string{beanOS}},
		{"*:type=OperatingSystem", []string{beanOS}},
		{"*:*,name=FSNamesystem", []string{beanFS}},
		{"Hadoop:service=NameNode,name=FSNamesystem,*", []string{beanFS}},
		{"Hadoop:service=NameNode,name=FSNamesystem,extra=1,*", []string{}},
		{"Hadoop:service=NameNode,name=NameNodeInfo", []string{}},
		{"Hadoop:service=NameNode,name=NameNodeInfo,*", []string{beanMore}},
		{"NoSuchDomain:*", []string{}},
		{"hadoop:*", []string{}}, // case-sensitive
	}
	for _, tt := range tests {
		t.Run(tt.qry, func(t *testing.T) {
			code, _, body := ts.get(t, "/jmx?qry="+url.QueryEscape(tt.qry))
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			if got := beanNames(t, decodeJMX(t, body)); !slices.Equal(got, tt.want) {
				t.Errorf("beans = %q, want %q", got, tt.want)
			}
		})
	}
	// No match is the empty list, not a missing key.
	_, _, body := ts.get(t, "/jmx?qry=NoSuchDomain:*")
	if !strings.Contains(body, `"beans": []`) {
		t.Errorf("no-match body = %s", body)
	}
}

func TestJMXQueryMalformed(t *testing.T) {
	ts := jmxServer(t)
	tests := []struct{ qry, msg string }{
		{"Hadoop", "no colon"},
		{"Hadoop:", "empty key property list"},
		{"Hadoop:=NameNode", "empty key"},
		{"Hadoop:service", "has no '='"},
		{"Hadoop:service=NameNode,,name=x", "has no '='"},
		{"Hadoop:service=NameNode,service=DataNode", "duplicate key \"service\""},
		{"Hadoop:service=", "empty value"},
		{"Hadoop:a=b=c", "invalid character in value"},
		{"Hadoop:k*=v", "invalid character in key"},
		{"Hadoop:*,*", "more than once"},
	}
	for _, tt := range tests {
		t.Run(tt.qry, func(t *testing.T) {
			code, hdr, body := ts.get(t, "/jmx?qry="+url.QueryEscape(tt.qry))
			if code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", code, body)
			}
			if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q", ct)
			}
			d := decodeJMX(t, body)
			if d.Result != "ERROR" || !strings.Contains(d.Message, tt.msg) || !strings.Contains(d.Message, tt.qry) {
				t.Errorf("error = %+v, want message naming %q and %q", d, tt.qry, tt.msg)
			}
		})
	}
}

func TestJMXGet(t *testing.T) {
	ts := jmxServer(t)
	tests := []struct {
		get    string
		code   int
		keys   []string // of the single bean, on 200
		errMsg string   // on error
	}{
		{beanFS + "::CapacityTotal", 200, []string{"name", "modelerType", "CapacityTotal"}, ""},
		{beanFS + "::FSState", 200, []string{"name", "modelerType", "FSState"}, ""},
		{beanFS + "::modelerType", 200, []string{"name", "modelerType"}, ""},
		{"Hadoop:name=FSNamesystem,service=NameNode::BlocksTotal", 200, []string{"name", "modelerType", "BlocksTotal"}, ""},
		{beanFS + "::NoSuchAttr", 404, nil, `has no attribute "NoSuchAttr"`},
		{"Hadoop:service=NameNode,name=Nope::X", 404, nil, "no bean named"},
		{beanFS, 400, nil, "BEANNAME::ATTRIBUTE"},
		{beanFS + "::", 400, nil, "BEANNAME::ATTRIBUTE"},
		{"::CapacityTotal", 400, nil, "BEANNAME::ATTRIBUTE"},
		{beanFS + "::a::b", 400, nil, "BEANNAME::ATTRIBUTE"},
		{"Hadoop::X", 400, nil, "no colon"},
		{"", 400, nil, "BEANNAME::ATTRIBUTE"},
	}
	for _, tt := range tests {
		t.Run(tt.get, func(t *testing.T) {
			code, _, body := ts.get(t, "/jmx?get="+url.QueryEscape(tt.get))
			if code != tt.code {
				t.Fatalf("status %d, want %d: %s", code, tt.code, body)
			}
			d := decodeJMX(t, body)
			if tt.code != 200 {
				if d.Result != "ERROR" || !strings.Contains(d.Message, tt.errMsg) {
					t.Errorf("error = %+v, want message containing %q", d, tt.errMsg)
				}
				return
			}
			if len(d.Beans) != 1 {
				t.Fatalf("got %d beans: %s", len(d.Beans), body)
			}
			if got := objectKeys(t, d.Beans[0]); !slices.Equal(got, tt.keys) {
				t.Errorf("keys = %q, want %q", got, tt.keys)
			}
		})
	}
	// get wins over qry, as in Hadoop.
	_, _, body := ts.get(t, "/jmx?qry=*:*&get="+url.QueryEscape(beanDN+"::Version"))
	if got := beanNames(t, decodeJMX(t, body)); !slices.Equal(got, []string{beanDN}) {
		t.Errorf("get with qry: beans = %q", got)
	}
}

func TestJMXNestedValues(t *testing.T) {
	cycle := []any{nil}
	cycle[0] = cycle
	var logs testtool.Buffer
	ts := startServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ts.AddBean(Bean{Name: "Hadoop:service=NameNode,name=Nested", ModelerType: "Nested", Attrs: func() []Attr {
		return []Attr{
			{"Zeta", 1},
			{"Ints", []any{int32(-3), uint64(1) << 63, int64(-1) << 63, false}},
			{"Ordered", []Attr{{"z", 1}, {"a", []Attr{{"y", true}, {"b", nil}}}, {"m", "x"}}},
			{"Map", map[string]any{"b": 2, "a": []Attr{{"q", 1}, {"p", 2}}}},
			{"List", []any{1, "two", []Attr{{"k", 3}}, map[string]any{"x": 1.5}}},
			{"Strings", []string{"<a>", "&"}},
			{"NaN", math.NaN()},
			{"Inf", math.Inf(-1)},
			{"F32", float32(0.1)},
			{"Bad", make(chan int)}, // not encodable: left out
			{"Cycle", cycle},        // too deep: left out
			{"Alpha", "last"},
		}
	}})
	ts.start()
	_, _, body := ts.get(t, "/jmx")
	d := decodeJMX(t, body)
	if len(d.Beans) != 1 {
		t.Fatalf("beans: %s", body)
	}
	b := d.Beans[0]
	if l := logs.String(); !strings.Contains(l, "attribute=Bad") || !strings.Contains(l, "attribute=Cycle") {
		t.Errorf("unencodable attribute not logged: %q", l)
	}
	if got, want := objectKeys(t, b), []string{"name", "modelerType", "Zeta", "Ints", "Ordered", "Map", "List", "Strings", "NaN", "Inf", "F32", "Alpha"}; !slices.Equal(got, want) {
		t.Errorf("keys = %q, want %q", got, want)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	if got, want := objectKeys(t, fields["Ordered"]), []string{"z", "a", "m"}; !slices.Equal(got, want) {
		t.Errorf("Ordered keys = %q, want %q", got, want)
	}
	var ordered map[string]json.RawMessage
	json.Unmarshal(fields["Ordered"], &ordered)
	if got, want := objectKeys(t, ordered["a"]), []string{"y", "b"}; !slices.Equal(got, want) {
		t.Errorf("Ordered.a keys = %q, want %q", got, want)
	}
	if got, want := objectKeys(t, fields["Map"]), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("Map keys = %q, want %q", got, want)
	}
	var m map[string]json.RawMessage
	json.Unmarshal(fields["Map"], &m)
	if got, want := objectKeys(t, m["a"]), []string{"q", "p"}; !slices.Equal(got, want) {
		t.Errorf("Map.a keys = %q, want %q", got, want)
	}
	var list []any
	if err := json.Unmarshal(fields["List"], &list); err != nil {
		t.Fatal(err)
	}
	wantList := []any{1.0, "two", map[string]any{"k": 3.0}, map[string]any{"x": 1.5}}
	if !reflect.DeepEqual(list, wantList) {
		t.Errorf("List = %#v, want %#v", list, wantList)
	}
	for k, want := range map[string]string{
		"Strings": `["<a>","&"]`,
		"Ints":    `[-3,9223372036854775808,-9223372036854775808,false]`,
		"NaN":     `"NaN"`,
		"Inf":     `"-Infinity"`,
		"F32":     `0.1`,
	} {
		var compact bytes.Buffer
		if err := json.Compact(&compact, fields[k]); err != nil {
			t.Fatal(err)
		}
		if compact.String() != want {
			t.Errorf("%s = %s, want %s", k, compact.String(), want)
		}
	}
}

func TestJMXMethodNotAllowed(t *testing.T) {
	ts := jmxServer(t)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		code, hdr, _ := ts.do(t, m, "/jmx")
		if code != http.StatusMethodNotAllowed {
			t.Errorf("%s /jmx: status %d, want 405", m, code)
		}
		if hdr.Get("X-Frame-Options") != "SAMEORIGIN" {
			t.Errorf("%s /jmx: security headers missing on 405", m)
		}
	}
}

func TestAddBeanPanics(t *testing.T) {
	ts := startServer(t, Config{})
	ts.AddBean(Bean{Name: beanFS})
	for _, name := range []string{beanFS, "NoColon", "Hadoop:name=*", "*:name=x", "Hadoop:*"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AddBean(%q) did not panic", name)
				}
			}()
			ts.AddBean(Bean{Name: name})
		}()
	}
}

func BenchmarkJMXAll(b *testing.B) {
	s, err := New(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(b.Context())
	for i := range 50 {
		s.AddBean(Bean{Name: fmt.Sprintf("Hadoop:service=NameNode,name=Bean%d", i), ModelerType: "B", Attrs: func() []Attr {
			attrs := make([]Attr, 20)
			for j := range attrs {
				attrs[j] = Attr{fmt.Sprintf("Attr%d", j), int64(j) * 1000}
			}
			return attrs
		}})
	}
	h := s.srv.Handler
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/jmx", nil))
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}
