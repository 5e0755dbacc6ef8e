package clock

import (
	"testing"
	"time"
)

func TestManualTimerFiresOnlyWhenDue(t *testing.T) {
	c := NewManual(time.Unix(100, 0))
	tm := c.NewTimer(10 * time.Second)
	c.Advance(9 * time.Second)
	select {
	case <-tm.C():
		t.Fatal("timer fired early")
	default:
	}
	c.Advance(time.Second)
	select {
	case got := <-tm.C():
		if want := time.Unix(110, 0); !got.Equal(want) {
			t.Fatalf("fired at %v, want %v", got, want)
		}
	default:
		t.Fatal("timer did not fire when due")
	}
	if c.Pending() != 0 {
		t.Fatalf("pending = %d after firing", c.Pending())
	}
}

func TestManualTickerAndStop(t *testing.T) {
	c := NewManual(time.Unix(0, 0))
	tk := c.NewTicker(time.Second)
	fired := 0
	for i := 0; i < 3; i++ {
		c.Advance(time.Second)
		select {
		case <-tk.C():
			fired++
		default:
		}
	}
	if fired != 3 {
		t.Fatalf("ticker fired %d times, want 3", fired)
	}
	tk.Stop()
	c.Advance(5 * time.Second)
	select {
	case <-tk.C():
		t.Fatal("stopped ticker fired")
	default:
	}
}

func TestManualAfterFuncAndReset(t *testing.T) {
	c := NewManual(time.Unix(0, 0))
	done := make(chan struct{})
	tm := c.AfterFunc(time.Minute, func() { close(done) })
	if !tm.Reset(2 * time.Minute) {
		t.Fatal("Reset of a pending timer reported not pending")
	}
	c.Advance(time.Minute)
	select {
	case <-done:
		t.Fatal("AfterFunc ran before its reset deadline")
	default:
	}
	c.Advance(time.Minute)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("AfterFunc did not run")
	}
	if c.Now() != time.Unix(120, 0) {
		t.Fatalf("now = %v", c.Now())
	}
}
