package webhdfs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"path"
	"strconv"
	"strings"
	"time"

	wh "github.com/hdfsgo/hdfsgo/internal/webhdfs"
)

// Scheme is the URI scheme of this file system.
const Scheme = "webhdfs"

// DefaultPort is the NameNode web port assumed when a URI names none
// (dfs.namenode.http-address's default).
const DefaultPort = "9870"

// ErrWrongFS: a path is a URI of another file system.
var ErrWrongFS = errors.New("webhdfs: wrong file system")

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// FileStatus is one file or directory as WebHDFS reports it.
type FileStatus struct {
	Name        string // the last path element; "" for the path asked about
	IsDir       bool
	Length      int64
	Perm        fs.FileMode // permission bits, and fs.ModeSticky
	Owner       string
	Group       string
	ModTime     time.Time
	AccessTime  time.Time
	Replication int
	BlockSize   int64
}

// CreateOptions are the parameters of a CREATE; zero values take the
// server's defaults (permission 644).
type CreateOptions struct {
	Overwrite   bool
	Perm        fs.FileMode
	Replication int
	BlockSize   int64
}

// FileSystem is a WebHDFS client of one NameNode.
type FileSystem struct {
	base      string // http://host:port
	authority string
	user      string
	hc        *http.Client
	kerberos
}

// New returns a client of the NameNode named by uri (webhdfs://host[:port],
// any path ignored) acting as user (empty: $HADOOP_USER_NAME, else the
// operating-system user).
func New(uri, userName string) (*FileSystem, error) {
	u, err := url.Parse(uri)
	if err != nil || !strings.EqualFold(u.Scheme, Scheme) || u.Hostname() == "" {
		return nil, fmt.Errorf("%w: %q is not a webhdfs://host:port URI", ErrWrongFS, uri)
	}
	port := u.Port()
	if port == "" {
		port = DefaultPort
	}
	if userName == "" {
		userName = os.Getenv("HADOOP_USER_NAME")
	}
	if userName == "" {
		cur, err := user.Current()
		if err != nil {
			return nil, fmt.Errorf("webhdfs: no user name: %w", err)
		}
		userName = cur.Username
	}
	hostPort := net.JoinHostPort(u.Hostname(), port)
	return &FileSystem{
		base: "http://" + hostPort, authority: hostPort, user: userName,
		hc: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}, nil
}

// URI is webhdfs://host:port.
func (f *FileSystem) URI() string { return Scheme + "://" + f.authority }

// User is the user the requests are made as.
func (f *FileSystem) User() string { return f.user }

// Resolve turns name (a path or a webhdfs:// URI of this file system) into
// an absolute path; relative paths are under /user/<user>.
func (f *FileSystem) Resolve(name string) (string, error) {
	if i := strings.Index(name, "://"); i >= 0 {
		u, err := url.Parse(name)
		if err != nil || !strings.EqualFold(u.Scheme, Scheme) {
			return "", fmt.Errorf("%w: %s is not a path of %s", ErrWrongFS, name, f.URI())
		}
		port := u.Port()
		if port == "" {
			port = DefaultPort
		}
		if u.Host != "" && !strings.EqualFold(net.JoinHostPort(u.Hostname(), port), f.authority) {
			return "", fmt.Errorf("%w: %s is not a path of %s", ErrWrongFS, name, f.URI())
		}
		name = u.Path
		if name == "" {
			name = "/"
		}
	}
	if !strings.HasPrefix(name, "/") {
		name = "/user/" + f.user + "/" + name
	}
	return path.Clean(name), nil
}

// url is the NameNode URL of op on p with the extra parameters q. With
// Kerberos it fetches the delegation token the request carries first.
func (f *FileSystem) url(ctx context.Context, p, op string, q url.Values) (string, error) {
	if q == nil {
		q = url.Values{}
	}
	q.Set("op", op)
	if f.krb != nil {
		tok, err := f.delegation(ctx)
		if err != nil {
			return "", err
		}
		q.Set("delegation", tok)
	} else {
		q.Set("user.name", f.user)
	}
	return f.base + wh.URLPath(p) + "?" + q.Encode(), nil
}

// do sends one request and returns the answer when its status is want;
// another status is decoded as a RemoteException.
func (f *FileSystem) do(ctx context.Context, method, u string, body io.Reader, want int) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	resp, err := f.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, wh.DecodeError(resp.StatusCode, b)
	}
	return resp, nil
}

// call sends a request whose 200 answer is JSON decoded into v (nil: the
// body is dropped).
func (f *FileSystem) call(ctx context.Context, method, opName, name string, q url.Values, v any) error {
	p, err := f.Resolve(name)
	if err != nil {
		return &fs.PathError{Op: strings.ToLower(opName), Path: name, Err: err}
	}
	resp, err := f.doNameNode(ctx, method, p, opName, q, http.StatusOK)
	if err != nil {
		return &fs.PathError{Op: strings.ToLower(opName), Path: name, Err: err}
	}
	defer resp.Body.Close()
	if v == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return &fs.PathError{Op: strings.ToLower(opName), Path: name, Err: fmt.Errorf("webhdfs: malformed %s answer: %w", opName, err)}
	}
	return nil
}

func fromJSON(s wh.FileStatus) *FileStatus {
	perm := fs.FileMode(s.Mode() & 0o777)
	if s.Mode()&0o1000 != 0 {
		perm |= fs.ModeSticky
	}
	return &FileStatus{
		Name: s.PathSuffix, IsDir: s.Type == "DIRECTORY", Length: s.Length, Perm: perm, Owner: s.Owner,
		Group: s.Group, ModTime: time.UnixMilli(s.ModificationTime), AccessTime: time.UnixMilli(s.AccessTime),
		Replication: int(s.Replication), BlockSize: s.BlockSize,
	}
}

