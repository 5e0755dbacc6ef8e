package conf

import (
	"strings"
	"testing"
	"time"
)

// TestReaderCollectsEveryBadKey: good values read through, each bad one
// reads as zero and leaves an error naming its key.
func TestReaderCollectsEveryBadKey(t *testing.T) {
	c := Defaults().With(
		KeyValue{Key: "x.int", Value: "12"}, KeyValue{Key: "x.size", Value: "2m"},
		KeyValue{Key: "x.dur", Value: "1500ms"}, KeyValue{Key: "x.flag", Value: "true"},
		KeyValue{Key: "bad.int", Value: "twelve"}, KeyValue{Key: "bad.flag", Value: "perhaps"})
	var errs []error
	r := c.Reader(&errs)
	if v := r.Int("x.int"); v != 12 {
		t.Errorf("Int = %d", v)
	}
	if v := r.Size("x.size"); v != 2<<20 {
		t.Errorf("Size = %d", v)
	}
	if v := r.Duration("x.dur"); v != 1500*time.Millisecond {
		t.Errorf("Duration = %v", v)
	}
	if !r.Bool("x.flag") {
		t.Error("Bool = false")
	}
	if len(errs) != 0 {
		t.Fatalf("errors for good values: %v", errs)
	}
	if v := r.Int("bad.int"); v != 0 {
		t.Errorf("bad Int = %d", v)
	}
	if r.Bool("bad.flag") {
		t.Error("bad Bool = true")
	}
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "bad.int") || !strings.Contains(errs[1].Error(), "bad.flag") {
		t.Fatalf("errors = %v, want one naming each bad key", errs)
	}
}
