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
	"github.com/hdfsgo/hdfsgo/internal/web/webtest"
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
	nnInfo := webtest.Bean(t, "http://"+nnWeb.String(), "Hadoop:service=NameNode,name=NameNodeInfo")
	liveJSON, _ := nnInfo["LiveNodes"].(string)
	var live map[string]struct {
		InfoAddr string `json:"infoAddr"`
		XferAddr string `json:"xferaddr"`
	}
	if err := json.Unmarshal([]byte(liveJSON), &live); err != nil {
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
		if code, _ := webtest.Get(t, "http://"+info+"/datanode.html"); code != http.StatusOK {
			t.Errorf("DataNode %d page at the registered address: status %d", i, code)
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
