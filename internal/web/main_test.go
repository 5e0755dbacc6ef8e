package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testServer is a started Server on 127.0.0.1:0 with a client that keeps
// no idle connections.
type testServer struct {
	*Server
	base   string
	client *http.Client
}

func startServer(t *testing.T, cfg Config) *testServer {
	t.Helper()
	if cfg.Addr == "" && cfg.Listener == nil {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Role == "" {
		cfg.Role = "NameNode"
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{
		Server: s,
		base:   "http://" + s.Addr().String(),
		client: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
	}
	t.Cleanup(func() {
		ts.client.CloseIdleConnections()
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return ts
}

// start starts the server; tests register beans and handlers first.
func (ts *testServer) start() *testServer {
	ts.Start()
	return ts
}

// do sends a request and returns the status, headers and body.
func (ts *testServer) do(t *testing.T, method, path string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

func (ts *testServer) get(t *testing.T, path string) (int, http.Header, string) {
	t.Helper()
	return ts.do(t, http.MethodGet, path)
}

// objectKeys returns the keys of the JSON object raw, in document order.
func objectKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
