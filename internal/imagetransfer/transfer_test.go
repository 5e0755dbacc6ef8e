package imagetransfer

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// testConfig uses a small chunk, so that test images span many chunks and
// uploads go chunked.
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.ChunkSize = 8 << 10
	return cfg
}

func TestDownloadImage(t *testing.T) {
	cfg := testConfig()
	src := newNode(t, cfg, 2)
	img10, sum10 := saveImage(t, src.imageDirs, 10, testNamespace, 3000)
	img20, sum20 := saveImage(t, src.imageDirs, 20, testNamespace, 4000)
	c := newClient(t, cfg, nil, nil)
	ctx := context.Background()

	dst := []string{nameDir(t), nameDir(t)}
	txid, sum, err := c.DownloadImage(ctx, src.url, 10, dst, GetOptions{StorageInfo: &nodeSI})
	if err != nil {
		t.Fatal(err)
	}
	if txid != 10 || sum != sum10 {
		t.Fatalf("DownloadImage = %d %x, want 10 %x", txid, sum, sum10)
	}
	for _, d := range dst {
		if got := imageFiles(t, d); got != imageNames(10) {
			t.Fatalf("%s holds %q", d, got)
		}
		sameFile(t, storage.NewNameDir(d).ImagePath(10), img10)
	}

	txid, sum, err = c.DownloadImage(ctx, src.url+"/", Latest, dst, GetOptions{BootstrapStandby: true})
	if err != nil || txid != 20 || sum != sum20 {
		t.Fatalf("latest: %d %x %v, want 20 %x", txid, sum, err, sum20)
	}
	sameFile(t, storage.NewNameDir(dst[1]).ImagePath(20), img20)
	// What arrived loads.
	loaded, err := fsimage.Load(vfs.Default, dst, func(h fsimage.Header, r *fsimage.Reader) error {
		for {
			if _, err := r.Next(); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
		}
	})
	if err != nil || loaded != 20 {
		t.Fatalf("Load = %d, %v", loaded, err)
	}

	_, _, err = c.DownloadImage(ctx, src.url, 15, dst, GetOptions{})
	wantErr(t, err, ErrNotFound)
	if !strings.Contains(err.Error(), "Could not find image with txid 15") {
		t.Fatalf("not found: %v", err)
	}
	other := nodeSI
	other.ClusterID = "CID-other"
	_, _, err = c.DownloadImage(ctx, src.url, 10, []string{nameDir(t)}, GetOptions{StorageInfo: &other})
	wantErr(t, err, ErrStorageMismatch)
	if !strings.Contains(err.Error(), "This namenode has storage info "+nodeSI.String()+" but the secondary expected "+other.String()+" (clusterID differ)") {
		t.Fatalf("mismatch text: %v", err)
	}
}

func TestDownloadEdits(t *testing.T) {
	cfg := testConfig()
	src := newNode(t, cfg, 1)
	seg := writeSegment(t, src.editsDir, 1, 2000)
	c := newClient(t, cfg, nil, nil)
	ctx := context.Background()
	dst := t.TempDir()
	if err := c.DownloadEdits(ctx, src.url, 1, 2000, dst, GetOptions{StorageInfo: &nodeSI}); err != nil {
		t.Fatal(err)
	}
	name := editlog.FinalizedName(1, 2000)
	if got := strings.Join(files(t, dst), " "); got != name {
		t.Fatalf("dir holds %q, want only %s", got, name)
	}
	sameFile(t, filepath.Join(dst, name), seg)
	// Already there: not fetched again (the server no longer has it).
	if err := os.Remove(filepath.Join(src.editsDir, name)); err != nil {
		t.Fatal(err)
	}
	if err := c.DownloadEdits(ctx, src.url, 1, 2000, dst, GetOptions{}); err != nil {
		t.Fatal(err)
	}
	err := c.DownloadEdits(ctx, src.url, 2001, 2005, dst, GetOptions{})
	wantErr(t, err, ErrNotFound)
	if !strings.Contains(err.Error(), "No edits file for txid 2001-2005 exists!") {
		t.Fatalf("not found: %v", err)
	}
}

