package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// fsyncRate measures how many 200-byte append + fdatasync rounds the disk
// holding dir completes per second, for about d (at least 20 rounds). It is
// the ceiling a log that synced every transaction on its own would have.
func fsyncRate(dir string, d time.Duration) (float64, error) {
	p := filepath.Join(dir, "fsync-probe")
	f, err := vfs.Default.Create(p)
	if err != nil {
		return 0, fmt.Errorf("bench: fsync probe: %w", err)
	}
	defer os.Remove(p)
	defer f.Close()
	rec := make([]byte, 200)
	n := 0
	start := time.Now()
	for n < 20 || time.Since(start) < d {
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
