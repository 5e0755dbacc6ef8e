package client

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind (lease
// renewers, ack readers, fake DataNode connections).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
