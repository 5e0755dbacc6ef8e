package web

import (
	"bytes"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// promContentType is the Prometheus text exposition format.
const promContentType = "text/plain; version=0.0.4; charset=utf-8"

// jsIdent is what a /jmx?callback= name may be: a JavaScript identifier,
// possibly dotted (a.b.c), so the answer cannot carry script.
var jsIdent = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$`)

// serveProm answers GET /prom (hadoop.prometheus.endpoint.enabled): every
// numeric attribute of every bean on /jmx as a Prometheus sample, named as
// Hadoop's PrometheusMetricsSink names them (promName) and labelled with
// the bean's tag.* attributes, lower-cased:
//
//	# TYPE fs_namesystem_files_total gauge
//	fs_namesystem_files_total{context="dfs",hastate="active"} 4
func (s *Server) serveProm(w http.ResponseWriter, _ *http.Request) {
	var buf bytes.Buffer
	typed := map[string]bool{}
	for _, b := range s.beans() {
		if b.Attrs == nil {
			continue
		}
		record := promRecord(b.name.index["name"])
		if record == "" {
			continue
		}
		attrs := b.Attrs()
		var labels []string
		for _, a := range attrs {
			if tag, ok := strings.CutPrefix(a.Name, "tag."); ok {
				v, isStr := a.Value.(string)
				if !isStr {
					continue
				}
				labels = append(labels, strings.ToLower(tag)+`="`+promEscape(v)+`"`)
			}
		}
		lbl := ""
		if len(labels) > 0 {
			lbl = "{" + strings.Join(labels, ",") + "}"
		}
		counters := strings.HasSuffix(record, "Activity")
		for _, a := range attrs {
			if strings.HasPrefix(a.Name, "tag.") {
				continue
			}
			v, ok := promValue(a.Value)
			if !ok {
				continue
			}
			name := promName(record, a.Name)
			if !typed[name] {
				typed[name] = true
				kind := "gauge"
				if strings.HasSuffix(a.Name, "NumOps") || (counters && !strings.HasSuffix(a.Name, "Time")) {
					kind = "counter"
				}
				buf.WriteString("# TYPE " + name + " " + kind + "\n")
			}
			buf.WriteString(name + lbl + " " + v + "\n")
		}
	}
	w.Header().Set("Content-Type", promContentType)
	w.Write(buf.Bytes())
}

// promRecord is the metrics record a bean's name=... stands for, as
// Hadoop names the records: RpcActivityForPort8020 is "rpc",
// DataNodeActivity-host-port is "DataNodeActivity".
func promRecord(name string) string {
	switch {
	case strings.HasPrefix(name, "RpcActivityForPort"):
		return "rpc"
	case strings.HasPrefix(name, "DataNodeActivity-"):
		return "DataNodeActivity"
	}
	return name
}

// promName is Hadoop's PrometheusMetricsSink name: record and metric,
// each capitalized, split into words before an upper-case letter that
// follows a lower-case one or a digit, and before an upper-case letter
// followed by a lower-case one; words joined by "_", lower-cased, and
// every run of other characters made one "_":
//
//	FSNamesystem, FilesTotal   → fs_namesystem_files_total
//	rpc, RpcQueueTimeAvgTime   → rpc_rpc_queue_time_avg_time
//	JvmMetrics, MemHeapUsedM   → jvm_metrics_mem_heap_used_m
func promName(record, metric string) string {
	base := []rune(capitalize(record) + capitalize(metric))
	var b strings.Builder
	for i, r := range base {
		if i > 0 && unicode.IsUpper(r) {
			prev := base[i-1]
			nextLower := i+1 < len(base) && unicode.IsLower(base[i+1])
			if (!unicode.IsUpper(prev) && prev != '_') || nextLower {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	out := make([]byte, 0, b.Len())
	under := false
	for _, c := range []byte(b.String()) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !ok {
			if !under {
				out = append(out, '_')
			}
			under = true
			continue
		}
		under = false
		out = append(out, c)
	}
	return string(out)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// promValue formats a numeric attribute; other values are not samples.
func promValue(v any) (string, bool) {
	switch x := v.(type) {
	case int:
		return strconv.FormatInt(int64(x), 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint32:
		return strconv.FormatUint(uint64(x), 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case float32:
		return promFloat(float64(x)), true
	case float64:
		return promFloat(x), true
	}
	return "", false
}

func promFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// promEscape escapes a label value: backslash, double quote, newline.
func promEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// jsonpWriter wraps a /jmx answer as JSONP: the callback's name and "("
// before the body, ");" after it, and JavaScript's content type.
type jsonpWriter struct {
	http.ResponseWriter
	callback string
	started  bool
}

func (j *jsonpWriter) WriteHeader(code int) {
	if !j.started {
		j.started = true
		j.Header().Set("Content-Type", "application/javascript; charset=utf8")
		j.Header().Del("Content-Length")
		j.ResponseWriter.WriteHeader(code)
		j.ResponseWriter.Write([]byte(j.callback + "("))
	}
}

func (j *jsonpWriter) Write(p []byte) (int, error) {
	j.WriteHeader(http.StatusOK)
	return j.ResponseWriter.Write(p)
}

// finish ends the JSONP call.
func (j *jsonpWriter) finish() {
	j.WriteHeader(http.StatusOK)
	j.ResponseWriter.Write([]byte(");"))
}
