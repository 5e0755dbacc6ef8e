package web

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"runtime/pprof"
)

// serveStacks answers GET /stacks with every goroutine's stack.
func serveStacks(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "Process Thread Dump: %d active goroutines\n", runtime.NumGoroutine())
	if p := pprof.Lookup("goroutine"); p != nil {
		if err := p.WriteTo(&buf, 2); err != nil {
			fmt.Fprintf(&buf, "\n(stack dump incomplete: %v)\n", err)
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write(buf.Bytes())
}
