package web

import "testing"

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {512, "512 B"}, {1023, "1023 B"}, {1024, "1 KB"}, {1536, "1.5 KB"},
		{4 << 30, "4 GB"}, {3995000000, "3.72 GB"}, {2 << 40, "2 TB"}, {-1536, "-1.5 KB"},
	} {
		if got := Bytes(tc.n); got != tc.want {
			t.Errorf("Bytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestRuntimeBean(t *testing.T) {
	b := RuntimeBean("NameNode")
	if b.Name != "Hadoop:service=NameNode,name=JvmMetrics" {
		t.Fatalf("name %q", b.Name)
	}
	got := map[string]any{}
	for _, a := range b.Attrs() {
		got[a.Name] = a.Value
	}
	if used, _ := got["MemHeapUsedM"].(float64); used <= 0 {
		t.Errorf("MemHeapUsedM %v", got["MemHeapUsedM"])
	}
	if n, _ := got["Goroutines"].(int); n < 1 {
		t.Errorf("Goroutines %v", got["Goroutines"])
	}
	if got["tag.ProcessName"] != "NameNode" {
		t.Errorf("tag.ProcessName %v", got["tag.ProcessName"])
	}
}

func TestJSONString(t *testing.T) {
	if got := JSONString(map[string]int{"b": 2, "a": 1}); got != `{"a":1,"b":2}` {
		t.Errorf("JSONString = %q", got)
	}
	if got := JSONString(make(chan int)); got != "" {
		t.Errorf("JSONString of a channel = %q, want empty", got)
	}
}
