package web

import (
	"errors"
	"strings"
	"testing"
)

func TestParseObjectName(t *testing.T) {
	tests := []struct {
		in      string
		pattern bool
		err     string // "" for success
		domain  string
		props   []property
		anyKey  bool
	}{
		{in: "Hadoop:service=NameNode,name=FSNamesystem", domain: "Hadoop",
			props: []property{{"service", "NameNode"}, {"name", "FSNamesystem"}}},
		{in: ":a=b", domain: "", props: []property{{"a", "b"}}},
		{in: "d:a=b c", domain: "d", props: []property{{"a", "b c"}}},
		{in: "d:a=x:y", domain: "d", props: []property{{"a", "x:y"}}},
		{in: "*:*", pattern: true, domain: "*", anyKey: true},
		{in: "H?:a=*,*", pattern: true, domain: "H?", props: []property{{"a", "*"}}, anyKey: true},
		{in: "d:*,a=b", pattern: true, domain: "d", props: []property{{"a", "b"}}, anyKey: true},
		{in: "no colon", err: "no colon"},
		{in: "d:", err: "empty key property list"},
		{in: "d:=v", err: "empty key"},
		{in: "d:k", err: "has no '='"},
		{in: "d:k=v,", err: "has no '='"},
		{in: "d:k=", err: "empty value"},
		{in: "d:k=v,k=w", err: "duplicate key"},
		{in: "d:k=a=b", err: "invalid character in value"},
		{in: "d:k?=v", pattern: true, err: "invalid character in key"},
		{in: "d:k=\"v\"", err: "invalid character in value"},
		{in: "d:*,*", pattern: true, err: "more than once"},
		{in: "d*:k=v", err: "wildcard in the domain"},
		{in: "d:k=v*", err: "wildcard in the value"},
		{in: "d:*", err: "'*' in a name that is not a pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			n, err := parseObjectName(tt.in, tt.pattern)
			if tt.err != "" {
				if err == nil || !errors.Is(err, errBadPattern) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want errBadPattern containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n.domain != tt.domain || n.anyKey != tt.anyKey || len(n.props) != len(tt.props) {
				t.Fatalf("got %+v", n)
			}
			for i, p := range tt.props {
				if n.props[i] != p || n.index[p.key] != p.value {
					t.Errorf("prop %d = %+v, want %+v", i, n.props[i], p)
				}
			}
		})
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything", true},
		{"?", "", false},
		{"?", "x", true},
		{"?", "é", true}, // one character, two bytes
		{"a*c", "abbbc", true},
		{"a*c", "abbbd", false},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "acb", false},
		{"*Info", "DataNodeInfo", true},
		{"*Info", "DataNodeInfoX", false},
		{"Port????", "Port8020", true},
		{"Port????", "Port802", false},
		{"**", "x", true},
		{"a", "a", true},
		{"a", "A", false},
		{"*a*a*a*a*b", strings.Repeat("a", 200), false},
	}
	for _, tt := range tests {
		if got := glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestPatternMatches(t *testing.T) {
	name := func(s string) objectName {
		n, err := parseObjectName(s, false)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"a:x=1,y=2", "a:y=2,x=1", true},
		{"a:x=1", "a:x=1,y=2", false},
		{"a:x=1,*", "a:x=1,y=2", true},
		{"a:x=1,y=2,*", "a:x=1", false},
		{"a:x=?", "a:x=1", true},
		{"a:x=?", "a:x=12", false},
		{"*:*", "any:k=v", true},
		{"?:*", "ab:k=v", false},
	}
	for _, tt := range tests {
		p, err := parseObjectName(tt.pattern, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.matches(name(tt.name)); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}
