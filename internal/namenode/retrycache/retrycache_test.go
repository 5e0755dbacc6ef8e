package retrycache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
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
	c.End(e, []byte("created"), nil)
	e2, retry := c.Begin([]byte("client-A"), 7)
	if !retry {
		t.Fatal("retry not recognised")
	}
	if resp, err := e2.Result(); string(resp) != "created" || err != nil {
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
		c.End(e, []byte{byte(i)}, nil)
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

// TestAgainstModel runs random calls, retries, expiries and evictions
// across many chunks against a map of what each call answered.
func TestAgainstModel(t *testing.T) {
	clk := clock.NewManual(time.Unix(0, 0))
	const maxSize = 3000
	c := New(clk, time.Minute, maxSize)
	type kept struct {
		outcome string
		err     error
		at      time.Time
		order   int
	}
	model := map[string]kept{}
	order := 0
	rng := rand.New(rand.NewPCG(1, 2))
	idOf := func(client int) []byte {
		if client%5 == 0 {
			return []byte(fmt.Sprintf("c%d", client)) // short ids are kept too
		}
		return []byte(fmt.Sprintf("client-%09d", client))
	}
	for step := range 40000 {
		client, call := rng.IntN(50), int32(rng.IntN(400))
		id := idOf(client)
		mk := fmt.Sprintf("%s/%d", id, call)
		e, retry := c.Begin(id, call)
		m, seen := model[mk]
		// What the model still holds: not expired, among the newest maxSize.
		alive := seen && clk.Now().Sub(m.at) < time.Minute && order-m.order <= maxSize
		if retry != alive {
			t.Fatalf("step %d: %s retry=%v, model says %v", step, mk, retry, alive)
		}
		if retry {
			got, err := e.Result()
			if string(got) != m.outcome || err != m.err {
				t.Fatalf("step %d: %s answered (%q, %v), first call (%q, %v)", step, mk, got, err, m.outcome, m.err)
			}
		} else {
			var err error
			if rng.IntN(4) == 0 {
				err = fmt.Errorf("failure %d", step)
			}
			out := strings.Repeat("x", rng.IntN(40)) + fmt.Sprint(step)
			c.End(e, []byte(out), err)
			order++
			model[mk] = kept{outcome: out, err: err, at: clk.Now(), order: order}
		}
		if rng.IntN(100) == 0 {
			clk.Advance(time.Duration(rng.IntN(20)) * time.Second)
		}
	}
	live := 0
	for _, m := range model {
		if clk.Now().Sub(m.at) < time.Minute && order-m.order < maxSize {
			live++
		}
	}
	if c.Len() < live-1 || c.Len() > live+1 {
		t.Fatalf("Len = %d, model holds %d", c.Len(), live)
	}
}

func TestPutKeepsFirstAndLongIDs(t *testing.T) {
	c := New(clock.NewManual(time.Unix(0, 0)), time.Minute, 10)
	c.Put([]byte("a"), 1, []byte("replayed"))
	c.Put([]byte("a"), 1, []byte("again"))
	e, retry := c.Begin([]byte("a"), 1)
	if got, _ := e.Result(); !retry || string(got) != "replayed" {
		t.Fatalf("retry=%v got %q, want the first record", retry, got)
	}
	long := []byte("an-id-longer-than-sixteen-bytes")
	c.Put(long, 1, []byte("x"))
	e, retry = c.Begin(long, 1)
	if retry {
		t.Fatal("an id longer than IDLen was kept")
	}
	c.End(e, []byte("y"), nil)
	if _, retry := c.Begin(long, 1); retry {
		t.Fatal("an id longer than IDLen was kept by End")
	}
	if got, _ := e.Result(); string(got) != "y" {
		t.Fatalf("the long id's own entry holds %q", got)
	}
	// Ids differing only by trailing zero bytes are different clients.
	if _, retry := c.Begin([]byte("a\x00"), 1); retry {
		t.Fatal(`"a\x00" taken for "a"`)
	}
}

// BenchmarkRetryCacheHeap reports the heap a million completed calls keep,
// each with a create's answer (about 90 bytes encoded).
func BenchmarkRetryCacheHeap(b *testing.B) {
	out := make([]byte, 90)
	for range b.N {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc
		c := New(clock.NewManual(time.Unix(0, 0)), time.Hour, 1<<20)
		id := []byte("0123456789abcdef")
		for i := range int32(1 << 20) {
			e, _ := c.Begin(id, i)
			c.End(e, out, nil)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc-before)/(1<<20), "heap-B/call")
		runtime.KeepAlive(c)
	}
}
