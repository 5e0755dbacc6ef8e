package client

import "time"

// SetHeartbeatInterval changes the idle time after which write pipelines
// send a heartbeat packet (30 s otherwise), for tests.
func SetHeartbeatInterval(f *FileSystem, d time.Duration) { f.heartbeat = d }

// SetRetryWindow changes the base wait between a reader's rounds over a
// block's locations (3 s otherwise), for tests.
func SetRetryWindow(f *FileSystem, d time.Duration) { f.retryWindow = d }
