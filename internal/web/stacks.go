package web

import (
	"fmt"
	"net/http"
	"runtime"
)

// firstStacksBuffer is the buffer the dump starts with; it doubles until
// the dump fits or reaches Limits.MaxStacksBytes.
const firstStacksBuffer = 64 << 10

// serveStacks answers GET /stacks with every goroutine's stack, in the
// text format of Go's goroutine profile (debug=2) under Hadoop's
// "Process Thread Dump" line. The dump is cut at Limits.MaxStacksBytes;
// the s.stacks gate (Limits.MaxStacks) bounds how many are made at once.
func (s *Server) serveStacks(w http.ResponseWriter, r *http.Request) {
	max := s.lim.MaxStacksBytes
	buf := make([]byte, min(firstStacksBuffer, max))
	var n int
	for {
		n = runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= max {
			break
		}
		buf = make([]byte, min(2*len(buf), max))
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "Process Thread Dump: %d active goroutines\n", runtime.NumGoroutine())
	w.Write(buf[:n])
	if n == len(buf) {
		fmt.Fprintf(w, "\n... dump cut at %d bytes (the limit); %d goroutines in all\n", n, runtime.NumGoroutine())
	}
}
