package retrycache

import (
	"errors"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
)

func TestRetryGetsFirstOutcome(t *testing.T) {
	clk := clock.NewManual(time.Unix(0, 0))
	c := New(clk, 10*time.Minute, 100)
	e, retry := c.Begin([]byte("client-A"), 7)
	if retry {
		t.Fatal("first call reported as retry")
	}
	c.End(e, "created", nil)
	e2, retry := c.Begin([]byte("client-A"), 7)
	if !retry {
		t.Fatal("retry not recognised")
	}
	if resp, err := e2.Result(); resp != "created" || err != nil {
		t.Fatalf("retry got (%v, %v)", resp, err)
	}
	// Another client with the same call id is a different call.
	if _, retry := c.Begin([]byte("client-B"), 7); retry {
		t.Fatal("different client treated as retry")
	}
}

func TestRetryWaitsForInProgressCall(t *testing.T) {
	c := New(clock.NewManual(time.Unix(0, 0)), time.Minute, 10)
	e, _ := c.Begin([]byte("c"), 1)
	got := make(chan error, 1)
	go func() {
		e2, retry := c.Begin([]byte("c"), 1)
		if !retry {
			got <- errors.New("not a retry")
			return
		}
		_, err := e2.Result()
		got <- err
	}()
	boom := errors.New("boom")
	select {
	case err := <-got:
		t.Fatalf("retry returned before the first call ended: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	c.End(e, nil, boom)
	if err := <-got; !errors.Is(err, boom) {
		t.Fatalf("retry got %v, want the first call's error", err)
	}
}

func TestEntriesExpireAndAreBounded(t *testing.T) {
	clk := clock.NewManual(time.Unix(0, 0))
	c := New(clk, time.Minute, 3)
	for i := int32(0); i < 5; i++ {
		e, _ := c.Begin([]byte("c"), i)
		c.End(e, i, nil)
	}
	if c.Len() != 3 {
		t.Fatalf("len = %d, want 3 (bounded)", c.Len())
	}
	if _, retry := c.Begin([]byte("c"), 0); retry {
		t.Fatal("evicted entry still answered")
	}
	clk.Advance(2 * time.Minute)
	if _, retry := c.Begin([]byte("c"), 4); retry {
		t.Fatal("expired entry still answered")
	}
}
