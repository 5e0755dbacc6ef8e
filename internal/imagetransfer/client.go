package imagetransfer

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// TmpEditsPrefix begins the name a segment is downloaded under
// (edits_tmp_<first:019d>-<last:019d>_<millis:019d>, Hadoop's name) before
// it is renamed into place. editlog ignores such files; CleanTmpEdits
// removes them.
const TmpEditsPrefix = "edits_tmp_"

// TmpEditsName is the download name of segment first..last begun at
// millis (Unix milliseconds).
func TmpEditsName(first, last, millis int64) string {
	return fmt.Sprintf("%s%019d-%019d_%019d", TmpEditsPrefix, first, last, millis)
}

// expectContinueWait is how long an upload waits for the server's
// "100 Continue" (or its refusal) before sending the body anyway.
const expectContinueWait = 5 * time.Second

// maxErrorBody bounds the part of a refusal's body kept as its message.
const maxErrorBody = 4 << 10

// ClientOptions are the client's collaborators.
type ClientOptions struct {
	// FS is the file system downloads are written to and uploads read from
	// (vfs.Default). Required.
	FS vfs.FS
	// Clock paces throttled uploads and times out stalled transfers
	// (clock.Real when nil).
	Clock clock.Clock
	// Transport carries the requests; nil means NewTransport(cfg). Tests
	// wrap it to damage requests or answers in flight.
	Transport http.RoundTripper
}

// Client downloads images and edit segments from, and uploads images to, an
// image servlet. Safe for concurrent use; it starts no goroutines besides
// those of its HTTP transport's connections (closed by Close) and a
// per-transfer timer that runs only when a transfer stalls.
type Client struct {
	cfg  Config
	fsys vfs.FS
	clk  clock.Clock
	hc   *http.Client
}

// NewTransport returns the transport a Client uses by default: no proxy
// (image traffic stays inside the cluster, whatever HTTP_PROXY says), no
// compression (Content-Length must count the file's bytes), dial timeout
// cfg.Timeout, and waiting for "100 Continue" before an upload's body.
func NewTransport(cfg Config) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}).DialContext,
		DisableCompression:    true,
		ExpectContinueTimeout: expectContinueWait,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
	}
}

// NewClient returns a Client for cfg.
func NewClient(cfg Config, o ClientOptions) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if o.FS == nil {
		return nil, errors.New("imagetransfer: NewClient needs ClientOptions.FS")
	}
	c := &Client{cfg: cfg, fsys: o.FS, clk: o.Clock}
	if c.clk == nil {
		c.clk = clock.Real{}
	}
	tr := o.Transport
	if tr == nil {
		tr = NewTransport(cfg)
	}
	c.hc = &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // an image servlet does not redirect
		},
	}
	return c, nil
}

// Close closes the idle connections of the client's transport.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// GetOptions qualify a download.
type GetOptions struct {
	// StorageInfo, if set, is sent as storageInfo: the server refuses (403)
	// unless it is its own. A downloaded image must also be of its namespace
	// and layout version.
	StorageInfo *StorageInfo
	// BootstrapStandby marks the download as hdfs namenode -bootstrapStandby's;
	// the server then sends at dfs.image.transfer-bootstrap-standby.bandwidthPerSec.
	BootstrapStandby bool
}

// endpoint turns a base address (http://host:port, as in
// dfs.namenode.http-address) into the servlet's URL.
func endpoint(base string) (*url.URL, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrBadURL, clip(base), err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
	case "https":
		return nil, fmt.Errorf("%w (%s); use the http address (dfs.namenode.http-address)", ErrHTTPSNotSupported, clip(base))
	default:
		return nil, fmt.Errorf("%w %q: want http://host:port", ErrBadURL, clip(base))
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, fmt.Errorf("%w %q: want http://host:port", ErrBadURL, clip(base))
	}
	u.Scheme = "http"
	u.Path = strings.TrimSuffix(u.Path, "/") + Path
	u.RawPath = ""
	return u, nil
}

// transfer is one request under a watchdog that cancels it when nothing
// moves for Config.Timeout.
type transfer struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	wd     *watchdog
}

func (c *Client) begin(ctx context.Context) *transfer {
	cctx, cancel := context.WithCancelCause(ctx)
	return &transfer{ctx: cctx, cancel: cancel, wd: startWatchdog(c.clk, c.cfg.Timeout, cancel)}
}

