package imagetransfer

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// Host is what a role gives its Server: where its files are, who it is, and
// the decisions that are the role's to make. The functions are called from
// request goroutines, possibly concurrently.
type Host struct {
	// FS is the file system the directories live on (vfs.Default).
	FS vfs.FS
	// ImageDirs returns the name directories (roots; images live in their
	// current/) to serve images from and store uploads into, in the order to
	// try. Required.
	ImageDirs func() []string
	// EditsDirs returns the directories holding finalized edit segments
	// (the files themselves: a name dir's current/, a journal's current/).
	// Nil: no segments are served.
	EditsDirs func() []string
	// StorageInfo returns this node's storage info; a request carrying a
	// different one is refused with 403. Required.
	StorageInfo func() StorageInfo
	// AcceptUploads reports whether an upload may be taken now, and the
	// state to name in a refusal (417). An active NameNode accepts; a
	// standby ("standby") does not. Nil: uploads are always refused.
	AcceptUploads func() (ok bool, state string)
	// AdmitUpload, if set, is asked before the body of an upload of txid is
	// read (newest is the txid of the newest image held, -1 if none); an
	// error refuses the upload with 409 and the error's text. This is where
	// a NameNode puts Hadoop's "recent image" rule.
	AdmitUpload func(txid, newest int64) error
	// ImageStored, if set, is called after an uploaded image is durable under
	// its final name, before the uploader is answered. A NameNode applies
	// retention here (dfs.namenode.num.checkpoints.retained images and the
	// edits behind them); a failure there is its own to report, the upload
	// has succeeded.
	ImageStored func(ctx context.Context, s Stored)
	// Logger receives refusals and failures (discarded when nil).
	Logger *slog.Logger
	// Clock paces throttled transfers (clock.Real when nil).
	Clock clock.Clock

	// Testing holds hooks for tests only.
	Testing struct {
		// UploadDone is called when the handling of an upload ends, with
		// its txid and the refusal or failure (nil when stored).
		UploadDone func(txid int64, err error)
	}
}

// Stored describes an image the Server has just stored.
type Stored struct {
	TxID   int64
	Header fsimage.Header // as decoded from the start of the upload
	MD5    [16]byte
	Size   int64
	// Dirs are the name directories that now hold fsimage_<txid>.
	Dirs []string
	// Failed are the directories where storing failed; what it left there
	// was removed as far as possible (fsimage.CleanCheckpoints removes the
	// rest). The role decides whether to take them out of service.
	Failed []fsimage.DirError
	// Remote is the uploader's address.
	Remote string
}

// Server is the image servlet: an http.Handler for Path. Safe for
// concurrent use; it starts no goroutines of its own (storing an upload runs
// fsimage.SaveEncoded, whose per-directory writers end before it returns).
type Server struct {
	cfg  Config
	host Host
	clk  clock.Clock
	log  *slog.Logger

	// mu guards the txids being stored: uploads in progress and saves that
	// Reserve announced.
	mu struct {
		sync.Mutex
		busy map[int64]string // txid → who stores it
	}
}

// NewServer returns a Server for cfg and h.
func NewServer(cfg Config, h Host) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if h.FS == nil || h.ImageDirs == nil || h.StorageInfo == nil {
		return nil, errors.New("imagetransfer: NewServer needs Host.FS, Host.ImageDirs and Host.StorageInfo")
	}
	s := &Server{cfg: cfg, host: h, clk: h.Clock, log: h.Logger}
	if s.clk == nil {
		s.clk = clock.Real{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.mu.busy = make(map[int64]string)
	return s, nil
}

// Reserve marks txid as being stored by holder (say "saveNamespace"), so that
// an upload of the same txid is refused with 409 until release is called. A
// role that saves images itself into the same directories calls it around
// fsimage.Save. It fails with ErrConflict if txid is already being stored.
func (s *Server) Reserve(txid int64, holder string) (release func(), err error) {
	if err := s.reserve(txid, holder, false); err != nil {
		return nil, err
	}
	return func() { s.unreserve(txid) }, nil
}

// reserve marks txid busy. An upload (newer=true) is also refused while a
// newer txid is being uploaded, as Hadoop refuses it.
func (s *Server) reserve(txid int64, holder string, newer bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if who, ok := s.mu.busy[txid]; ok {
		return &requestError{status: http.StatusConflict, err: ErrConflict, msg: fmt.Sprintf(
			"Either current namenode is checkpointing or another checkpointer is already %s a checkpoint made at transaction ID %d (%s)",
			inProgressPhrase, txid, who)}
	}
	if newer {
		for t := range s.mu.busy {
			if t > txid {
				return &requestError{status: http.StatusConflict, err: ErrConflict, msg: fmt.Sprintf(
					"Another checkpointer is already %s a checkpoint made up to transaction ID %d", inProgressPhrase, t)}
			}
		}
	}
	s.mu.busy[txid] = holder
	return nil
}

func (s *Server) unreserve(txid int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.mu.busy, txid)
}