// TestDownloadEditsChecksRecords serves files whose names promise other
// records than they hold: nothing may be kept.
func TestDownloadEditsChecksRecords(t *testing.T) {
	cfg := testConfig()
	src := newNode(t, cfg, 1)
	writeSegment(t, src.editsDir, 1, 10)
	writeSegment(t, src.editsDir, 11, 20)
	rename := func(from, to string) {
		if err := os.Rename(filepath.Join(src.editsDir, from), filepath.Join(src.editsDir, to)); err != nil {
			t.Fatal(err)
		}
	}
	rename(editlog.FinalizedName(1, 10), editlog.FinalizedName(1, 12))   // fewer records than named
	rename(editlog.FinalizedName(11, 20), editlog.FinalizedName(11, 15)) // more
	c := newClient(t, cfg, nil, nil)
	dst := t.TempDir()
	for _, r := range [][2]int64{{1, 12}, {11, 15}} {
		err := c.DownloadEdits(context.Background(), src.url, r[0], r[1], dst, GetOptions{})
		wantErr(t, err, ErrBadSegment)
		if got := files(t, dst); len(got) != 0 {
			t.Fatalf("segment %d-%d left %v", r[0], r[1], got)
		}
	}
	// A byte flipped in flight fails the record's checksum.
	writeSegment(t, src.editsDir, 21, 30)
	c = newClient(t, cfg, nil, func(rc io.ReadCloser) io.ReadCloser { return &flipper{ReadCloser: rc, at: 40} })
	err := c.DownloadEdits(context.Background(), src.url, 21, 30, dst, GetOptions{})
	wantErr(t, err, ErrBadSegment, editlog.ErrCorrupt)
	if got := files(t, dst); len(got) != 0 {
		t.Fatalf("corrupt segment left %v", got)
	}
}

func TestUploadImage(t *testing.T) {
	for _, chunk := range []int{8 << 10, 1 << 20} { // chunked, and with Content-Length
		cfg := DefaultConfig()
		cfg.ChunkSize = chunk
		dst := newNode(t, cfg, 2)
		saveImage(t, dst.imageDirs, 20, testNamespace, 10)
		up := nameDir(t)
		img, sum := saveImage(t, []string{up}, 30, testNamespace, 5000)
		c := newClient(t, cfg, nil, nil)
		if err := c.UploadImage(context.Background(), dst.url, 30, up, nodeSI); err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		if r := dst.lastUpload(t); r.err != nil {
			t.Fatal(r.err)
		}
		for _, d := range dst.imageDirs {
			if got := imageFiles(t, d); got != imageNames(20, 30) {
				t.Fatalf("%s holds %q", d, got)
			}
			sameFile(t, storage.NewNameDir(d).ImagePath(30), img)
			line, _ := os.ReadFile(storage.NewNameDir(d).ImageMD5Path(30))
			if string(line) != string(fsimage.MD5Line(sum, storage.ImageName(30))) {
				t.Fatalf(".md5 is %q", line)
			}
		}
		st := dst.stored()
		if len(st) != 1 || st[0].TxID != 30 || st[0].MD5 != sum || st[0].Size != int64(len(img)) ||
			len(st[0].Dirs) != 2 || st[0].Header.NamespaceID != testNamespace || len(st[0].Failed) != 0 {
			t.Fatalf("ImageStored got %+v", st)
		}
	}
}