func (t *transfer) end() {
	t.wd.stop()
	t.cancel(nil)
}

// fail returns err, or the timeout if the watchdog ended the transfer.
func (t *transfer) fail(what string, err error) error {
	if cause := context.Cause(t.ctx); cause != nil && errors.Is(cause, ErrTimeout) && !errors.Is(err, ErrTimeout) {
		return fmt.Errorf("%s: %w", what, cause)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// get sends a GET and returns the 200 answer; anything else is an error.
func (c *Client) get(t *transfer, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(t.ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, t.fail("imagetransfer: GET "+u.Redacted(), err)
	}
	t.wd.kick()
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, refusal(http.MethodGet, u, resp)
	}
	return resp, nil
}

// refusal reads a non-200 answer into an *HTTPError.
func refusal(method string, u *url.URL, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	msg := strings.TrimSpace(string(b))
	if msg == "" {
		msg = resp.Status
	}
	return &HTTPError{Method: method, URL: u.Redacted(), Status: resp.StatusCode, Message: msg}
}

// DownloadImage fetches image txid (or the newest, txid Latest) from the
// servlet at baseURL into every name directory in dirs: each gets
// current/fsimage.ckpt_<txid>, the bytes must hash to the server's
// X-MD5-Digest, and only then is it renamed to fsimage_<txid> beside its
// .md5 (fsimage.SaveEncoded). It returns the image's txid and MD5. On error
// no directory holds a new fsimage_<txid>, except with an
// *fsimage.SaveError, which lists the directories that do.
func (c *Client) DownloadImage(ctx context.Context, baseURL string, txid int64, dirs []string, o GetOptions) (int64, [16]byte, error) {
	var sum [16]byte
	if txid < Latest {
		return 0, sum, fmt.Errorf("imagetransfer: download image: invalid txid %d", txid)
	}
	if len(dirs) == 0 {
		return 0, sum, errors.New("imagetransfer: download image: no name directories to store it in")
	}
	u, err := endpoint(baseURL)
	if err != nil {
		return 0, sum, err
	}
	u.RawQuery = imageQuery(txid, o.StorageInfo, o.BootstrapStandby)
	t := c.begin(ctx)
	defer t.end()
	resp, err := c.get(t, u)
	if err != nil {
		return 0, sum, err
	}
	defer resp.Body.Close()

	what := "imagetransfer: GET " + u.Redacted()
	name := resp.Header.Get(HeaderFileName)
	kind, got, ok := storage.ParseImageName(name)
	switch {
	case !ok || kind != storage.KindImage:
		return 0, sum, fmt.Errorf("%w: %s: %s %q is not an image file name", ErrBadResponse, what, HeaderFileName, clip(name))
	case txid != Latest && got != txid:
		return 0, sum, fmt.Errorf("%w: %s: asked for image %d, the server sends %s", ErrBadResponse, what, txid, name)
	case resp.ContentLength < 0:
		return 0, sum, fmt.Errorf("%w: %s: no Content-Length", ErrBadResponse, what)
	}
	if sum, err = parseMD5(resp.Header.Get(HeaderMD5)); err != nil {
		return 0, sum, fmt.Errorf("%w: %s: %v", ErrBadResponse, what, err)
	}
	body := newExactReader(&chunkReader{ctx: t.ctx, r: resp.Body, chunk: c.cfg.ChunkSize, kick: t.wd.kick},
		resp.ContentLength, "download of "+name)
	hdr, full, err := peekHeader(body, resp.ContentLength)
	if err != nil {
		return 0, sum, t.fail(what, fmt.Errorf("the answer does not start with an image header: %w", err))
	}
	switch si := o.StorageInfo; {
	case hdr.TxID != got:
		return 0, sum, fmt.Errorf("%w: %s: %s holds an image of txid %d", ErrBadResponse, what, name, hdr.TxID)
	case si != nil && (hdr.NamespaceID != si.NamespaceID || hdr.LayoutVersion != si.LayoutVersion):
		return 0, sum, fmt.Errorf("%w: %s: the image is of namespace %d layout %d, want %d layout %d",
			ErrStorageMismatch, what, hdr.NamespaceID, hdr.LayoutVersion, si.NamespaceID, si.LayoutVersion)
	}
	if err := fsimage.SaveEncoded(c.fsys, dirs, got, full, &sum); err != nil {
		var serr *fsimage.SaveError
		switch {
		case errors.As(err, &serr):
			return got, sum, err
		case errors.Is(err, fsimage.ErrMD5Mismatch):
			return 0, sum, fmt.Errorf("%w: %s: %w", ErrDigestMismatch, what, err)
		}
		return 0, sum, t.fail(what, err)
	}
	return got, sum, nil
}

// DownloadEdits fetches the finalized segment first..last from the servlet
// at baseURL into directory dir (which holds segment files, e.g. a name
// dir's current/). The bytes go to a temporary file (TmpEditsName), which is
// synced and read back with editlog's decoder: it must hold exactly the
// records first..last, starting with the segment's start record. Only then
// is it renamed to edits_<first>-<last> and the directory synced. A segment
// already present in dir is not fetched again. On error nothing is left
// under either name.
func (c *Client) DownloadEdits(ctx context.Context, baseURL string, first, last int64, dir string, o GetOptions) (err error) {
	if first < 1 || last < first {
		return fmt.Errorf("imagetransfer: download edits: invalid segment %d-%d", first, last)
	}
	name := editlog.FinalizedName(first, last)
	final := filepath.Join(dir, name)
	if _, err := c.fsys.Stat(final); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("imagetransfer: download edits: %w", err)
	}
	u, err := endpoint(baseURL)
	if err != nil {
		return err
	}
	u.RawQuery = editsQuery(first, last, o.StorageInfo)
	t := c.begin(ctx)
	defer t.end()
	resp, err := c.get(t, u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	what := "imagetransfer: GET " + u.Redacted()
	if h := resp.Header.Get(HeaderFileName); h != "" && h != name {
		return fmt.Errorf("%w: %s: asked for %s, the server sends %q", ErrBadResponse, what, name, clip(h))
	}
	if resp.ContentLength < 0 {
		return fmt.Errorf("%w: %s: no Content-Length", ErrBadResponse, what)
	}

	tmp := filepath.Join(dir, TmpEditsName(first, last, c.clk.Now().UnixMilli()))
	f, err := c.fsys.Create(tmp)
	if err != nil {
		return fmt.Errorf("imagetransfer: download edits: %w", err)
	}
	defer func() {
		if f != nil {
			f.Close()
		}
		if err != nil {
			_ = c.fsys.Remove(tmp)
		}
	}()
	body := newExactReader(&chunkReader{ctx: t.ctx, r: resp.Body, chunk: c.cfg.ChunkSize, kick: t.wd.kick},
		resp.ContentLength, "download of "+name)
	buf := make([]byte, c.cfg.ChunkSize)
	if _, err := io.CopyBuffer(writerOnly{f}, body, buf); err != nil {
		return t.fail(what, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("imagetransfer: sync %s: %w", tmp, err)
	}
	cerr := f.Close()
	f = nil
	if cerr != nil {
		return fmt.Errorf("imagetransfer: close %s: %w", tmp, cerr)
	}
	if err := verifySegment(c.fsys, tmp, first, last); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := c.fsys.Rename(tmp, final); err != nil {
		return fmt.Errorf("imagetransfer: rename %s: %w", tmp, err)
	}
	if err := c.fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("imagetransfer: sync dir %s: %w", dir, err)
	}
	return nil
}

// writerOnly hides a file's ReadFrom, so the copy goes through the chunked,
// watched reader.
type writerOnly struct{ io.Writer }

// verifySegment checks that the segment file p holds exactly the records
// first..last, the first being the segment's start record.
func verifySegment(fsys vfs.FS, p string, first, last int64) error {
	f, err := fsys.Open(p)
	if err != nil {
		return fmt.Errorf("imagetransfer: %w", err)
	}
	defer f.Close()
	version, err := editlog.ReadSegmentHeader(f, p)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadSegment, err)
	}
	dec := editlog.NewDecoder(f, p, editlog.SegmentHeaderSize, version)
	next := first
	for next <= last+1 { // one more than the records wanted, to see the end
		txid, o, err := dec.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadSegment, err)
		}
		switch {
		case txid != next:
			return fmt.Errorf("%w: record %d where %d belongs", ErrBadSegment, txid, next)
		case txid > last:
			return fmt.Errorf("%w: it goes on past txid %d", ErrBadSegment, last)
		case txid == first && o.Code() != op.CodeStartLogSegment:
			return fmt.Errorf("%w: it begins with %v, not the segment's start record", ErrBadSegment, o.Code())
		}
		next++
	}
	if next != last+1 {
		return fmt.Errorf("%w: it holds txids %d-%d, want %d-%d", ErrBadSegment, first, next-1, first, last)
	}
	return nil
}

