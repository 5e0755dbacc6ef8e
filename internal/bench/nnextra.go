package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	stock "github.com/colinmarc/hdfs/v2"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
)

// readerFiles is how many files the -readers threads stat in turn.
const readerFiles = 256

// readers are the getFileInfo threads of Options.Readers, run beside an
// op's writers.
type readers struct {
	stopCh  chan struct{}
	wg      sync.WaitGroup
	start   time.Time
	lat     [][]time.Duration // per reader
	errs    []error           // per reader: the error that stopped it
	clients []*ipc.Client
}

// readStats is what the readers measured.
type readStats struct {
	lat     []time.Duration
	elapsed time.Duration
}

func (s readStats) percentiles() (p50, p99, p999 time.Duration) {
	st := stats{latency: s.lat}
	p50, p99, p999, _ = st.percentiles(nil)
	return p50, p99, p999
}

// startReaders prepares the readers' files (untimed) under the op's
// directory and starts Options.Readers threads calling getFileInfo on them
// until stop. It returns once every reader has made one call (connected),
// which is not counted.
func (r *opRun) startReaders(ctx context.Context) (*readers, error) {
	n := r.opts.Readers
	files := make([]string, readerFiles)
	admin := r.tg.admin
	for i := range files {
		files[i] = fmt.Sprintf("%s/readers/file%d", r.base, i)
		if err := createFile(ctx, admin, files[i], "readers-prepare", true); err != nil {
			return nil, fmt.Errorf("preparing the readers' files: %w", err)
		}
	}
	rd := &readers{stopCh: make(chan struct{}), lat: make([][]time.Duration, n), errs: make([]error, n),
		clients: make([]*ipc.Client, n)}
	var ready sync.WaitGroup
	for t := range n {
		rd.clients[t] = r.tg.newClient()
		rd.wg.Add(1)
		ready.Add(1)
		go func() {
			defer rd.wg.Done()
			c := rd.clients[t]
			err := statFile(ctx, c, files[t%len(files)])
			ready.Done()
			if err != nil {
				rd.errs[t] = err
				return
			}
			for i := t; ; i++ {
				select {
				case <-rd.stopCh:
					return
				default:
				}
				s := time.Now()
				if err := statFile(ctx, c, files[i%len(files)]); err != nil {
					rd.errs[t] = err
					return
				}
				rd.lat[t] = append(rd.lat[t], max(time.Since(s), time.Nanosecond))
			}
		}()
	}
	ready.Wait()
	rd.start = time.Now()
	return rd, nil
}

// stop ends the readers and returns what they measured; an error of any
// reader is returned too.
func (rd *readers) stop() (readStats, error) {
	close(rd.stopCh)
	rd.wg.Wait()
	st := readStats{elapsed: time.Since(rd.start)}
	for _, c := range rd.clients {
		c.Close()
	}
	for t, l := range rd.lat {
		st.lat = append(st.lat, l...)
		if err := rd.errs[t]; err != nil {
			return st, fmt.Errorf("reader %d: %w", t, err)
		}
	}
	slices.Sort(st.lat)
	return st, nil
}

// stockClients are one stock Go client per thread, for OpStockCreate.
type stockClients struct {
	r       *opRun
	clients []*stock.Client
}

func (r *opRun) stockClients() (*stockClients, error) {
	sc := &stockClients{r: r, clients: make([]*stock.Client, r.opts.Threads)}
	for i := range sc.clients {
		c, err := stock.NewClient(stock.ClientOptions{Addresses: r.tg.addrs, User: r.opts.User})
		if err != nil {
			sc.close()
			return nil, fmt.Errorf("stock client: %w", err)
		}
		sc.clients[i] = c
		// Fetch the server defaults Create needs now, not in the timed
		// phase.
		if _, err := c.ServerDefaults(); err != nil {
			sc.close()
			return nil, fmt.Errorf("stock client: server defaults: %w", err)
		}
	}
	return sc, nil
}

func (sc *stockClients) close() {
	for _, c := range sc.clients {
		if c != nil {
			c.Close()
		}
	}
}

// createClose is one file of the stock client's loop: Create, then Close.
func (sc *stockClients) createClose(_ context.Context, _ *ipc.Client, th, i int) error {
	w, err := sc.clients[th].Create(sc.r.paths[i])
	if err != nil {
		return err
	}
	return w.Close()
}

// prepareDirs makes the op's leaf directories (untimed).
func (r *opRun) prepareDirs(ctx context.Context) error {
	dirs := make([]string, r.gen.numDirs())
	for i := range dirs {
		dirs[i] = r.gen.dir(i)
	}
	_, err := r.tg.timed(ctx, len(dirs), func(ctx context.Context, c *ipc.Client, th, i int) error {
		return mkdir(ctx, c, dirs[i])
	})
	if err != nil {
		return fmt.Errorf("preparing %d directories: %w", len(dirs), err)
	}
	return nil
}