func TestUploadRefused(t *testing.T) {
	cfg := testConfig()
	dst := newNode(t, cfg, 1)
	saveImage(t, dst.imageDirs, 20, testNamespace, 10)
	up := nameDir(t)
	saveImage(t, []string{up}, 10, testNamespace, 100)
	saveImage(t, []string{up}, 20, testNamespace, 100)
	saveImage(t, []string{up}, 30, testNamespace, 100)
	wrongNS := nameDir(t)
	saveImage(t, []string{wrongNS}, 30, testNamespace+1, 100)
	c := newClient(t, cfg, nil, nil)
	ctx := context.Background()
	otherCluster := nodeSI
	otherCluster.ClusterID = "CID-elsewhere"
	otherLayout := nodeSI
	otherLayout.LayoutVersion--

	cases := []struct {
		name   string
		setup  func()
		dir    string
		txid   int64
		si     StorageInfo
		status int
		is     error
		text   string
	}{
		{"wrong cluster", nil, up, 30, otherCluster, 403, ErrStorageMismatch, "(clusterID differ)"},
		{"wrong layout", nil, up, 30, otherLayout, 403, ErrStorageMismatch, "(layoutVersion differ)"},
		{"image of another namespace", nil, wrongNS, 30, nodeSI, 403, ErrStorageMismatch, "the image is of namespace 4712, this node's is 4711"},
		{"same txid", nil, up, 20, nodeSI, 409, ErrOlderImage,
			"Either current namenode has checkpointed or another checkpointer already uploaded an checkpoint for txid 20"},
		{"older txid", nil, up, 10, nodeSI, 409, ErrOlderImage, "is older than this node's newest image, for txid 20"},
		{"standby", func() { dst.mu.accept, dst.mu.state = false, "standby" }, up, 30, nodeSI, 417, ErrNotAccepting,
			"is currently not in a state which can accept uploads of new fsimages. State: standby"},
		{"admission", func() {
			dst.mu.admit = func(txid, newest int64) error {
				return errors.New("Rejecting a fsimage due to small time delta and txnid delta")
			}
		}, up, 30, nodeSI, 409, ErrOlderImage, "small time delta"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dst.mu.Lock()
			dst.mu.accept, dst.mu.state, dst.mu.admit = true, "active", nil
			if tc.setup != nil {
				tc.setup()
			}
			dst.mu.Unlock()
			err := c.UploadImage(ctx, dst.url, tc.txid, tc.dir, tc.si)
			var he *HTTPError
			if !errors.As(err, &he) || he.Status != tc.status || !errors.Is(err, tc.is) || !strings.Contains(he.Message, tc.text) {
				t.Fatalf("err = %v; want status %d matching %v with %q", err, tc.status, tc.is, tc.text)
			}
			if r := dst.lastUpload(t); r.err == nil {
				t.Fatal("server says stored")
			}
			if got := imageFiles(t, dst.imageDirs[0]); got != imageNames(20) {
				t.Fatalf("server holds %q", got)
			}
		})
	}

	small := cfg
	small.MaxImageSize = 1000
	tiny := newNode(t, small, 1)
	err := c.UploadImage(ctx, tiny.url, 30, up, nodeSI)
	wantErr(t, err, ErrTooLarge)
	tiny.lastUpload(t)
	if len(dst.stored())+len(tiny.stored()) != 0 {
		t.Fatal("a refused upload was reported stored")
	}
}

// TestUploadCorruptedInFlight flips one byte of the body on its way: the
// server must not keep the image under any name.
func TestUploadCorruptedInFlight(t *testing.T) {
	cfg := testConfig()
	up := nameDir(t)
	img, _ := saveImage(t, []string{up}, 30, testNamespace, 5000)
	for _, at := range []int64{int64(len(img)) - 10, int64(len(img)) / 2, 20} {
		dst := newNode(t, cfg, 2)
		c := newClient(t, cfg, func(rc io.ReadCloser) io.ReadCloser { return &flipper{ReadCloser: rc, at: at} }, nil)
		err := c.UploadImage(context.Background(), dst.url, 30, up, nodeSI)
		if at == 20 { // inside the header: not an image
			wantErr(t, err, ErrBadRequest)
		} else {
			wantErr(t, err, ErrBadRequest, ErrDigestMismatch)
		}
		if r := dst.lastUpload(t); r.err == nil {
			t.Fatal("server says stored")
		}
		for _, d := range dst.imageDirs {
			if got := imageFiles(t, d); got != "" {
				t.Fatalf("flip at %d: %s holds %q", at, d, got)
			}
		}
	}
}