// ServeHTTP answers GET (image, edits) and PUT (image) requests.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, err := ParseRequest(r.Method, r.URL.RawQuery, r.Header, r.ContentLength)
	if err != nil {
		var re *requestError
		if errors.As(err, &re) && re.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", "GET, PUT")
		}
		s.refuse(w, r, err)
		return
	}
	err = s.checkStorage(req.StorageInfo)
	switch {
	case req.Op == OpPutImage:
		if err == nil {
			err = s.receiveImage(w, r, req)
		}
		if err != nil {
			s.refuse(w, r, err)
		}
		if f := s.host.Testing.UploadDone; f != nil {
			f(req.TxID, err)
		}
	case err != nil:
		s.refuse(w, r, err)
	case req.Op == OpGetImage:
		s.serveImage(w, r, req)
	case req.Op == OpGetEdits:
		s.serveEdits(w, r, req)
	}
}

// checkStorage refuses a request whose storage info (if it has one) is not
// this node's.
func (s *Server) checkStorage(si *StorageInfo) error {
	if si == nil {
		return nil
	}
	theirs, mine := *si, s.host.StorageInfo()
	if theirs == mine {
		return nil
	}
	return &requestError{status: http.StatusForbidden, err: ErrStorageMismatch, msg: fmt.Sprintf(
		"This namenode has storage info %s but the secondary expected %s (%s differ)",
		mine, theirs, strings.Join(mine.differences(theirs), ", "))}
}

// refuse answers a request with the status and text of err.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := http.StatusInternalServerError, err.Error()
	var re *requestError
	if errors.As(err, &re) {
		status = re.status
	}
	s.log.Warn("imagetransfer: refused", slog.String("method", r.Method), slog.String("query", clip(r.URL.RawQuery)),
		slog.String("remote", r.RemoteAddr), slog.Int("status", status), slog.String("error", msg))
	h := w.Header()
	h.Del(HeaderMD5)
	h.Del(HeaderFileName)
	h.Del(HeaderContentDisposition)
	h.Del("Content-Length")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

// images lists the complete images of every image dir, newest first and, for
// one txid, in the order of the dirs.
func (s *Server) images() []fsimage.ImageFile {
	var all []fsimage.ImageFile
	for _, dir := range s.host.ImageDirs() {
		imgs, err := fsimage.List(s.host.FS, dir)
		if err != nil {
			s.log.Warn("imagetransfer: cannot list name dir", slog.String("dir", dir), slog.Any("error", err))
			continue
		}
		all = append(all, imgs...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].TxID > all[j].TxID })
	return all
}

// newest returns the txid of the newest complete image, -1 if there is none.
func (s *Server) newest() int64 {
	if imgs := s.images(); len(imgs) > 0 {
		return imgs[0].TxID
	}
	return -1
}

