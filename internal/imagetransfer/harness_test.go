package imagetransfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// TestMain fails the run if a test leaves a goroutine behind: servers,
// clients' connections and stall timers must all be stopped.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testNamespace = 4711

var nodeSI = StorageInfo{LayoutVersion: storage.NameNodeLayoutVersion, NamespaceID: testNamespace, CTime: 0, ClusterID: "CID-test"}

// nameDir makes an empty name directory (with current/) under the test's
// temporary directory and returns its root.
func nameDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	if err := os.MkdirAll(filepath.Join(d, storage.CurrentDirName), 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

// saveImage writes an image of n inodes for txid into dirs and returns its
// bytes and MD5.
func saveImage(t *testing.T, dirs []string, txid int64, namespace int32, n int) ([]byte, [16]byte) {
	t.Helper()
	const root = 16385
	inodes := []fsimage.Inode{{ID: root, IsDir: true, NsQuota: -1, DsQuota: -1,
		Perm: op.Perm{User: "hdfs", Group: "supergroup", Mode: 0o755}, Mtime: 1764622225000}}
	for i := 1; i < n; i++ {
		inodes = append(inodes, fsimage.Inode{ID: uint64(root + i), ParentID: root, Name: []byte(fmt.Sprintf("part-%05d", i)),
			Perm: op.Perm{User: "alice", Group: "staff", Mode: 0o644}, Mtime: 1764622225000 + int64(i), Atime: 1764622225000,
			NsQuota: -1, DsQuota: -1, Replication: 3, BlockSize: 128 << 20,
			Blocks: []op.Block{{ID: 1<<30 + int64(i), NumBytes: int64(i) * 1000, GenStamp: 1001}}})
	}
	h := fsimage.Header{LayoutVersion: storage.NameNodeLayoutVersion, NamespaceID: namespace, TxID: txid,
		LastInodeID: uint64(root + n), GenStamp: 1001, LastBlockID: 1<<30 + int64(n), NumInodes: uint64(n)}
	err := fsimage.Save(vfs.Default, dirs, h, func(fn func(*fsimage.Inode) error) error {
		for i := range inodes {
			if err := fn(&inodes[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	nd := storage.NewNameDir(dirs[0])
	data, err := os.ReadFile(nd.ImagePath(txid))
	if err != nil {
		t.Fatal(err)
	}
	md5Line, err := os.ReadFile(nd.ImageMD5Path(txid))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := fsimage.ParseMD5Line(md5Line, storage.ImageName(txid))
	if err != nil {
		t.Fatal(err)
	}
	return data, sum
}

// writeSegment writes the finalized segment first..last (a start record,
// mkdirs, an end record) into dir, a directory of segment files.
func writeSegment(t *testing.T, dir string, first, last int64) []byte {
	t.Helper()
	j := editlog.NewFileJournal(vfs.Default, dir)
	defer j.Close()
	if err := j.StartSegment(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	var err error
	for txid := first; txid <= last; txid++ {
		var o op.Op
		switch txid {
		case first:
			o = &op.StartLogSegment{}
		case last:
			o = &op.EndLogSegment{}
		default:
			o = &op.Mkdir{InodeID: uint64(16385 + txid), Path: fmt.Sprintf("/d%d", txid), Mtime: 1764622225000,
				Perm: op.Perm{User: "hdfs", Group: "supergroup", Mode: 0o755}}
		}
		if buf, err = editlog.EncodeRecord(buf, txid, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Write(context.Background(), buf, first, last); err != nil {
		t.Fatal(err)
	}
	if err := j.FinalizeSegment(context.Background(), first, last); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, editlog.FinalizedName(first, last)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// node is a servlet on a loopback HTTP server over real directories.
type node struct {
	srv       *Server
	url       string
	imageDirs []string
	editsDir  string

	mu struct {
		sync.Mutex
		accept bool
		state  string
		admit  func(txid, newest int64) error
		stored []Stored
	}
	done chan uploadResult // every upload's end, in order
}

type uploadResult struct {
	txid int64
	err  error
}

func newNode(t *testing.T, cfg Config, dirs int) *node {
	t.Helper()
	n := &node{done: make(chan uploadResult, 16)}
	for i := 0; i < dirs; i++ {
		n.imageDirs = append(n.imageDirs, nameDir(t))
	}
	n.editsDir = storage.NewNameDir(n.imageDirs[0]).Current()
	n.mu.accept, n.mu.state = true, "active"
	h := Host{
		FS:          vfs.Default,
		ImageDirs:   func() []string { return n.imageDirs },
		EditsDirs:   func() []string { return []string{n.editsDir} },
		StorageInfo: func() StorageInfo { return nodeSI },
		AcceptUploads: func() (bool, string) {
			n.mu.Lock()
			defer n.mu.Unlock()
			return n.mu.accept, n.mu.state
		},
		AdmitUpload: func(txid, newest int64) error {
			n.mu.Lock()
			f := n.mu.admit
			n.mu.Unlock()
			if f != nil {
				return f(txid, newest)
			}
			return nil
		},
		ImageStored: func(_ context.Context, s Stored) {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.mu.stored = append(n.mu.stored, s)
		},
	}
	h.Testing.UploadDone = func(txid int64, err error) { n.done <- uploadResult{txid, err} }
	srv, err := NewServer(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	n.srv = srv
	mux := http.NewServeMux()
	mux.Handle(Path, srv)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	n.url = hs.URL
	return n
}

func (n *node) stored() []Stored {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Stored(nil), n.mu.stored...)
}

// lastUpload waits for the server to finish handling the next upload.
func (n *node) lastUpload(t *testing.T) uploadResult {
	t.Helper()
	select {
	case r := <-n.done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not finish an upload within 10 s")
	}
	return uploadResult{}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// newClient returns a client; wrap, if set, may replace the request's body
// or the response's before they travel.
func newClient(t *testing.T, cfg Config, wrapReq func(io.ReadCloser) io.ReadCloser, wrapResp func(io.ReadCloser) io.ReadCloser) *Client {
	t.Helper()
	base := NewTransport(cfg)
	t.Cleanup(base.CloseIdleConnections)
	var tr http.RoundTripper = base
	if wrapReq != nil || wrapResp != nil {
		tr = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if wrapReq != nil && r.Body != nil {
				r = r.Clone(r.Context())
				r.Body = wrapReq(r.Body)
			}
			resp, err := base.RoundTrip(r)
			if err == nil && wrapResp != nil {
				resp.Body = wrapResp(resp.Body)
			}
			return resp, err
		})
	}
	c, err := NewClient(cfg, ClientOptions{FS: vfs.Default, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// flipper inverts the byte at offset at of what passes through it.
type flipper struct {
	io.ReadCloser
	at, off int64
}

func (f *flipper) Read(p []byte) (int, error) {
	n, err := f.ReadCloser.Read(p)
	if f.at >= f.off && f.at < f.off+int64(n) {
		p[f.at-f.off] ^= 0xff
	}
	f.off += int64(n)
	return n, err
}

// cutter passes limit bytes, then fails with err (a peer that died).
type cutter struct {
	io.ReadCloser
	left int64
	err  error
}

func (c *cutter) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, c.err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	return n, err
}

// gate signals started on its first read and then blocks until released.
type gate struct {
	io.ReadCloser
	once    sync.Once
	started chan struct{}
	release chan struct{}
}

func newGate(rc io.ReadCloser) *gate {
	return &gate{ReadCloser: rc, started: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) Read(p []byte) (int, error) {
	g.once.Do(func() {
		close(g.started)
		<-g.release
	})
	return g.ReadCloser.Read(p)
}

// files lists a name dir's current/ (or any dir), sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, storage.CurrentDirName)); err == nil {
		dir = filepath.Join(dir, storage.CurrentDirName)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// imageFiles are the names of image-related files in a name dir.
func imageFiles(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	for _, n := range files(t, dir) {
		if _, _, ok := storage.ParseImageName(n); ok {
			out = append(out, n)
		}
	}
	return strings.Join(out, " ")
}

func imageNames(txids ...int64) string {
	var out []string
	for _, tx := range txids {
		out = append(out, storage.ImageName(tx), storage.ImageName(tx)+storage.MD5Suffix)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func sameFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes differ from the %d sent", path, len(got), len(want))
	}
}

func wantErr(t *testing.T, err error, sentinels ...error) {
	t.Helper()
	for _, s := range sentinels {
		if !errors.Is(err, s) {
			t.Fatalf("err = %v, want one matching %v", err, s)
		}
	}
}
