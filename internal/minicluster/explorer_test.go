package minicluster

import (
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// chromiumDOM loads url in headless Chromium, lets its scripts run, and
// returns the DOM.
func chromiumDOM(t *testing.T, bin, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=10000", "--dump-dom", url).Output()
	if err != nil {
		t.Fatalf("chromium %s: %v", url, err)
	}
	return string(out)
}

// TestExplorer: the NameNode's file browser, in headless Chromium, lists a
// directory through WebHDFS (a link per entry: directories to their
// listing, files to OPEN) and opens a file; the DataNode accepts a
// cross-origin upload from the NameNode's page and no other.
func TestExplorer(t *testing.T) {
	bin := testtool.Require(t, "chromium", "apt-get install -y chromium")
	c, err := Start(context.Background(), Options{Dir: t.TempDir(), DataNodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNode().RPCAddr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	if err := fsys.MkdirAll(ctx, "/d/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile(ctx, "/d/hello.txt", []byte("hello from hdfsgo"), false); err != nil {
		t.Fatal(err)
	}
	base := "http://" + c.NameNode().HTTPAddr().String()
	u := fsys.User()
	dom := chromiumDOM(t, bin, base+"/explorer.html#%2Fd?user="+u)
	for _, want := range []string{
		`<a class="file" href="#%2Fd%2Fhello.txt?user=` + u + `">hello.txt</a>`,
		`<a class="dir" href="#%2Fd%2Fsub?user=` + u + `">sub</a>`,
		`<td>-rw-rw-rw-</td><td>` + u + `</td>`,
		`<td class="num">17 B</td>`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the listing of /d lacks %s:\n%s", want, dom)
		}
	}
	if dom := chromiumDOM(t, bin, base+"/explorer.html#%2Fd%2Fhello.txt?user="+u); !strings.Contains(dom, `<pre id="preview">hello from hdfsgo</pre>`) ||
		!strings.Contains(dom, `<a id="download" href="/webhdfs/v1/d/hello.txt?op=OPEN&amp;user.name=`+u+`">`) {
		t.Errorf("opening the file's link shows:\n%s", dom)
	}
	if dom := chromiumDOM(t, bin, base+"/explorer.html#%2Fnope?user="+u); !strings.Contains(dom, "Listing /nope failed: 404 File /nope does not exist.") {
		t.Errorf("listing a missing directory:\n%s", dom)
	}

	// The upload's second step comes from the NameNode page's origin.
	w := newWebClient(t, c)
	code, b := w.op("PUT", "/d/up", "op=CREATE&noredirect=true&user.name="+u)
	loc := decode[map[string]string](t, "CREATE noredirect", code, b)["Location"]
	preflight := func(origin string) string {
		req, _ := http.NewRequest(http.MethodOptions, loc, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "PUT")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("Access-Control-Allow-Origin")
	}
	if got := preflight(base); got != base {
		t.Errorf("preflight from the NameNode page: Allow-Origin %q", got)
	}
	if got := preflight("http://evil.example:80"); got != "" {
		t.Errorf("preflight from another origin: Allow-Origin %q", got)
	}
}