// TestDownloadCorruptedInFlight: the image arrives damaged, so no
// fsimage_<txid> may appear in any directory.
func TestDownloadCorruptedInFlight(t *testing.T) {
	cfg := testConfig()
	src := newNode(t, cfg, 1)
	img, _ := saveImage(t, src.imageDirs, 10, testNamespace, 5000)
	c := newClient(t, cfg, nil, func(rc io.ReadCloser) io.ReadCloser { return &flipper{ReadCloser: rc, at: int64(len(img)) - 100} })
	dst := []string{nameDir(t), nameDir(t)}
	_, _, err := c.DownloadImage(context.Background(), src.url, 10, dst, GetOptions{})
	wantErr(t, err, ErrDigestMismatch, fsimage.ErrMD5Mismatch)
	for _, d := range dst {
		if got := imageFiles(t, d); got != "" {
			t.Fatalf("%s holds %q", d, got)
		}
	}
}

// TestUploadCutShort: the uploader dies in the middle of the body. The
// server keeps no image, and after CleanCheckpoints no checkpoint file.
func TestUploadCutShort(t *testing.T) {
	for _, chunk := range []int{8 << 10, 1 << 20} {
		cfg := DefaultConfig()
		cfg.ChunkSize = chunk
		dst := newNode(t, cfg, 2)
		up := nameDir(t)
		img, _ := saveImage(t, []string{up}, 30, testNamespace, 5000)
		c := newClient(t, cfg, func(rc io.ReadCloser) io.ReadCloser {
			return &cutter{ReadCloser: rc, left: int64(len(img)) / 2, err: errors.New("uploader died")}
		}, nil)
		if err := c.UploadImage(context.Background(), dst.url, 30, up, nodeSI); err == nil {
			t.Fatal("upload of half an image succeeded")
		}
		r := dst.lastUpload(t)
		wantErr(t, r.err, ErrLength)
		for _, d := range dst.imageDirs {
			if err := fsimage.CleanCheckpoints(vfs.Default, d); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(files(t, d), " "); got != "" {
				t.Fatalf("chunk %d: %s holds %q", chunk, d, got)
			}
		}
	}
}

// TestDownloadCutShort: the server's answer breaks off; nothing is kept.
func TestDownloadCutShort(t *testing.T) {
	cfg := testConfig()
	src := newNode(t, cfg, 1)
	img, _ := saveImage(t, src.imageDirs, 10, testNamespace, 5000)
	seg := writeSegment(t, src.editsDir, 1, 500)
	cut := func(n int) func(io.ReadCloser) io.ReadCloser {
		return func(rc io.ReadCloser) io.ReadCloser {
			return &cutter{ReadCloser: rc, left: int64(n), err: io.ErrUnexpectedEOF}
		}
	}
	c := newClient(t, cfg, nil, cut(len(img)/3))
	dst := nameDir(t)
	_, _, err := c.DownloadImage(context.Background(), src.url, 10, []string{dst}, GetOptions{})
	wantErr(t, err, ErrLength)
	edits := t.TempDir()
	c = newClient(t, cfg, nil, cut(len(seg)/2))
	err = c.DownloadEdits(context.Background(), src.url, 1, 500, edits, GetOptions{})
	wantErr(t, err, ErrLength)
	if got := strings.Join(files(t, dst), " ") + strings.Join(files(t, edits), " "); got != "" {
		t.Fatalf("left behind: %q", got)
	}
}

