package security

import (
	"strings"
	"testing"
)

func TestShortName(t *testing.T) {
	const realm = "EXAMPLE.COM"
	rules := `
		RULE:[2:$1@$0](nn@.*EXAMPLE.COM)s/.*/hdfs/
		RULE:[2:$1@$0](dn@.*EXAMPLE.COM)s/.*/hdfs/
		RULE:[1:$1@$0](.*@OTHER.ORG)s/@.*//L
		RULE:[1:$1](svc_.*)s/svc_(.*)/$1-x/g
		DEFAULT`
	rs, err := ParseRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want, err string }{
		{"alice@EXAMPLE.COM", "alice", ""},
		{"nn/host.example.com@EXAMPLE.COM", "hdfs", ""},
		{"dn/h2@EXAMPLE.COM", "hdfs", ""},
		{"jn/h2@EXAMPLE.COM", "jn", ""},
		{"Bob@OTHER.ORG", "bob", ""},
		{"svc_a@EXAMPLE.COM", "a-x", ""},
		{"carol@ELSEWHERE", "", "No rules applied to carol@ELSEWHERE"},
		{"x@A@B", "", "Malformed Kerberos name"},
		{"plain", "plain", ""},
	} {
		got, err := rs.ShortName(tc.in, realm)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ShortName(%q) = %q, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ShortName(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestParseRulesErrors(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"RULE:[1:$1]junk", "Invalid rule: junk"},
		{"NOTARULE", "Invalid rule: NOTARULE"},
		{"RULE:[:$1]", "bad component count"},
		{"RULE:[1:$1](a(b)", "bad regexp"},
		{"RULE:[1:$1]([)", "bad regexp"},
	} {
		_, err := ParseRules(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseRules(%q) = %v, want error %q", tc.in, err, tc.err)
		}
	}
	rs, err := ParseRules("RULE:[1:$1@$0](.*)s/@.*//\nRULE:[1:$5]")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs[1:].ShortName("a@R", "R"); err == nil || !strings.Contains(err.Error(), "outside of the valid range 0 to 1") {
		t.Errorf("bad index: %v", err)
	}
	if _, err := (Rules{mustRule(t, "RULE:[1:$1@$0]")}).ShortName("a@R", "R"); err == nil || !strings.Contains(err.Error(), "Non-simple name a@R") {
		t.Errorf("non-simple: %v", err)
	}
}

func mustRule(t *testing.T, s string) Rule {
	t.Helper()
	rs, err := ParseRules(s)
	if err != nil || len(rs) != 1 {
		t.Fatalf("ParseRules(%q) = %v, %v", s, rs, err)
	}
	return rs[0]
}

func FuzzParseRules(f *testing.F) {
	f.Add("DEFAULT", "alice@R")
	f.Add("RULE:[2:$1@$0](nn@.*)s/.*/hdfs/g/L DEFAULT", "nn/h@R")
	f.Add("RULE:[1:$1$2]", "a/b@R")
	f.Fuzz(func(t *testing.T, rules, name string) {
		rs, err := ParseRules(rules)
		if err != nil {
			return
		}
		if len(rs) == 0 {
			t.Fatal("no rules and no error")
		}
		short, err := rs.ShortName(name, "R")
		if err == nil && strings.ContainsAny(short, "/@") && strings.ContainsAny(name, "/@") {
			t.Fatalf("ShortName(%q) = %q: not a simple name", name, short)
		}
	})
}
