package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// notifySignals starts relaying SIGINT and SIGTERM to a channel until stop.
func notifySignals() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	return ch, func() { signal.Stop(ch) }
}
