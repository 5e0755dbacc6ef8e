package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// Bounds of AllocBound for the query decoders: a few times the input plus
// a fixed amount for the answer. A parser that allocated by a count it
// read (say, a pre-sized slice of key properties) would show at once.
const (
	allocPerByte = 64
	allocFixed   = 256 << 10
)

func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{
		"*:*", "Hadoop:service=NameNode,name=FSNamesystem", "Hadoop:service=NameNode,*",
		"H?d*:name=F*", "d:", "nocolon", "d:a=b,a=c", "d:=x", "d:*,*", ":a=b", "d:a=b=c",
		"d:a=é,b=\x00", "a:b:c=d",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var p objectName
		var err error
		testtool.AllocBound(t, len(s), allocPerByte, allocFixed, func() { p, err = parseObjectName(s, true) })
		if err != nil {
			if !strings.HasPrefix(err.Error(), "web: malformed ObjectName ") {
				t.Fatalf("error without prefix: %v", err)
			}
			if _, err2 := parseObjectName(s, false); err2 == nil {
				t.Fatalf("%q: rejected as pattern but accepted as name", s)
			}
			return
		}
		wild := p.anyKey || strings.ContainsAny(p.domain, "*?")
		for _, pp := range p.props {
			wild = wild || strings.ContainsAny(pp.value, "*?")
		}
		n, err := parseObjectName(s, false)
		if wild {
			if err == nil {
				t.Fatalf("%q has wildcards but parses as a name", s)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q parses as a pattern without wildcards but not as a name: %v", s, err)
		}
		if !p.matches(n) {
			t.Fatalf("pattern %q does not match its own name", s)
		}
	})
}

func FuzzJMXQuery(f *testing.F) {
	f.Add("*:*", "", false)
	f.Add("Hadoop:service=NameNode,*", "", false)
	f.Add("", beanFS+"::CapacityTotal", true)
	f.Add("", beanFS+"::Nope", true)
	f.Add("", "x", true)
	f.Add("bad", "a::b::c", true)
	f.Add("*:name=*,*", "*:*::Nested", true)
	s, err := New(Config{Addr: "127.0.0.1:0", Role: "NameNode"})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close(context.Background())
	s.AddBean(Bean{Name: beanFS, ModelerType: "FSNamesystem", Attrs: func() []Attr {
		return []Attr{{"CapacityTotal", 1}, {"Nested", []Attr{{"a", []any{1, map[string]any{"b": "c"}}}}}}
	}})
	s.AddBean(Bean{Name: beanOS, ModelerType: "OperatingSystem"})
	h := s.srv.Handler
	f.Fuzz(func(t *testing.T, qry, get string, useGet bool) {
		v := url.Values{"qry": {qry}}
		if useGet {
			v.Set("get", get)
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/jmx?"+v.Encode(), nil)
		// Query parsing and the answer: in proportion to the query, plus
		// the two beans' document and the recorder.
		testtool.AllocBound(t, len(qry)+len(get), allocPerByte, allocFixed, func() { h.ServeHTTP(rec, req) })
		if rec.Code >= 500 {
			t.Fatalf("qry=%q get=%q: status %d: %s", qry, get, rec.Code, rec.Body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("qry=%q get=%q: invalid JSON: %s", qry, get, rec.Body)
		}
	})
}

// FuzzWriteString checks the string encoder against encoding/json.
func FuzzWriteString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a>&\"\\", "\x00\x01\b\f\n\r\t\x1f\x7f", "é\u2028\u2029", "\xff\xfe", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got, want bytes.Buffer
		writeString(&got, s)
		if err := marshalTo(&want, s); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("writeString(%q) = %s, encoding/json gives %s", s, got.String(), want.String())
		}
	})
}
