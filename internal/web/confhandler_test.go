package web

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// loadConf writes core-site.xml and hdfs-site.xml from name/value pairs
// (a name ending in "!" is final) and loads them with the overrides.
func loadConf(t *testing.T, core, hdfs []string, overrides ...conf.KeyValue) (*conf.Conf, string) {
	t.Helper()
	dir := t.TempDir()
	write := func(file string, kv []string) {
		var b strings.Builder
		b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
		for i := 0; i+1 < len(kv); i += 2 {
			name, final := strings.CutSuffix(kv[i], "!")
			b.WriteString("<property><name>" + esc(name) + "</name><value>" + esc(kv[i+1]) + "</value>")
			if final {
				b.WriteString("<final>true</final>")
			}
			b.WriteString("</property>\n")
		}
		b.WriteString("</configuration>\n")
		if err := os.WriteFile(filepath.Join(dir, file), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(conf.CoreSiteFile, core)
	write(conf.HDFSSiteFile, hdfs)
	c, err := conf.Load(conf.Options{Dir: dir, Overrides: overrides, Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return c, dir
}

type xmlConf struct {
	XMLName xml.Name `xml:"configuration"`
	Props   []struct {
		Name   string `xml:"name"`
		Value  string `xml:"value"`
		Final  bool   `xml:"final"`
		Source string `xml:"source"`
	} `xml:"property"`
}

type jsonProp struct {
	Key      string `json:"key"`
	Value    string `json:"value"`
	IsFinal  bool   `json:"isFinal"`
	Resource string `json:"resource"`
}

type jsonConf struct {
	Properties []jsonProp `json:"properties"`
	Property   *jsonProp  `json:"property"`
}

func confServer(t *testing.T) (*testServer, *conf.Conf, string) {
	c, dir := loadConf(t,
		[]string{
			"fs.defaultFS", "hdfs://nn:8020",
			"my.base", "/data",
			"fs.s3a.secret.key", "AKIA-secret",
			"ssl.keystore.password", "hunter2",
			"fs.azure.account.key.acct.blob.core.windows.net", "azkey",
			"hadoop.security.credential", "cred",
			"x.oauth.refresh.token", "tok-9z1",
			"dfs.web.authentication.username", "someone",
		},
		[]string{
			"dfs.replication!", "2",
			"dfs.namenode.name.dir", "${my.base}/name",
			"text.escape", "a<b&c>\"d'",
		},
		conf.KeyValue{Key: "dfs.blocksize", Value: "64m"},
	)
	return startServer(t, Config{Conf: c}).start(), c, dir
}

func TestConfXML(t *testing.T) {
	ts, c, dir := confServer(t)
	code, hdr, body := ts.get(t, "/conf")
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	if ct := hdr.Get("Content-Type"); ct != "text/xml; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	if !strings.HasPrefix(body, `<?xml version="1.0" encoding="UTF-8" standalone="no"?><configuration><property><name>`) {
		t.Errorf("prefix: %.120s", body)
	}
	var doc xmlConf
	if err := xml.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	keys := c.Keys()
	if len(doc.Props) != len(keys) {
		t.Fatalf("%d properties, want %d", len(doc.Props), len(keys))
	}
	byName := map[string]int{}
	for i, p := range doc.Props {
		if p.Name != keys[i] {
			t.Fatalf("property %d = %q, want %q (sorted)", i, p.Name, keys[i])
		}
		byName[p.Name] = i
	}
	core, hdfs := filepath.Join(dir, conf.CoreSiteFile), filepath.Join(dir, conf.HDFSSiteFile)
	tests := []struct {
		key, value, source string
		final              bool
	}{
		{"fs.defaultFS", "hdfs://nn:8020", core, false},
		{"dfs.replication", "2", hdfs, true},
		{"dfs.namenode.name.dir", "/data/name", hdfs, false}, // expanded
		{"dfs.blocksize", "64m", conf.SourceOverride, false},
		{"text.escape", "a<b&c>\"d'", hdfs, false},
		{"fs.s3a.secret.key", "******", core, false},
		{"ssl.keystore.password", "******", core, false},
		{"fs.azure.account.key.acct.blob.core.windows.net", "******", core, false},
		{"hadoop.security.credential", "******", core, false},
		{"x.oauth.refresh.token", "******", core, false},
		{"dfs.web.authentication.username", "******", core, false},
		{"my.base", "/data", core, false},
	}
	for _, tt := range tests {
		i, ok := byName[tt.key]
		if !ok {
			t.Errorf("%s missing", tt.key)
			continue
		}
		p := doc.Props[i]
		if p.Value != tt.value || p.Source != tt.source || p.Final != tt.final {
			t.Errorf("%s = {%q %q final=%v}, want {%q %q final=%v}", tt.key, p.Value, p.Source, p.Final, tt.value, tt.source, tt.final)
		}
	}
	for _, secret := range []string{"AKIA-secret", "hunter2", "azkey", "tok-9z1", "someone"} {
		if strings.Contains(body, secret) {
			t.Errorf("body shows %q", secret)
		}
	}
	// Defaults name their source "default".
	for _, p := range doc.Props {
		if c.Source(p.Name) == conf.SourceDefault && p.Source != "default" {
			t.Errorf("%s source = %q, want default", p.Name, p.Source)
		}
	}
}

func TestConfJSON(t *testing.T) {
	ts, c, dir := confServer(t)
	for _, req := range []struct {
		name string
		path string
		hdr  []string
	}{
		{"format", "/conf?format=json", nil},
		{"accept", "/conf", []string{"Accept", "application/json"}},
	} {
		t.Run(req.name, func(t *testing.T) {
			code, hdr, body := ts.do(t, http.MethodGet, req.path, req.hdr...)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			if ct := hdr.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type = %q", ct)
			}
			var doc jsonConf
			if err := json.Unmarshal([]byte(body), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Properties) != len(c.Keys()) {
				t.Fatalf("%d properties, want %d", len(doc.Properties), len(c.Keys()))
			}
			got := map[string]jsonProp{}
			for _, p := range doc.Properties {
				got[p.Key] = p
			}
			hdfs := filepath.Join(dir, conf.HDFSSiteFile)
			want := map[string]jsonProp{
				"dfs.replication":       {"dfs.replication", "2", true, hdfs},
				"dfs.namenode.name.dir": {"dfs.namenode.name.dir", "/data/name", false, hdfs},
				"dfs.blocksize":         {"dfs.blocksize", "64m", false, "-D"},
				"fs.s3a.secret.key":     {"fs.s3a.secret.key", "******", false, filepath.Join(dir, conf.CoreSiteFile)},
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s = %+v, want %+v", k, got[k], w)
				}
			}
		})
	}
}

func TestConfName(t *testing.T) {
	ts, _, dir := confServer(t)
	hdfs := filepath.Join(dir, conf.HDFSSiteFile)

	code, _, body := ts.get(t, "/conf?name=dfs.replication")
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	var x xmlConf
	if err := xml.Unmarshal([]byte(body), &x); err != nil {
		t.Fatal(err)
	}
	if len(x.Props) != 1 || x.Props[0].Name != "dfs.replication" || x.Props[0].Value != "2" || !x.Props[0].Final || x.Props[0].Source != hdfs {
		t.Errorf("xml name= %+v", x.Props)
	}

	code, _, body = ts.get(t, "/conf?format=json&name=fs.s3a.secret.key")
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	var j jsonConf
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		t.Fatal(err)
	}
	if j.Property == nil || j.Property.Key != "fs.s3a.secret.key" || j.Property.Value != "******" || j.Properties != nil {
		t.Errorf("json name= %s", body)
	}

	for _, path := range []string{"/conf?name=no.such.key", "/conf?format=json&name=no.such.key", "/conf?name="} {
		code, _, body = ts.get(t, path)
		if code != http.StatusNotFound || !strings.Contains(body, "is not set") {
			t.Errorf("%s: status %d body %q, want 404 naming the key", path, code, body)
		}
	}
}