// Stat is GETFILESTATUS.
func (f *FileSystem) Stat(ctx context.Context, name string) (*FileStatus, error) {
	var b wh.FileStatusBody
	if err := f.call(ctx, http.MethodGet, "GETFILESTATUS", name, nil, &b); err != nil {
		return nil, err
	}
	return fromJSON(b.FileStatus), nil
}

// ReadDir is LISTSTATUS: the entries of a directory in name order, or the
// file itself (with Name "") when name is a file.
func (f *FileSystem) ReadDir(ctx context.Context, name string) ([]*FileStatus, error) {
	var b wh.ListStatusBody
	if err := f.call(ctx, http.MethodGet, "LISTSTATUS", name, nil, &b); err != nil {
		return nil, err
	}
	out := make([]*FileStatus, 0, len(b.FileStatuses.FileStatus))
	for _, s := range b.FileStatuses.FileStatus {
		out = append(out, fromJSON(s))
	}
	return out, nil
}

// MkdirAll is MKDIRS (parents are made too).
func (f *FileSystem) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	q := url.Values{"permission": {strconv.FormatUint(uint64(perm.Perm()), 8)}}
	var b struct{ Boolean bool }
	if err := f.call(ctx, http.MethodPut, "MKDIRS", name, q, &b); err != nil {
		return err
	}
	if !b.Boolean {
		return &fs.PathError{Op: "mkdirs", Path: name, Err: errors.New("webhdfs: the NameNode did not make the directory")}
	}
	return nil
}

// Delete is DELETE; it reports whether something was deleted.
func (f *FileSystem) Delete(ctx context.Context, name string, recursive bool) (bool, error) {
	var b struct{ Boolean bool }
	err := f.call(ctx, http.MethodDelete, "DELETE", name, url.Values{"recursive": {strconv.FormatBool(recursive)}}, &b)
	return b.Boolean, err
}

// Rename is RENAME (Hadoop's old rename: false when it was not done).
func (f *FileSystem) Rename(ctx context.Context, from, to string) (bool, error) {
	dst, err := f.Resolve(to)
	if err != nil {
		return false, &fs.PathError{Op: "rename", Path: to, Err: err}
	}
	var b struct{ Boolean bool }
	err = f.call(ctx, http.MethodPut, "RENAME", from, url.Values{"destination": {dst}}, &b)
	return b.Boolean, err
}

// redirect asks the NameNode for the DataNode URL of a data op.
func (f *FileSystem) redirect(ctx context.Context, method, opName, p string, q url.Values) (string, error) {
	resp, err := f.doNameNode(ctx, method, p, opName, q, http.StatusTemporaryRedirect)
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "", fmt.Errorf("webhdfs: %s: the NameNode's 307 has no Location", opName)
	}
	return loc, nil
}

// send is the second step of CREATE and APPEND: the data to the DataNode.
func (f *FileSystem) send(ctx context.Context, method, opName, name string, q url.Values, r io.Reader, want int) error {
	pe := func(err error) error { return &fs.PathError{Op: strings.ToLower(opName), Path: name, Err: err} }
	p, err := f.Resolve(name)
	if err != nil {
		return pe(err)
	}
	loc, err := f.redirect(ctx, method, opName, p, q)
	if err != nil {
		return pe(err)
	}
	if r == nil {
		r = bytes.NewReader(nil)
	}
	resp, err := f.do(ctx, method, loc, r, want)
	if err != nil {
		return pe(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil
}

// Create is the two-step CREATE: the NameNode names a DataNode, which
// writes r's bytes through the write pipeline.
func (f *FileSystem) Create(ctx context.Context, name string, r io.Reader, o CreateOptions) error {
	q := url.Values{"overwrite": {strconv.FormatBool(o.Overwrite)}}
	if o.Perm != 0 {
		q.Set("permission", strconv.FormatUint(uint64(o.Perm.Perm()), 8))
	}
	if o.Replication > 0 {
		q.Set("replication", strconv.Itoa(o.Replication))
	}
	if o.BlockSize > 0 {
		q.Set("blocksize", strconv.FormatInt(o.BlockSize, 10))
	}
	return f.send(ctx, http.MethodPut, "CREATE", name, q, r, http.StatusCreated)
}

// Append is the two-step APPEND.
func (f *FileSystem) Append(ctx context.Context, name string, r io.Reader) error {
	return f.send(ctx, http.MethodPost, "APPEND", name, nil, r, http.StatusOK)
}

// Open is the two-step OPEN of n bytes from off (n < 0: to the end). The
// caller closes the reader.
func (f *FileSystem) Open(ctx context.Context, name string, off, n int64) (io.ReadCloser, error) {
	pe := func(err error) error { return &fs.PathError{Op: "open", Path: name, Err: err} }
	p, err := f.Resolve(name)
	if err != nil {
		return nil, pe(err)
	}
	q := url.Values{"offset": {strconv.FormatInt(off, 10)}}
	if n >= 0 {
		q.Set("length", strconv.FormatInt(n, 10))
	}
	loc, err := f.redirect(ctx, http.MethodGet, "OPEN", p, q)
	if err != nil {
		return nil, pe(err)
	}
	resp, err := f.do(ctx, http.MethodGet, loc, nil, http.StatusOK)
	if err != nil {
		return nil, pe(err)
	}
	return resp.Body, nil
}
