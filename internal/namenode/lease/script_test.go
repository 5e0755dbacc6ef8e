package lease

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/scripttest"
)

// epoch is time zero of the scripts; t=N means N seconds after it.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(t *testing.T, c *scripttest.Case) time.Time {
	t.Helper()
	return epoch.Add(time.Duration(c.Int(t, "t")) * time.Second)
}

func secs(tm time.Time) string { return fmt.Sprintf("%gs", tm.Sub(epoch).Seconds()) }

func runScript(t *testing.T, name string, do func(t *testing.T, c *scripttest.Case) string) {
	t.Helper()
	scripttest.Run(t, filepath.Join("testdata", name), do)
}
