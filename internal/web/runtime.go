package web

import (
	"encoding/json"
	"runtime"
	"runtime/metrics"
	"strconv"
)

// RuntimeBean is the process's memory and garbage-collector figures as
// Hadoop:service=<service>,name=JvmMetrics, under the names Hadoop's
// JvmMetrics use so that existing dashboards find them. The Go runtime's
// counterparts: MemHeapUsedM is the live heap (heap objects), MemHeapCommittedM
// the heap memory obtained from the OS, MemHeapMaxM the soft memory limit
// (GOMEMLIMIT; -1 when there is none), MemNonHeapUsedM everything else the
// runtime took from the OS (stacks, metadata), GcCount and GcTimeMillis the
// completed collections and their stop-the-world pauses. Goroutines and
// GoVersion have no Hadoop counterpart.
func RuntimeBean(service string) Bean {
	return Bean{
		Name:        "Hadoop:service=" + service + ",name=JvmMetrics",
		ModelerType: "JvmMetrics",
		Attrs: func() []Attr {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			limit := []metrics.Sample{{Name: "/gc/gomemlimit:bytes"}}
			metrics.Read(limit)
			max := float64(-1)
			if limit[0].Value.Kind() == metrics.KindUint64 {
				if v := limit[0].Value.Uint64(); v < 1<<62 {
					max = mib(v)
				}
			}
			return []Attr{
				{Name: "tag.Context", Value: "jvm"},
				{Name: "tag.ProcessName", Value: service},
				{Name: "MemHeapUsedM", Value: mib(ms.HeapAlloc)},
				{Name: "MemHeapCommittedM", Value: mib(ms.HeapSys - ms.HeapReleased)},
				{Name: "MemHeapMaxM", Value: max},
				{Name: "MemNonHeapUsedM", Value: mib(ms.Sys - ms.HeapSys)},
				{Name: "GcCount", Value: int64(ms.NumGC)},
				{Name: "GcTimeMillis", Value: int64(ms.PauseTotalNs / 1e6)},
				{Name: "Goroutines", Value: runtime.NumGoroutine()},
				{Name: "GoVersion", Value: runtime.Version()},
			}
		},
	}
}

func mib(v uint64) float64 { return float64(v) / (1 << 20) }

// Bytes prints a byte count the way Hadoop's pages do: binary units with up
// to two decimals ("0 B", "512 B", "1.5 KB", "3.72 GB", "2 TB").
func Bytes(n int64) string {
	if n < 0 {
		return "-" + Bytes(-n)
	}
	units := []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatInt(n, 10) + " B"
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	s = trimDot(s)
	return s + " " + units[i]
}

func trimDot(s string) string {
	if s[len(s)-1] == '.' {
		return s[:len(s)-1]
	}
	return s
}

// JSONString encodes v as a JSON document inside a string, the way Hadoop's
// beans carry structured attributes (NameNodeInfo's LiveNodes, DataNodeInfo's
// VolumeInfo, ...). "" when encoding/json cannot encode v.
func JSONString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