// TestConcurrentUploads holds one upload in the middle of its body while
// others of the same or an older txid arrive: they are refused, the first
// one completes.
func TestConcurrentUploads(t *testing.T) {
	cfg := testConfig()
	dst := newNode(t, cfg, 1)
	up := nameDir(t)
	saveImage(t, []string{up}, 30, testNamespace, 5000)
	saveImage(t, []string{up}, 25, testNamespace, 100)
	gates := make(chan *gate, 1)
	slow := newClient(t, cfg, func(rc io.ReadCloser) io.ReadCloser {
		g := newGate(rc)
		gates <- g
		return g
	}, nil)
	fast := newClient(t, cfg, nil, nil)
	ctx := context.Background()

	first := make(chan error, 1)
	go func() { first <- slow.UploadImage(ctx, dst.url, 30, up, nodeSI) }()
	g := <-gates
	<-g.started // the server reads the body: the upload holds txid 30

	err := fast.UploadImage(ctx, dst.url, 30, up, nodeSI)
	wantErr(t, err, ErrConflict)
	if !strings.Contains(err.Error(), "already in the process of uploading a checkpoint made at transaction ID 30") {
		t.Fatalf("same txid: %v", err)
	}
	dst.lastUpload(t)
	err = fast.UploadImage(ctx, dst.url, 25, up, nodeSI)
	wantErr(t, err, ErrConflict)
	if !strings.Contains(err.Error(), "made up to transaction ID 30") {
		t.Fatalf("older txid: %v", err)
	}
	dst.lastUpload(t)
	if _, err := dst.srv.Reserve(30, "saveNamespace"); !errors.Is(err, ErrConflict) {
		t.Fatalf("Reserve during the upload: %v", err)
	}

	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if r := dst.lastUpload(t); r.err != nil || r.txid != 30 {
		t.Fatalf("first upload: %+v", r)
	}
	if got := imageFiles(t, dst.imageDirs[0]); got != imageNames(30) {
		t.Fatalf("server holds %q", got)
	}

	// A save the node announced itself holds its txid the same way.
	saveImage(t, []string{up}, 40, testNamespace, 100)
	release, err := dst.srv.Reserve(40, "saveNamespace")
	if err != nil {
		t.Fatal(err)
	}
	err = fast.UploadImage(ctx, dst.url, 40, up, nodeSI)
	wantErr(t, err, ErrConflict)
	if !strings.Contains(err.Error(), "(saveNamespace)") {
		t.Fatalf("during a local save: %v", err)
	}
	dst.lastUpload(t)
	release()
	if err := fast.UploadImage(ctx, dst.url, 40, up, nodeSI); err != nil {
		t.Fatal(err)
	}
	dst.lastUpload(t)
}

// TestStallTimesOut: a server that stops sending in the middle of an image
// is given up on after dfs.image.transfer.timeout of the client's clock.
func TestStallTimesOut(t *testing.T) {
	img, sum := saveImage(t, []string{nameDir(t)}, 10, testNamespace, 5000)
	stop := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(img)))
		w.Header().Set(HeaderMD5, hex.EncodeToString(sum[:]))
		w.Header().Set(HeaderFileName, storage.ImageName(10))
		_, _ = w.Write(img[:len(img)/2])
		w.(http.Flusher).Flush()
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	defer hs.Close()
	defer close(stop)

	clk := clock.NewManual(t0)
	cfg := testConfig()
	c, err := NewClient(cfg, ClientOptions{FS: vfs.Default, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dst := nameDir(t)
	done := make(chan error, 1)
	go func() {
		_, _, err := c.DownloadImage(context.Background(), hs.URL, 10, []string{dst}, GetOptions{})
		done <- err
	}()
	for i := 0; ; i++ {
		select {
		case err := <-done:
			wantErr(t, err, ErrTimeout)
			if got := imageFiles(t, dst); got != "" {
				t.Fatalf("left behind: %q", got)
			}
			return
		case <-time.After(5 * time.Millisecond):
		}
		if i > 1000 {
			t.Fatal("the download did not time out")
		}
		clk.Advance(cfg.Timeout) // fires once the client waits with nothing arriving
	}
}

func TestServerRefusesBadRequests(t *testing.T) {
	dst := newNode(t, testConfig(), 1)
	for _, c := range []struct {
		method, query string
		status        int
		text          string
	}{
		{"POST", "getimage=1&txid=1", 405, "method POST not allowed"},
		{"GET", "getimage=1&txid=x", 400, `Illegal parameters to TransferFsImage: txid="x" is not a decimal number`},
		{"GET", "getedit=1&startTxId=1", 400, "getedit needs startTxId and endTxId"},
		{"PUT", "txid=1&storageInfo=" + nodeSI.String() + "&File-Length=10", 400, "PUT needs the X-MD5-Digest header"},
		{"GET", "getimage=1&txid=latest", 404, "Could not find image"},
		{"GET", "getimage=1&txid=1&storageInfo=1:2:3:CID-x", 403, "This namenode has storage info"},
	} {
		req, _ := http.NewRequest(c.method, dst.url+Path+"?"+c.query, strings.NewReader("0123456789"))
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(body), c.text) {
			t.Errorf("%s ?%s: %d %q, want %d with %q", c.method, c.query, resp.StatusCode, body, c.status, c.text)
		}
		if c.status == 405 && resp.Header.Get("Allow") != "GET, PUT" {
			t.Errorf("405 without Allow: %v", resp.Header)
		}
	}
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}

