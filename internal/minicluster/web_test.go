package minicluster

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// TestWebAddresses: the NameNode's web server lists every DataNode with the
// web port the DataNode registered, each DataNode answers on that port, and
// the written client configuration names the NameNode's web address.
func TestWebAddresses(t *testing.T) {
	dir := t.TempDir()
	c, err := Start(context.Background(), Options{Dir: dir, DataNodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nnWeb := c.NameNode().HTTPAddr()
	resp, err := http.Get("http://" + nnWeb.String() + "/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo")
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Beans []struct{ LiveNodes string } }
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if err != nil || len(out.Beans) != 1 {
		t.Fatalf("NameNodeInfo: %v %v", out, err)
	}
	var live map[string]struct {
		InfoAddr string `json:"infoAddr"`
		XferAddr string `json:"xferaddr"`
	}
	if err := json.Unmarshal([]byte(out.Beans[0].LiveNodes), &live); err != nil {
		t.Fatal(err)
	}
	if len(live) != 2 {
		t.Fatalf("LiveNodes %v", live)
	}
	byXfer := map[string]string{}
	for _, n := range live {
		byXfer[n.XferAddr] = n.InfoAddr
	}
	for i, dn := range c.DataNodes() {
		info := byXfer[dn.XferAddr().String()]
		_, port, _ := net.SplitHostPort(dn.HTTPAddr().String())
		if !strings.HasSuffix(info, ":"+port) {
			t.Errorf("DataNode %d serves its web port on %v, the NameNode knows %q", i, dn.HTTPAddr(), info)
		}
		r, err := http.Get("http://" + info + "/datanode.html")
		if err != nil {
			t.Fatalf("DataNode %d page at the registered address: %v", i, err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Errorf("DataNode %d page: %s", i, r.Status)
		}
	}
	cdir := filepath.Join(dir, "conf")
	if err := c.WriteConfig(cdir); err != nil {
		t.Fatal(err)
	}
	cc, err := conf.Load(conf.Options{Dir: cdir})
	if err != nil {
		t.Fatal(err)
	}
	if got := cc.String(conf.DFSNameNodeHTTPAddress); got != nnWeb.String() {
		t.Errorf("written %s = %q, want %q", conf.DFSNameNodeHTTPAddress, got, nnWeb)
	}
	if _, err := os.Stat(filepath.Join(cdir, conf.HDFSSiteFile)); err != nil {
		t.Fatal(err)
	}
}
