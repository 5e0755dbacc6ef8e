package datanode

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	hdfsclient "github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/webhdfs"
)

// webHDFS serves the data half of WebHDFS on the DataNode's web port: the
// requests the NameNode redirected here (CREATE, APPEND, OPEN,
// GETFILECHECKSUM), each carrying namenoderpcaddress. The DataNode is then
// an ordinary HDFS client of that NameNode, as the request's user: a
// create goes through the NameNode's create and addBlock and the write
// pipeline, a read through getBlockLocations and the block readers, so
// permissions, leases, replication and checksums are the same as for any
// client.
type webHDFS struct{ dn *DataNode }

// Copy buffer bounds for buffersize.
const (
	webMinBuffer     = 4 << 10
	webMaxBuffer     = 4 << 20
	webDefaultBuffer = 64 << 10
)

// allowOrigin lets the NameNode's file browser (/explorer.html) send an
// upload here from its page: a browser's cross-origin request is allowed
// when its Origin is on the host of the NameNode the request names
// (namenoderpcaddress). A page elsewhere can only make this DataNode a
// client of a NameNode on that page's own host. It reports whether r is a
// CORS preflight, which it has answered.
func allowOrigin(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	nn := ""
	if q, err := url.ParseQuery(r.URL.RawQuery); err == nil {
		for k, v := range q {
			if strings.EqualFold(k, "namenoderpcaddress") && len(v) > 0 {
				nn = v[0]
			}
		}
	}
	o, err := url.Parse(origin)
	nnHost, _, herr := net.SplitHostPort(nn)
	if err != nil || herr != nil || o.Scheme != "http" || o.Hostname() != nnHost {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	if r.Method != http.MethodOptions {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, PUT, POST")
	h.Set("Access-Control-Allow-Headers", "Content-Type")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

func (h webHDFS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if allowOrigin(w, r) {
		return
	}
	req, err := webhdfs.Parse(r.Method, r.URL.Path, r.URL.RawQuery)
	if err != nil {
		webhdfs.WriteError(w, err)
		return
	}
	switch req.Op {
	case "CREATE", "APPEND", "OPEN", "GETFILECHECKSUM":
	default:
		webhdfs.WriteError(w, remoteerr.New(remoteerr.ClassUnsupported,
			"%s is not served by a DataNode; send it to the NameNode's web port", req.Op))
		return
	}
	if req.NameNodeRPC == "" {
		webhdfs.WriteError(w, remoteerr.New(remoteerr.ClassIllegalArgument,
			"Namenode RPC address is not specified (parameter namenoderpcaddress); start at the NameNode's /webhdfs/v1"))
		return
	}
	// The data moves to the other DataNodes with this DataNode's own
	// protection of the streaming port.
	opts := h.dn.protectedClientOptions(hdfsclient.Options{Addresses: []string{req.NameNodeRPC}, User: req.User})
	if h.dn.cfg.Kerberos != nil {
		// user.name proves nothing: the request acts with the delegation
		// token the NameNode's redirect carries, which the NameNode
		// checks when the client connects.
		tok, err := delegationOf(req)
		if err != nil {
			webhdfs.WriteError(w, err)
			return
		}
		opts.DelegationToken = tok
	} else if req.DoAs != "" && req.DoAs != req.User {
		// doas: the NameNode decides it by its proxy-user rules when the
		// client connects (a refusal fails the op with its text).
		opts.ProxyUser = req.DoAs
	}
	fsys, err := hdfsclient.New(opts)
	if err != nil {
		webhdfs.WriteError(w, remoteerr.New(remoteerr.ClassIllegalArgument, "%v", err))
		return
	}
	defer fsys.Close()
	if err := h.serve(r.Context(), fsys, w, r, req); err != nil {
		webhdfs.WriteError(w, toRemoteErr(err))
	}
}

// toRemoteErr keeps a NameNode's exception; a local failure (a pipeline
// that broke) becomes an IOException with its text.
func toRemoteErr(err error) error {
	var re *remoteerr.Error
	if errors.As(err, &re) {
		return re
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return remoteerr.New(remoteerr.ClassFileNotFound, "%v", err)
	case errors.Is(err, fs.ErrExist):
		return remoteerr.New(remoteerr.ClassFileAlreadyExists, "%v", err)
	case errors.Is(err, fs.ErrPermission):
		return remoteerr.New(remoteerr.ClassAccessControl, "%v", err)
	}
	return remoteerr.New(remoteerr.ClassIOException, "%v", err)
}

func bufferSize(req *webhdfs.Request) int {
	n := int64(webDefaultBuffer)
	if req.BufferSize != webhdfs.Unset {
		n = min(max(req.BufferSize, webMinBuffer), webMaxBuffer)
	}
	return int(n)
}

func (h webHDFS) serve(ctx context.Context, fsys *hdfsclient.FileSystem, w http.ResponseWriter, r *http.Request, req *webhdfs.Request) error {
	switch req.Op {
	case "CREATE":
		opts := hdfsclient.CreateOptions{Overwrite: req.Overwrite, CreateParent: req.CreateParent, Perm: 0o644}
		if req.Replication != webhdfs.Unset {
			opts.Replication = uint16(req.Replication)
		}
		if req.BlockSize != webhdfs.Unset {
			opts.BlockSize = req.BlockSize
		}
		if req.Permission != webhdfs.Unset {
			opts.Perm = fs.FileMode(req.Permission & 0o777)
			if opts.Perm == 0 {
				// CreateOptions reads 0 as "the default"; a file nobody
				// may read is asked for by setting the bits afterwards.
				defer func() { _ = fsys.Chmod(ctx, req.Path, 0) }()
			}
		}
		wr, err := fsys.CreateFile(ctx, req.Path, opts)
		if err != nil {
			return err
		}
		if err := copyBody(wr, r.Body); err != nil {
			return err
		}
		w.Header().Set("Location", "hdfs://"+req.NameNodeRPC+req.Path)
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusCreated)
	case "APPEND":
		wr, err := fsys.Append(ctx, req.Path)
		if err != nil {
			return err
		}
		if err := copyBody(wr, r.Body); err != nil {
			return err
		}
		webhdfs.Empty(w)
	case "OPEN":
		rd, err := fsys.Open(ctx, req.Path)
		if err != nil {
			return err
		}
		defer rd.Close()
		size := rd.Size()
		if req.Offset > size {
			return remoteerr.New(remoteerr.ClassIOException, "Offset=%d out of the range [0, %d); OPEN, path=%s", req.Offset, size, req.Path)
		}
		n := size - req.Offset
		if req.Length != webhdfs.Unset && req.Length < n {
			n = req.Length
		}
		if _, err := rd.Seek(req.Offset, io.SeekStart); err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		w.WriteHeader(http.StatusOK)
		if req.Offset+n == size {
			// To the end: the Reader's WriteTo streams each block reader's
			// packets straight into the answer.
			_, err = rd.WriteTo(onlyWriter{w})
		} else {
			_, err = io.CopyBuffer(onlyWriter{w}, io.LimitReader(rd, n), make([]byte, bufferSize(req)))
		}
		if err != nil {
			// The status is sent; a short body (Content-Length) is how
			// the client learns of it.
			h.dn.log.Warn("webhdfs OPEN failed while sending", "path", req.Path, "error", err)
			panic(http.ErrAbortHandler)
		}
	case "GETFILECHECKSUM":
		sum, err := fsys.Checksum(ctx, req.Path)
		if err != nil {
			return err
		}
		webhdfs.WriteJSON(w, http.StatusOK, map[string]webhdfs.FileChecksum{"FileChecksum": {
			Algorithm: sum.Algorithm, Bytes: hex.EncodeToString(sum.Bytes), Length: len(sum.Bytes)}})
	}
	return nil
}

// onlyWriter hides the ResponseWriter's ReadFrom so that CopyBuffer uses
// the buffer given.
type onlyWriter struct{ w io.Writer }

func (o onlyWriter) Write(p []byte) (int, error) { return o.w.Write(p) }

// copyBody writes the request body to wr (its ReadFrom fills packets
// straight from the body) and closes it; a failed copy still closes wr,
// ending the file with what arrived, and reports the copy's error.
func copyBody(wr *hdfsclient.Writer, body io.Reader) error {
	_, err := io.Copy(wr, body)
	cerr := wr.Close()
	if err != nil {
		return err
	}
	return cerr
}