func TestClientAddresses(t *testing.T) {
	c := newClient(t, testConfig(), nil, nil)
	ctx := context.Background()
	dirs := []string{nameDir(t)}
	for _, c2 := range []struct {
		url string
		is  error
	}{
		{"https://nn1:9871", ErrHTTPSNotSupported},
		{"HTTPS://nn1:9871", ErrHTTPSNotSupported},
		{"nn1:9870", ErrBadURL},
		{"hdfs://nn1:8020", ErrBadURL},
		{"http://", ErrBadURL},
		{"http://u:p@nn1:9870", ErrBadURL},
		{"http://nn1:9870/?x=1", ErrBadURL},
	} {
		_, _, err := c.DownloadImage(ctx, c2.url, 1, dirs, GetOptions{})
		wantErr(t, err, c2.is)
		wantErr(t, c.UploadImage(ctx, c2.url, 1, dirs[0], nodeSI), c2.is)
		wantErr(t, c.DownloadEdits(ctx, c2.url, 1, 2, t.TempDir(), GetOptions{}), c2.is)
	}
}

func TestCleanTmpEdits(t *testing.T) {
	dir := t.TempDir()
	keep := editlog.FinalizedName(1, 5)
	for _, n := range []string{TmpEditsName(6, 9, 1764622225000), keep, TmpEditsName(10, 12, 1)} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := CleanTmpEdits(vfs.Default, dir); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(files(t, dir), " "); got != keep {
		t.Fatalf("left %q", got)
	}
	if n := TmpEditsName(6, 9, 1764622225000); n != "edits_tmp_0000000000000000006-0000000000000000009_0000001764622225000" {
		t.Fatalf("TmpEditsName = %s", n)
	}
	if _, _, _, ok := editlog.ParseSegmentName(TmpEditsName(6, 9, 1)); ok {
		t.Fatal("editlog takes a download in progress for a segment")
	}
}

// TestUploadSomeDirsFail: a name dir that cannot take the image does not
// fail the upload while another can; the node hears which one failed.
func TestUploadSomeDirsFail(t *testing.T) {
	cfg := testConfig()
	dst := newNode(t, cfg, 1)
	broken := filepath.Join(t.TempDir(), "gone") // no current/: creating the checkpoint fails
	dst.imageDirs = append(dst.imageDirs, broken)
	up := nameDir(t)
	img, _ := saveImage(t, []string{up}, 30, testNamespace, 2000)
	c := newClient(t, cfg, nil, nil)
	if err := c.UploadImage(context.Background(), dst.url, 30, up, nodeSI); err != nil {
		t.Fatal(err)
	}
	if r := dst.lastUpload(t); r.err != nil {
		t.Fatal(r.err)
	}
	sameFile(t, storage.NewNameDir(dst.imageDirs[0]).ImagePath(30), img)
	st := dst.stored()
	if len(st) != 1 || len(st[0].Dirs) != 1 || st[0].Dirs[0] != dst.imageDirs[0] || len(st[0].Failed) != 1 || st[0].Failed[0].Dir != broken {
		t.Fatalf("ImageStored got %+v", st)
	}

	// With no directory able to store it, the upload fails.
	dst.imageDirs = []string{broken}
	err := c.UploadImage(context.Background(), dst.url, 30, up, nodeSI)
	wantErr(t, err, ErrServer)
	if !strings.Contains(err.Error(), "could not be stored in any name directory") {
		t.Fatalf("stored nowhere: %v", err)
	}
	dst.lastUpload(t)
}

