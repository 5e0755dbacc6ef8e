package bench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// fsyncRate measures how many 200-byte append + fdatasync rounds the disk
// holding dir completes per second, for about d (at least 20 rounds). It is
// the ceiling a log that synced every transaction on its own would have.
// With prealloc the file is first given 1 MiB of synced zeros and the
// rounds overwrite it (the edit log's own pattern, see
// editlog.PreallocateBytes): the fdatasync then flushes data without a
// change of the file's size.
func fsyncRate(dir string, d time.Duration, prealloc bool) (float64, error) {
	p := filepath.Join(dir, "fsync-probe")
	f, err := vfs.Default.Create(p)
	if err != nil {
		return 0, fmt.Errorf("bench: fsync probe: %w", err)
	}
	defer os.Remove(p)
	defer f.Close()
	if prealloc {
		if _, err := f.Write(make([]byte, 1<<20)); err != nil {
			return 0, fmt.Errorf("bench: fsync probe: %w", err)
		}
		if err := f.Sync(); err != nil {
			return 0, fmt.Errorf("bench: fsync probe: %w", err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return 0, fmt.Errorf("bench: fsync probe: %w", err)
		}
	}
	rec := make([]byte, 200)
	n := 0
	start := time.Now()
	for (n < 20 || time.Since(start) < d) && (!prealloc || (n+1)*len(rec) <= 1<<20) {
		if _, err := f.Write(rec); err != nil {
			return 0, fmt.Errorf("bench: fsync probe: %w", err)
		}
		if err := f.Sync(); err != nil {
			return 0, fmt.Errorf("bench: fsync probe: %w", err)
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// rawFsyncs measures the raw fsync rates of the NameNode's disk (the
// in-process NameNode's dir, or Options.FsyncDir) and returns the lines
// that report them; none when there is no directory to measure.
func (r *opRun) rawFsyncs() ([]string, error) {
	dir := r.tg.opts.FsyncDir
	if r.tg.nn != nil {
		dir = r.tg.dir
	}
	if dir == "" {
		return nil, nil
	}
	appendRate, err := fsyncRate(dir, time.Second, false)
	if err != nil {
		return nil, err
	}
	preRate, err := fsyncRate(dir, time.Second, true)
	if err != nil {
		return nil, err
	}
	return []string{
		fmt.Sprintf("Raw fsyncs/s in the name dir (200 B append + fdatasync, measured just before): %.0f", appendRate),
		fmt.Sprintf("Raw fsyncs/s in the name dir (200 B into preallocated space + fdatasync, as the edit log writes): %.0f", preRate),
	}, nil
}
