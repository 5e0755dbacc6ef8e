package recovery

import (
	"path/filepath"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/scripttest"
)

func runScript(t *testing.T, name string, do func(t *testing.T, c *scripttest.Case) string) {
	t.Helper()
	scripttest.Run(t, filepath.Join("testdata", name), do)
}
