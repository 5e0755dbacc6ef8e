package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOfflineViewers runs a NameNode and a DataNode as processes, makes
// a namespace, saves it, and runs hdfs oev and hdfs oiv on the files the
// NameNode wrote: the edits' XML names each op with its path, the image's
// XML, Delimited and FileDistribution list the files, the Web viewer
// lists a directory over WebHDFS, XML turns back into
// the same segment and the same image, and the NameNode restarts from the
// image ReverseXML wrote with the same namespace.
func TestOfflineViewers(t *testing.T) {
	parallel(t)
	c := startCluster(t, 1, map[string]string{"dfs.replication": "1"})
	local, _ := randomFile(t, 3000, 9)
	c.dfs(t, "-mkdir", "-p", "/data/logs")
	c.dfs(t, "-put", local, "/data/logs/app.log")
	c.dfs(t, "-mv", "/data/logs/app.log", "/data/app.log")
	c.dfs(t, "-chmod", "600", "/data/app.log")
	c.run(t, c.confDir("nn"), "dfsadmin", "-safemode", "enter")
	c.run(t, c.confDir("nn"), "dfsadmin", "-saveNamespace")
	before := c.dfs(t, "-ls", "-R", "/")

	cur := filepath.Join(c.root, "nn", "name", "current")
	segs, _ := filepath.Glob(filepath.Join(cur, "edits_0*-0*"))
	var images []string
	all, _ := filepath.Glob(filepath.Join(cur, "fsimage_0*"))
	for _, f := range all {
		if !strings.HasSuffix(f, ".md5") {
			images = append(images, f)
		}
	}
	if len(segs) == 0 || len(images) == 0 {
		t.Fatalf("no finalized segment or image in %s: %v %v", cur, segs, images)
	}
	dir := t.TempDir()

	// oev: every segment to XML and back, byte for byte.
	var xmls strings.Builder
	for i, seg := range segs {
		x := filepath.Join(dir, "edits"+string(rune('a'+i))+".xml")
		c.run(t, c.confDir("nn"), "oev", "-i", seg, "-o", x)
		b, _ := os.ReadFile(x)
		xmls.Write(b)
		back := filepath.Join(dir, "edits.bin")
		c.run(t, c.confDir("nn"), "oev", "-p", "binary", "-i", x, "-o", back)
		orig, _ := os.ReadFile(seg)
		got, _ := os.ReadFile(back)
		if !bytes.Equal(orig, got) {
			t.Fatalf("oev XML -> binary differs from %s", seg)
		}
	}
	for _, re := range []string{
		`<OPCODE>OP_MKDIR</OPCODE>\s*<DATA>\s*<TXID>\d+</TXID>\s*<INODEID>\d+</INODEID>\s*<PATH>/data/logs</PATH>`,
		`<OPCODE>OP_ADD</OPCODE>\s*<DATA>\s*<TXID>\d+</TXID>\s*<INODEID>\d+</INODEID>\s*<PATH>/data/logs/app.log._COPYING_</PATH>\s*<REPLICATION>1</REPLICATION>`,
		`<OPCODE>OP_CLOSE</OPCODE>\s*<DATA>\s*<TXID>\d+</TXID>\s*<PATH>/data/logs/app.log._COPYING_</PATH>\s*<MTIME>\d+</MTIME>\s*<ATIME>\d+</ATIME>\s*<BLOCK>\s*<BLOCK_ID>\d+</BLOCK_ID>\s*<NUM_BYTES>3000</NUM_BYTES>`,
		`<OPCODE>OP_RENAME</OPCODE>\s*<DATA>\s*<TXID>\d+</TXID>\s*<SRC>/data/logs/app.log</SRC>\s*<DST>/data/app.log</DST>`,
		`<OPCODE>OP_SET_PERMISSIONS</OPCODE>\s*<DATA>\s*<TXID>\d+</TXID>\s*<SRC>/data/app.log</SRC>\s*<MODE>384</MODE>`,
	} {
		if !regexp.MustCompile(re).MatchString(xmls.String()) {
			t.Fatalf("oev XML lacks %s:\n%s", re, xmls.String())
		}
	}
	stats := c.run(t, c.confDir("nn"), "oev", "-p", "stats", "-i", segs[len(segs)-1], "-o", filepath.Join(dir, "stats"), "-v")
	if !strings.Contains(stats, "    OP_START_LOG_SEGMENT           ( 24): 1\n") {
		t.Fatalf("oev stats:\n%s", stats)
	}

	// oiv on the newest image.
	img := images[len(images)-1]
	x := c.run(t, c.confDir("nn"), "oiv", "-p", "XML", "-i", img)
	for _, re := range []string{
		`<inode><id>\d+</id><type>DIRECTORY</type><name>logs</name><mtime>\d+</mtime><permission>[^:<]+:supergroup:0755</permission><nsquota>-1</nsquota><dsquota>-1</dsquota></inode>`,
		`<inode><id>\d+</id><type>FILE</type><name>app.log</name><replication>1</replication><mtime>\d+</mtime><atime>\d+</atime><preferredBlockSize>134217728</preferredBlockSize><permission>[^:<]+:supergroup:0600</permission><blocks><block><id>\d+</id><genstamp>\d+</genstamp><numBytes>3000</numBytes></block>`,
		`<INodeDirectorySection><directory><parent>16385</parent><child>\d+</child></directory>`,
	} {
		if !regexp.MustCompile(re).MatchString(x) {
			t.Fatalf("oiv XML lacks %s:\n%s", re, x)
		}
	}
	del := c.run(t, c.confDir("nn"), "oiv", "-p", "Delimited", "-i", img)
	if !strings.HasPrefix(del, "Path\tReplication\tModificationTime\tAccessTime\tPreferredBlockSize\tBlocksCount\tFileSize\tNSQUOTA\tDSQUOTA\tPermission\tUserName\tGroupName\n") ||
		!regexp.MustCompile(`(?m)^/data/app.log\t1\t\d{4}-\d\d-\d\d \d\d:\d\d\t\d{4}-\d\d-\d\d \d\d:\d\d\t134217728\t1\t3000\t0\t0\t-rw-------\t[^\t]+\tsupergroup$`).MatchString(del) {
		t.Fatalf("oiv Delimited:\n%s", del)
	}
	fd := c.run(t, c.confDir("nn"), "oiv", "-p", "FileDistribution", "-i", img, "-step", "1024", "-maxSize", "1048576")
	if !strings.Contains(fd, "Size\tNumFiles\n3072\t1\n") || !strings.Contains(fd, "totalFiles = 1\ntotalDirectories = 3\n") {
		t.Fatalf("oiv FileDistribution:\n%s", fd)
	}
	// The Web processor (the default) serves the image over WebHDFS's
	// read operations until SIGTERM.
	webAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	viewer := c.spawn("oiv-web", c.confDir("nn"), "oiv", "-addr", webAddr, "-i", img)
	var listing string
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get("http://" + webAddr + "/webhdfs/v1/data?op=LISTSTATUS")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			listing = string(b)
			break
		}
		if time.Now().After(deadline) {
			c.kill(viewer)
			t.Fatalf("the Web viewer never answered: %v\n%s", err, viewer.logText())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(listing, `"pathSuffix":"app.log"`) || !strings.Contains(listing, `"length":3000`) || !strings.Contains(listing, `"pathSuffix":"logs"`) {
		t.Fatalf("LISTSTATUS /data from the Web viewer: %s", listing)
	}
	if ls := c.dfs(t, "-ls", "webhdfs://"+webAddr+"/data"); !strings.Contains(ls, "Found 2 items") ||
		!regexp.MustCompile(`(?m)^-rw-------   1 \S+ supergroup\s+3000 .* webhdfs://`+regexp.QuoteMeta(webAddr)+`/data/app.log$`).MatchString(ls) {
		t.Fatalf("hdfs dfs -ls webhdfs:// of the Web viewer:\n%s", ls)
	}
	viewer.cmd.Process.Signal(syscall.SIGTERM)
	waitOrKill(viewer)
	if !strings.Contains(viewer.logText(), "WebImageViewer started. Listening on /"+webAddr) {
		t.Fatalf("viewer output:\n%s", viewer.logText())
	}

	// ReverseXML: the same image, which the NameNode loads.
	xmlFile := filepath.Join(dir, "image.xml")
	os.WriteFile(xmlFile, []byte(x), 0o644)
	rebuilt := filepath.Join(dir, filepath.Base(img))
	c.run(t, c.confDir("nn"), "oiv", "-p", "ReverseXML", "-i", xmlFile, "-o", rebuilt)
	orig, _ := os.ReadFile(img)
	got, _ := os.ReadFile(rebuilt)
	if !bytes.Equal(orig, got) {
		t.Fatalf("ReverseXML image differs from the NameNode's (%d bytes, want %d)", len(got), len(orig))
	}
	md5a, _ := os.ReadFile(img + ".md5")
	md5b, _ := os.ReadFile(rebuilt + ".md5")
	if !bytes.Equal(md5a, md5b) {
		t.Fatalf("md5 files differ: %q vs %q", md5a, md5b)
	}
	c.kill(c.nn)
	for _, f := range []string{img, img + ".md5"} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	os.Rename(rebuilt, img)
	os.Rename(rebuilt+".md5", img+".md5")
	c.startNameNode()
	c.waitLive(1, 60*time.Second)
	if after := c.dfs(t, "-ls", "-R", "/"); after != before {
		t.Fatalf("namespace after a restart from the rebuilt image:\n%s\nbefore:\n%s", after, before)
	}
}
