package failpoint

import (
	"errors"
	"strings"
	"testing"
)

func env(v string) func(string) string {
	return func(k string) string {
		if k == EnvVar {
			return v
		}
		return ""
	}
}

func TestFromEnvArmsOnlyAKnownNameForThisParent(t *testing.T) {
	tests := []struct {
		name, value string
		armed       bool
		errPart     string
	}{
		{"unset", "", false, ""},
		{"armed", "dn-upgrade-after-link@4242", true, ""},
		{"other parent", "dn-upgrade-after-link@4243", false, "parent is 4242"},
		{"unknown name", "dn-upgrade-after-lunch@4242", false, "names no failpoint"},
		{"no pid", "dn-upgrade-after-link", false, "not <name>@<parent pid>"},
		{"bad pid", "dn-upgrade-after-link@x", false, "not <name>@<parent pid>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := FromEnv(env(tt.value), 4242)
			if (f != nil) != tt.armed {
				t.Fatalf("armed = %v, want %v (err %v)", f != nil, tt.armed, err)
			}
			if tt.errPart == "" && err != nil || tt.errPart != "" && (err == nil || !strings.Contains(err.Error(), tt.errPart)) {
				t.Fatalf("err = %v, want one containing %q", err, tt.errPart)
			}
			if f != nil {
				// Any other failpoint passes; the armed one kills the
				// process, which the process tests exercise.
				if err := f.Hit(DNUpgradeAfterRename); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestErrorAndNil(t *testing.T) {
	var none Func
	if err := none.Hit(NNUpgradeAfterImage); err != nil {
		t.Fatal(err)
	}
	f := Error(NNUpgradeAfterImage)
	if err := f.Hit(NNUpgradeAfterRename); err != nil {
		t.Fatal(err)
	}
	if err := f.Hit(NNUpgradeAfterImage); !errors.Is(err, ErrInjected) {
		t.Fatalf("got %v", err)
	}
}

func TestNamesAreDistinctAndPrefixed(t *testing.T) {
	seen := map[Name]bool{}
	for _, n := range Names() {
		if seen[n] {
			t.Errorf("%s listed twice", n)
		}
		seen[n] = true
		if !strings.HasPrefix(string(n), "nn-") && !strings.HasPrefix(string(n), "dn-") {
			t.Errorf("%s: names start with the role, nn- or dn-", n)
		}
	}
}
