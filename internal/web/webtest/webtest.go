// Package webtest fetches pages and /jmx beans from the daemons' web servers
// for tests: one place that knows how a /jmx answer is shaped. Test-support
// only.
package webtest

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// Get fetches url and returns its status code and body; a transport error
// fails the test.
func Get(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

// Bean fetches base + "/jmx?qry=" + qry (base is "http://host:port") and
// returns the attributes of the one bean it names; any other status or
// number of beans fails the test.
func Bean(t testing.TB, base, qry string) map[string]any {
	t.Helper()
	code, body := Get(t, base+"/jmx?qry="+qry)
	if code != http.StatusOK {
		t.Fatalf("%s/jmx?qry=%s: status %d: %s", base, qry, code, body)
	}
	var out struct{ Beans []map[string]any }
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("%s/jmx?qry=%s: %v", base, qry, err)
	}
	if len(out.Beans) != 1 {
		t.Fatalf("%s/jmx?qry=%s: %d beans, want 1", base, qry, len(out.Beans))
	}
	return out.Beans[0]
}
