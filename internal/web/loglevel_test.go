package web

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLogLevelAndLogs(t *testing.T) {
	lv := new(slog.LevelVar)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "namenode.log"), []byte("a log line\n"), 0o644)
	s, err := New(Config{Addr: "127.0.0.1:0", Role: "NameNode", LogLevel: lv, LogDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer s.Close(t.Context())
	base := "http://" + s.Addr().String()
	code, _, body := get(t, base+"/logLevel?log=org.apache.hadoop.hdfs.server.namenode.NameNode")
	if code != 200 || !strings.Contains(body, logOutputMarker+"Effective Level: INFO<br />") ||
		!strings.Contains(body, logOutputMarker+"Submitted Class Name: org.apache.hadoop.hdfs.server.namenode.NameNode<br />") {
		t.Fatalf("getlevel: %d\n%s", code, body)
	}
	code, _, body = get(t, base+"/logLevel?log=x&level=debug")
	if code != 200 || !strings.Contains(body, "Effective Level: DEBUG") || lv.Level() != slog.LevelDebug {
		t.Fatalf("setlevel: %d %v\n%s", code, lv.Level(), body)
	}
	code, _, body = get(t, base+"/logLevel?log=x&level=LOUD")
	if code != http.StatusBadRequest || !strings.Contains(body, "Bad Level : LOUD") || lv.Level() != slog.LevelDebug {
		t.Fatalf("bad level: %d\n%s", code, body)
	}
	if code, _, body := get(t, base+"/logs/"); code != 200 || !strings.Contains(body, "namenode.log") {
		t.Fatalf("/logs/: %d %s", code, body)
	}
	if code, _, body := get(t, base+"/logs/namenode.log"); code != 200 || body != "a log line\n" {
		t.Fatalf("/logs/namenode.log: %d %s", code, body)
	}
	if code, _, _ := get(t, base+"/logs/../loglevel_test.go"); code == 200 {
		t.Fatal("/logs/ served a file outside its directory")
	}

	bare, err := New(Config{Addr: "127.0.0.1:0", Role: "DataNode"})
	if err != nil {
		t.Fatal(err)
	}
	bare.Start()
	defer bare.Close(t.Context())
	if code, _, body := get(t, "http://"+bare.Addr().String()+"/logs/"); code != 404 || !strings.Contains(body, "HADOOP_LOG_DIR") {
		t.Fatalf("/logs/ without a dir: %d %s", code, body)
	}
	if code, _, _ := get(t, "http://"+bare.Addr().String()+"/logLevel?log=x"); code != 404 {
		t.Fatalf("/logLevel without a level: %d", code)
	}
}
