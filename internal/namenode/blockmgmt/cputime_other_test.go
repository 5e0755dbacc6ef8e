//go:build !linux

package blockmgmt

import "time"

// threadCPU is not measured outside Linux: every reading is 0.
func threadCPU() time.Duration { return 0 }
