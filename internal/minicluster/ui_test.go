package minicluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// browser is headless Chromium, run once per page.
type browser struct {
	path    string
	profile string // a user data dir of the test's own
}

func newBrowser(t *testing.T) *browser {
	p := testtool.Require(t, "chromium", "apt-get install chromium")
	return &browser{path: p, profile: t.TempDir()}
}

func (b *browser) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir=" + b.profile}, args...)
	out, err := exec.CommandContext(ctx, b.path, all...).Output()
	if err != nil {
		t.Fatalf("chromium %v: %v", args, err)
	}
	return string(out)
}

// dom is the page at url as the browser built it (scripts run).
func (b *browser) dom(t *testing.T, url string) string {
	t.Helper()
	return b.run(t, "--virtual-time-budget=5000", "--dump-dom", url)
}

// screenshot saves the page at url as a PNG.
func (b *browser) screenshot(t *testing.T, url, file string) {
	t.Helper()
	b.run(t, "--window-size=1280,900", "--hide-scrollbars", "--screenshot="+file, url)
	if fi, err := os.Stat(file); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot of %s in %s: %v", url, file, err)
	}
}

// TestUIInChromium loads the NameNode's tabs and a DataNode's page in a
// real browser and checks what it shows. With HDFSGO_SCREENSHOTS=DIR it
// also saves a screenshot of each page in DIR (docs/ui holds the
// committed ones).
func TestUIInChromium(t *testing.T) {
	b := newBrowser(t)
	c, err := Start(context.Background(), Options{Dir: t.TempDir(), DataNodes: 2, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nn := "http://" + c.NameNode().HTTPAddr().String()
	dn := "http://" + c.DataNodes()[0].HTTPAddr().String()
	waitFor(t, 60*time.Second, "both DataNodes on the Datanodes tab", func() bool {
		return strings.Count(b.dom(t, nn+"/datanodes.html"), "In Service") == 2
	})
	pages := []struct {
		name, url string
		want      []string
	}{
		{"namenode-overview", nn + "/dfshealth.html", []string{`class="current">Overview</a>`, "Cluster ID", c.NameNode().ClusterID(),
			"Live nodes", "NameNode storage"}},
		{"namenode-datanodes", nn + "/datanodes.html", []string{`class="current">Datanodes</a>`, "Live DataNodes", "No dead DataNodes",
			`<a href="http://` + c.DataNodes()[0].HTTPAddr().String() + `/">`}},
		{"namenode-volume-failures", nn + "/volumefailures.html", []string{"There are no reported volume failures."}},
		{"namenode-snapshot", nn + "/snapshots.html", []string{"Snapshottable directories: 0", "No snapshottable directories"}},
		{"namenode-startup-progress", nn + "/startup.html", []string{"Loading fsimage", "Loading edits", "Saving checkpoint",
			"Safe mode", "100% COMPLETE"}},
		{"datanode", dn + "/datanode.html", []string{c.DataNodes()[0].XferAddr().String()}},
	}
	shots := os.Getenv("HDFSGO_SCREENSHOTS")
	for _, p := range pages {
		dom := b.dom(t, p.url)
		for _, w := range p.want {
			if !strings.Contains(dom, w) {
				t.Errorf("%s: the page as Chromium shows it lacks %q", p.url, w)
			}
		}
		if shots != "" {
			b.screenshot(t, p.url, filepath.Join(shots, p.name+".png"))
		}
	}
}
