package cli

// daemon is what the foreground roles (namenode, datanode) have in common.
type daemon interface {
	Done() <-chan struct{}
	Close() error
	Err() error
}

// serveUntilStopped runs until SIGINT/SIGTERM or until the daemon stops by
// itself, then closes it; the exit status says whether it ended cleanly.
func serveUntilStopped(inv *Invocation, role string, d daemon) int {
	var sig <-chan struct{}
	if inv.Env.Signals != nil {
		ch, stop := inv.Env.Signals()
		defer stop()
		done := make(chan struct{})
		go func() {
			select {
			case s := <-ch:
				inv.Logger.Info("shutting down", "signal", s.String())
			case <-d.Done():
			}
			close(done)
		}()
		sig = done
	}
	select {
	case <-sig:
	case <-d.Done():
	}
	if err := d.Close(); err != nil {
		inv.Logger.Error(role+" stopped with an error", "err", err)
		return exitFail
	}
	if err := d.Err(); err != nil {
		inv.Logger.Error(role+" failed", "err", err)
		return exitFail
	}
	return exitOK
}