func (s *Server) serveImage(w http.ResponseWriter, r *http.Request, req Request) {
	var cands []fsimage.ImageFile
	for _, img := range s.images() {
		if (req.Latest && (len(cands) == 0 || img.TxID == cands[0].TxID)) || (!req.Latest && img.TxID == req.TxID) {
			cands = append(cands, img)
		}
	}
	what := "Could not find image"
	if !req.Latest {
		what += " with txid " + strconv.FormatInt(req.TxID, 10)
	}
	var errs []error
	for _, c := range cands {
		f, md5, size, err := s.openImage(c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		defer f.Close()
		w.Header().Set(HeaderMD5, hex.EncodeToString(md5[:]))
		rate := s.cfg.BandwidthPerSec
		if req.BootstrapStandby {
			rate = s.cfg.BootstrapBandwidthPerSec
		}
		s.sendFile(w, r, f, filepath.Base(c.Path), size, rate)
		return
	}
	if len(errs) > 0 {
		s.refuse(w, r, fmt.Errorf("%s that could be read: %w", what, errors.Join(errs...)))
		return
	}
	s.refuse(w, r, &requestError{status: http.StatusNotFound, err: ErrNotFound, msg: what})
}

// openImage opens one copy of an image and reads its .md5 file.
func (s *Server) openImage(img fsimage.ImageFile) (vfs.File, [16]byte, int64, error) {
	var sum [16]byte
	data, err := storage.ReadFile(s.host.FS, img.MD5Path)
	if err != nil {
		return nil, sum, 0, err
	}
	if sum, err = fsimage.ParseMD5Line(data, filepath.Base(img.Path)); err != nil {
		return nil, sum, 0, fmt.Errorf("%s: %w", img.MD5Path, err)
	}
	f, err := s.host.FS.Open(img.Path)
	if err != nil {
		return nil, sum, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, sum, 0, err
	}
	return f, sum, st.Size(), nil
}

func (s *Server) serveEdits(w http.ResponseWriter, r *http.Request, req Request) {
	name := editlog.FinalizedName(req.StartTxID, req.EndTxID)
	var dirs []string
	if s.host.EditsDirs != nil {
		dirs = s.host.EditsDirs()
	}
	var errs []error
	for _, dir := range dirs {
		p := filepath.Join(dir, name)
		f, err := s.host.FS.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			var st fs.FileInfo
			if st, err = f.Stat(); err == nil {
				defer f.Close()
				s.sendFile(w, r, f, name, st.Size(), s.cfg.BandwidthPerSec)
				return
			}
			f.Close()
		}
		errs = append(errs, err)
	}
	what := fmt.Sprintf("No edits file for txid %d-%d exists!", req.StartTxID, req.EndTxID)
	if len(errs) > 0 {
		s.refuse(w, r, fmt.Errorf("%s (none could be read: %w)", what, errors.Join(errs...)))
		return
	}
	s.refuse(w, r, &requestError{status: http.StatusNotFound, err: ErrNotFound, msg: what})
}

// sendFile answers 200 with size bytes of f in chunks, each under a write
// deadline and paid to the throttle. Once the status is out, a failure can
// only be told by cutting the connection: the client then sees a body
// shorter than Content-Length.
func (s *Server) sendFile(w http.ResponseWriter, r *http.Request, f io.Reader, name string, size int64, rate int64) {
	h := w.Header()
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set("Content-Type", contentTypeBinary)
	h.Set(HeaderContentDisposition, "attachment; filename="+name)
	h.Set(HeaderFileName, name)
	w.WriteHeader(http.StatusOK)
	dl := newDeadlines(w, s.cfg.Timeout, s.noDeadlines)
	defer dl.clear()
	pace := pacer{t: newThrottle(rate, s.cfg.ChunkSize), clk: s.clk}
	buf := make([]byte, s.cfg.ChunkSize)
	for left := size; left > 0; {
		n := int64(len(buf))
		if n > left {
			n = left
		}
		k, err := io.ReadFull(f, buf[:n])
		if err == nil {
			dl.write()
			_, err = w.Write(buf[:k])
		}
		if err == nil {
			err = pace.wait(r.Context(), k)
		}
		if err != nil {
			s.log.Warn("imagetransfer: sending stopped", slog.String("file", name), slog.String("remote", r.RemoteAddr),
				slog.Int64("sent", size-left), slog.Int64("size", size), slog.Any("error", err))
			panic(http.ErrAbortHandler) // cut the connection: the body is short
		}
		left -= int64(k)
	}
}