// CleanTmpEdits removes the segment downloads (TmpEditsName files) a crash
// left in dir, and syncs dir if it removed any. Roles call it at startup for
// the directories they download segments into.
func CleanTmpEdits(fsys vfs.FS, dir string) error {
	names, err := fsys.List(dir)
	if err != nil {
		return fmt.Errorf("imagetransfer: list %s: %w", dir, err)
	}
	removed := false
	for _, n := range names {
		if !strings.HasPrefix(n, TmpEditsPrefix) {
			continue
		}
		p := filepath.Join(dir, n)
		if err := fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("imagetransfer: remove %s: %w", p, err)
		}
		removed = true
	}
	if removed {
		if err := fsys.SyncDir(dir); err != nil {
			return fmt.Errorf("imagetransfer: sync dir %s: %w", dir, err)
		}
	}
	return nil
}

// UploadImage sends fsimage_<txid> of name directory dir (its root) to the
// servlet at baseURL with HTTP PUT, with the MD5 of its .md5 file in
// X-MD5-Digest and si (this node's storage info) as storageInfo. The body
// goes at dfs.image.transfer.bandwidthPerSec, with chunked encoding when the
// image is larger than dfs.image.transfer.chunksize. A refusal is an
// *HTTPError matching ErrOlderImage (the server has this image or a newer
// one: the checkpoint is not needed), ErrConflict (another upload is under
// way), ErrNotAccepting (the server is a standby), ErrStorageMismatch,
// ErrTooLarge, ErrDigestMismatch or ErrBadRequest.
func (c *Client) UploadImage(ctx context.Context, baseURL string, txid int64, dir string, si StorageInfo) error {
	if txid < 0 {
		return fmt.Errorf("imagetransfer: upload image: invalid txid %d", txid)
	}
	u, err := endpoint(baseURL)
	if err != nil {
		return err
	}
	nd := storage.NewNameDir(dir)
	md5Data, err := storage.ReadFile(c.fsys, nd.ImageMD5Path(txid))
	if err != nil {
		return fmt.Errorf("imagetransfer: upload image: %w", err)
	}
	sum, err := fsimage.ParseMD5Line(md5Data, storage.ImageName(txid))
	if err != nil {
		return fmt.Errorf("imagetransfer: upload image: %s: %w", nd.ImageMD5Path(txid), err)
	}
	f, err := c.fsys.Open(nd.ImagePath(txid))
	if err != nil {
		return fmt.Errorf("imagetransfer: upload image: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("imagetransfer: upload image: %w", err)
	}
	size := st.Size()
	if size == 0 {
		return fmt.Errorf("imagetransfer: upload image: %s is empty", nd.ImagePath(txid))
	}
	u.RawQuery = putQuery(txid, si, size)

	t := c.begin(ctx)
	defer t.end()
	body := &chunkReader{
		ctx:   t.ctx,
		r:     io.LimitReader(f, size),
		chunk: c.cfg.ChunkSize,
		kick:  t.wd.kick,
		pace:  pacer{t: newThrottle(c.cfg.BandwidthPerSec, c.cfg.ChunkSize), clk: c.clk},
	}
	req, err := http.NewRequestWithContext(t.ctx, http.MethodPut, u.String(), io.NopCloser(body))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	if size > int64(c.cfg.ChunkSize) {
		req.ContentLength = -1 // chunked, as Hadoop streams images over a chunk in size
	} else {
		req.ContentLength = size
	}
	req.Header.Set(HeaderMD5, hex.EncodeToString(sum[:]))
	req.Header.Set("Content-Type", contentTypeBinary)
	req.Header.Set(HeaderTransferEncoding, "binary")
	req.Header.Set("Expect", "100-continue")
	resp, err := c.hc.Do(req)
	if err != nil {
		return t.fail("imagetransfer: PUT "+u.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return refusal(http.MethodPut, u, resp)
	}
	return nil
}
