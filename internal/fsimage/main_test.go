package fsimage

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind (Save's
// per-directory writers must all be stopped).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