// receiveImage takes an upload. It returns the refusal or failure, or nil
// once it has answered 200.
func (s *Server) receiveImage(w http.ResponseWriter, r *http.Request, req Request) error {
	if req.FileLength > s.cfg.MaxImageSize {
		return &requestError{status: http.StatusRequestEntityTooLarge, err: ErrTooLarge, msg: fmt.Sprintf(
			"image of %d bytes is larger than the %d bytes this server accepts", req.FileLength, s.cfg.MaxImageSize)}
	}
	ok, state := false, "uploads not accepted by this server"
	if s.host.AcceptUploads != nil {
		ok, state = s.host.AcceptUploads()
	}
	if !ok {
		return &requestError{status: http.StatusExpectationFailed, err: ErrNotAccepting, msg: fmt.Sprintf(
			"Node %s is currently not in a state which can accept uploads of new fsimages. State: %s", localAddr(r), state)}
	}
	if err := s.reserve(req.TxID, "upload from "+r.RemoteAddr, true); err != nil {
		return err
	}
	defer s.unreserve(req.TxID)
	newest := s.newest()
	switch {
	case req.TxID == newest:
		return &requestError{status: http.StatusConflict, err: ErrOlderImage, msg: fmt.Sprintf(
			"Either current namenode has checkpointed or another checkpointer already uploaded an checkpoint for txid %d", req.TxID)}
	case req.TxID < newest:
		return &requestError{status: http.StatusConflict, err: ErrOlderImage, msg: fmt.Sprintf(
			"The image for txid %d is older than this node's newest image, for txid %d", req.TxID, newest)}
	}
	if s.host.AdmitUpload != nil {
		if err := s.host.AdmitUpload(req.TxID, newest); err != nil {
			return &requestError{status: http.StatusConflict, err: ErrOlderImage, msg: err.Error()}
		}
	}
	dirs := s.host.ImageDirs()
	if len(dirs) == 0 {
		return errors.New("imagetransfer: no name directory to store the image in")
	}

	name := storage.ImageName(req.TxID)
	dl := newDeadlines(w, s.cfg.Timeout, s.noDeadlines)
	defer dl.clear()
	body := newExactReader(&chunkReader{
		ctx:   r.Context(),
		r:     r.Body,
		chunk: s.cfg.ChunkSize,
		kick:  dl.read,
		pace:  pacer{t: newThrottle(s.cfg.BandwidthPerSec, s.cfg.ChunkSize), clk: s.clk},
	}, req.FileLength, "upload of "+name)
	hdr, full, err := peekHeader(body, req.FileLength)
	if err != nil {
		return bodyError(fmt.Errorf("the upload does not start with an image header: %w", err))
	}
	if err := s.checkHeader(req.TxID, hdr); err != nil {
		return err
	}
	err = fsimage.SaveEncoded(s.host.FS, dirs, req.TxID, full, &req.MD5)
	st := Stored{TxID: req.TxID, Header: hdr, MD5: req.MD5, Size: req.FileLength, Dirs: append([]string(nil), dirs...), Remote: r.RemoteAddr}
	var serr *fsimage.SaveError
	switch {
	case err == nil:
	case errors.As(err, &serr) && len(serr.Succeeded) > 0:
		st.Dirs, st.Failed = serr.Succeeded, serr.Failed
		s.log.Error("imagetransfer: uploaded image not stored in every name dir", slog.Int64("txid", req.TxID), slog.Any("error", err))
	case errors.As(err, &serr):
		return fmt.Errorf("the image could not be stored in any name directory: %w", err)
	default:
		return bodyError(err)
	}
	if s.host.ImageStored != nil {
		// Retention is the node's business: it must not stop because the
		// uploader hangs up now.
		s.host.ImageStored(context.WithoutCancel(r.Context()), st)
	}
	s.log.Info("imagetransfer: stored uploaded image", slog.Int64("txid", req.TxID), slog.Int64("bytes", req.FileLength),
		slog.String("remote", r.RemoteAddr), slog.Int("dirs", len(st.Dirs)))
	w.WriteHeader(http.StatusOK)
	return nil
}

// checkHeader compares an uploaded image's header with the request and with
// this node's storage.
func (s *Server) checkHeader(txid int64, h fsimage.Header) error {
	mine := s.host.StorageInfo()
	switch {
	case h.TxID != txid:
		return badRequest("the image's header says txid %d, the request says %d", h.TxID, txid)
	case h.NamespaceID != mine.NamespaceID:
		return &requestError{status: http.StatusForbidden, err: ErrStorageMismatch, msg: fmt.Sprintf(
			"the image is of namespace %d, this node's is %d", h.NamespaceID, mine.NamespaceID)}
	case h.LayoutVersion != mine.LayoutVersion:
		return &requestError{status: http.StatusForbidden, err: ErrStorageMismatch, msg: fmt.Sprintf(
			"the image has layout version %d, this node's is %d", h.LayoutVersion, mine.LayoutVersion)}
	}
	return nil
}

// bodyError classifies a failure while reading and storing an upload: the
// sender's fault (400: short, long, not an image, wrong digest), a stall
// (408), or the server's (500).
func bodyError(err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, ErrLength), errors.Is(err, fsimage.ErrCorrupt):
		return &requestError{status: http.StatusBadRequest, err: ErrBadRequest, msg: err.Error(), cause: err}
	case errors.Is(err, fsimage.ErrMD5Mismatch):
		return &requestError{status: http.StatusBadRequest, err: ErrDigestMismatch, msg: err.Error(), cause: err}
	case errors.As(err, &ne) && ne.Timeout():
		return &requestError{status: http.StatusRequestTimeout, err: ErrTimeout, msg: err.Error(), cause: err}
	}
	return err
}

// noDeadlines reports a response writer that takes no deadlines: transfers
// then have no server-side timeout.
func (s *Server) noDeadlines(err error) {
	s.log.Warn("imagetransfer: the web server's response writer takes no deadlines; "+
		"transfers run without dfs.image.transfer.timeout on this side", slog.Any("error", err))
}

func localAddr(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return a.String()
	}
	return r.Host
}