// TestServerReadTimeout: an uploader that stops sending is cut off after
// dfs.image.transfer.timeout instead of holding the handler. The test waits
// for the server to give up; it asserts nothing about how long that took.
func TestServerReadTimeout(t *testing.T) {
	cfg := testConfig()
	cfg.Timeout = 100 * time.Millisecond
	dst := newNode(t, cfg, 1)
	up := nameDir(t)
	saveImage(t, []string{up}, 30, testNamespace, 2000)
	gates := make(chan *gate, 1)
	ccfg := cfg
	ccfg.Timeout = time.Minute // the client waits; the server must not
	c := newClient(t, ccfg, func(rc io.ReadCloser) io.ReadCloser {
		g := newGate(rc)
		gates <- g
		return g
	}, nil)
	done := make(chan error, 1)
	go func() { done <- c.UploadImage(context.Background(), dst.url, 30, up, nodeSI) }()
	g := <-gates
	select {
	case r := <-dst.done:
		wantErr(t, r.err, ErrTimeout)
	case <-time.After(10 * time.Second):
		t.Fatal("the server still waits for the stalled upload")
	}
	close(g.release)
	if err := <-done; err == nil {
		t.Fatal("the stalled upload succeeded")
	}
	if got := imageFiles(t, dst.imageDirs[0]); got != "" {
		t.Fatalf("server holds %q", got)
	}
}

// TestMountedOnWebServer runs the servlet where the roles mount it, on
// internal/web's server: an upload and a download go through.
func TestMountedOnWebServer(t *testing.T) {
	cfg := testConfig()
	dst := newNode(t, cfg, 1) // its Server; the httptest one is not used
	ws, err := web.New(web.Config{Addr: "127.0.0.1:0", Role: "NameNode"})
	if err != nil {
		t.Fatal(err)
	}
	ws.Handle(Path, dst.srv)
	ws.Start()
	defer ws.Close(context.Background())
	base := "http://" + ws.Addr().String()

	up := nameDir(t)
	img, sum := saveImage(t, []string{up}, 30, testNamespace, 3000)
	c := newClient(t, cfg, nil, nil)
	if err := c.UploadImage(context.Background(), base, 30, up, nodeSI); err != nil {
		t.Fatal(err)
	}
	if r := dst.lastUpload(t); r.err != nil {
		t.Fatal(r.err)
	}
	back := nameDir(t)
	txid, got, err := c.DownloadImage(context.Background(), base, Latest, []string{back}, GetOptions{StorageInfo: &nodeSI})
	if err != nil || txid != 30 || got != sum {
		t.Fatalf("download: %d %x %v", txid, got, err)
	}
	sameFile(t, storage.NewNameDir(back).ImagePath(30), img)
}

// plainWriter hides the connection behind a ResponseWriter without Unwrap.
type plainWriter struct{ w http.ResponseWriter }

func (p plainWriter) Header() http.Header         { return p.w.Header() }
func (p plainWriter) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p plainWriter) WriteHeader(code int)        { p.w.WriteHeader(code) }

// TestNoDeadlinesIsReported: behind a writer that takes no deadlines the
// transfer still works, and the node is told it has no timeout.
func TestNoDeadlinesIsReported(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	h := Host{
		FS:          vfs.Default,
		ImageDirs:   func() []string { return nil },
		StorageInfo: func() StorageInfo { return nodeSI },
		Logger:      slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &logs}, nil)),
	}
	src := nameDir(t)
	img, _ := saveImage(t, []string{src}, 10, testNamespace, 3000)
	h.ImageDirs = func() []string { return []string{src} }
	srv, err := NewServer(testConfig(), h)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(plainWriter{w}, r)
	}))
	defer hs.Close()
	c := newClient(t, testConfig(), nil, nil)
	dst := nameDir(t)
	if _, _, err := c.DownloadImage(context.Background(), hs.URL, 10, []string{dst}, GetOptions{}); err != nil {
		t.Fatal(err)
	}
	sameFile(t, storage.NewNameDir(dst).ImagePath(10), img)
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(logs.String(), "takes no deadlines"); n != 1 {
		t.Fatalf("warned %d times:\n%s", n, logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