func TestConfBadFormat(t *testing.T) {
	ts, _, _ := confServer(t)
	for _, f := range []string{"yaml", "", "JSON"} {
		code, _, body := ts.get(t, "/conf?format="+f)
		if code != http.StatusBadRequest || !strings.Contains(body, "want xml or json") {
			t.Errorf("format=%q: status %d body %q", f, code, body)
		}
	}
}

func TestConfNil(t *testing.T) {
	ts := startServer(t, Config{Role: "DataNode"}).start()
	code, _, body := ts.get(t, "/conf")
	if code != http.StatusNotFound || !strings.Contains(body, "DataNode serves no configuration") {
		t.Errorf("status %d body %q", code, body)
	}
}

func TestConfCustomSensitiveKeys(t *testing.T) {
	c, _ := loadConf(t,
		[]string{
			"hadoop.security.sensitive-config-keys", `^site\.token$, ([bad`,
			"site.token", "t0k",
			"my.password", "visible",
			"x([bad.y", "lit",
		}, nil)
	ts := startServer(t, Config{Conf: c}).start()
	_, _, body := ts.get(t, "/conf?format=json")
	var doc jsonConf
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"site.token":                            "******",
		"my.password":                           "visible", // the configured list replaces the default
		"x([bad.y":                              "******",  // an expression that does not compile matches literally
		"hadoop.security.sensitive-config-keys": `^site\.token$, ([bad`,
	}
	for _, p := range doc.Properties {
		if w, ok := want[p.Key]; ok {
			if p.Value != w {
				t.Errorf("%s = %q, want %q", p.Key, p.Value, w)
			}
			delete(want, p.Key)
		}
	}
	if len(want) != 0 {
		t.Errorf("missing keys %v", want)
	}
}

func TestDefaultSensitiveKeys(t *testing.T) {
	r := newRedactor(nil, nil)
	tests := []struct {
		key  string
		want bool
	}{
		{"fs.s3a.secret.key", true},
		{"fs.s3a.bucket.b.secret.key", true},
		{"fs.s3a.access.key", false},
		{"fs.s3a.bucket.b.server-side-encryption.key", true},
		{"fs.s3a.encryption.algorithm", true},
		{"fs.azure.account.key.x.blob.core.windows.net", true},
		{"dfs.webhdfs.oauth2.refresh.token", true},
		{"dfs.webhdfs.oauth2.client.secret", true},
		{"ssl.server.keystore.password", true},
		{"ssl.server.keystore.location", false},
		{"hadoop.http.authentication.signature.secret", true},
		{"hadoop.http.authentication.signature.secret.file", false},
		{"hadoop.security.credential", true},
		{"hadoop.security.sensitive-config-keys", true},
		{"dfs.replication", false},
		{"fs.defaultFS", false},
	}
	for _, tt := range tests {
		if got := r.sensitive(tt.key); got != tt.want {
			t.Errorf("sensitive(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}
