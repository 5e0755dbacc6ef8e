package web

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

func TestPromName(t *testing.T) {
	for _, c := range []struct{ record, metric, want string }{
		{"FSNamesystem", "FilesTotal", "fs_namesystem_files_total"},
		{"FSNamesystem", "CapacityUsedGB", "fs_namesystem_capacity_used_gb"},
		{"rpc", "RpcQueueTimeAvgTime", "rpc_rpc_queue_time_avg_time"},
		{"NameNodeActivity", "CreateFileOps", "name_node_activity_create_file_ops"},
		{"JvmMetrics", "MemHeapUsedM", "jvm_metrics_mem_heap_used_m"},
		{"DataNodeActivity", "BytesWritten", "data_node_activity_bytes_written"},
		{"a.b", "x-y", "a_b_x_y"},
	} {
		if got := promName(c.record, c.metric); got != c.want {
			t.Errorf("promName(%q, %q) = %q, want %q", c.record, c.metric, got, c.want)
		}
	}
}

func startProm(t *testing.T, enabled string) string {
	t.Helper()
	c, err := conf.Load(conf.Options{Dir: t.TempDir(), Env: func(string) string { return "" },
		Overrides: []conf.KeyValue{{Key: conf.HadoopPrometheusEndpointEnabled, Value: enabled}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Addr: "127.0.0.1:0", Role: "NameNode", Conf: c})
	if err != nil {
		t.Fatal(err)
	}
	s.AddBean(Bean{Name: "Hadoop:service=NameNode,name=FSNamesystem", ModelerType: "FSNamesystem", Attrs: func() []Attr {
		return []Attr{{Name: "tag.Context", Value: "dfs"}, {Name: "tag.HAState", Value: "active"}, {Name: "tag.Hostname", Value: `h"1`},
			{Name: "FilesTotal", Value: int64(4)}, {Name: "CapacityUsedGB", Value: 1.5}, {Name: "NameDirStatuses", Value: "{}"}}
	}})
	s.AddBean(Bean{Name: "Hadoop:service=NameNode,name=RpcActivityForPort8020", ModelerType: "RpcActivityForPort8020", Attrs: func() []Attr {
		return []Attr{{Name: "tag.port", Value: "8020"}, {Name: "RpcQueueTimeNumOps", Value: int64(3)}, {Name: "RpcQueueTimeAvgTime", Value: 0.25}}
	}})
	s.Start()
	t.Cleanup(func() { s.Close(t.Context()) })
	return "http://" + s.Addr().String()
}

func get(t *testing.T, url string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

func TestProm(t *testing.T) {
	base := startProm(t, "true")
	code, ct, body := get(t, base+"/prom")
	want := `# TYPE fs_namesystem_files_total gauge
fs_namesystem_files_total{context="dfs",hastate="active",hostname="h\"1"} 4
# TYPE fs_namesystem_capacity_used_gb gauge
fs_namesystem_capacity_used_gb{context="dfs",hastate="active",hostname="h\"1"} 1.5
# TYPE rpc_rpc_queue_time_num_ops counter
rpc_rpc_queue_time_num_ops{port="8020"} 3
# TYPE rpc_rpc_queue_time_avg_time gauge
rpc_rpc_queue_time_avg_time{port="8020"} 0.25
`
	if code != 200 || !strings.HasPrefix(ct, "text/plain") || body != want {
		t.Fatalf("/prom: %d %s\n%s\nwant\n%s", code, ct, body, want)
	}
	if code, _, _ := get(t, startProm(t, "false")+"/prom"); code != http.StatusNotFound {
		t.Fatalf("/prom when disabled: %d", code)
	}
}

func TestJMXCallback(t *testing.T) {
	base := startProm(t, "false")
	code, ct, body := get(t, base+"/jmx?qry=Hadoop:service=NameNode,name=RpcActivityForPort8020&callback=cb.x")
	if code != 200 || ct != "application/javascript; charset=utf8" || !strings.HasPrefix(body, `cb.x({`) ||
		!strings.HasSuffix(body, "}\n);") || !strings.Contains(body, `"RpcQueueTimeNumOps": 3`) {
		t.Fatalf("JSONP: %d %s %q", code, ct, body)
	}
	code, _, body = get(t, base+"/jmx?callback=alert(1)")
	if code != http.StatusBadRequest || !strings.Contains(body, "not a JavaScript identifier") {
		t.Fatalf("bad callback: %d %q", code, body)
	}
}
