package ha

import (
	"errors"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		s     State
		c     Category
		stale bool
		ok    bool
	}{
		{Active, Write, false, true},
		{Active, Read, false, true},
		{Active, Journal, false, true},
		{Standby, Unchecked, false, true},
		{Standby, Read, false, false},
		{Standby, Read, true, true},
		{Standby, Write, true, false},
		{Standby, Checkpoint, false, false},
		{Standby, Journal, false, false},
		{Initializing, Read, true, false},
		{Initializing, Unchecked, false, true},
		{Stopping, Write, false, false},
	} {
		err := Check(tc.s, tc.c, tc.stale)
		if (err == nil) != tc.ok {
			t.Errorf("Check(%v, %v, stale=%v) = %v, want ok=%v", tc.s, tc.c, tc.stale, err, tc.ok)
		}
		var se *StandbyError
		if err != nil && !errors.As(err, &se) {
			t.Errorf("Check(%v, %v) = %T, want *StandbyError", tc.s, tc.c, err)
		}
	}
	want := "Operation category WRITE is not supported in state standby. Visit https://s.apache.org/sbnn-error"
	if got := Check(Standby, Write, false).Error(); got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

func TestCanTransition(t *testing.T) {
	for _, tc := range []struct {
		from, to State
		ok       bool
	}{
		{Initializing, Standby, true},
		{Initializing, Active, true},
		{Standby, Active, true},
		{Active, Standby, true},
		{Active, Active, true},
		{Standby, Standby, true},
		{Active, Stopping, true},
		{Stopping, Active, false},
		{Stopping, Standby, false},
		{Standby, Initializing, false},
	} {
		if err := CanTransition(tc.from, tc.to); (err == nil) != tc.ok {
			t.Errorf("CanTransition(%v, %v) = %v, want ok=%v", tc.from, tc.to, err, tc.ok)
		}
	}
}

func TestCheckAt(t *testing.T) {
	for _, tc := range []struct {
		reads bool
		c     Category
		ok    bool
	}{
		{true, Read, true},
		{false, Read, false},
		{true, Write, false},
		{true, Journal, true},
		{false, Checkpoint, true},
		{false, Unchecked, true},
	} {
		if err := CheckAt("Backup Node", tc.reads, tc.c); (err == nil) != tc.ok {
			t.Errorf("CheckAt(reads=%v, %v) = %v, want ok=%v", tc.reads, tc.c, err, tc.ok)
		}
	}
	want := "Operation category WRITE is not supported at Backup Node"
	if got := CheckAt("Backup Node", true, Write).Error(); got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}
