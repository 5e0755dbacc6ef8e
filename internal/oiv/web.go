package oiv

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/webhdfs"
)

// webNode is one inode held by the Web viewer.
type webNode struct {
	in       fsimage.Inode
	children []*webNode // directories: sorted by name
	length   int64
}

// Image is an image loaded whole for the Web processor: a read-only
// WebHDFS over it (GETFILESTATUS, LISTSTATUS, GETCONTENTSUMMARY,
// GETACLSTATUS, GETXATTRS, LISTXATTRS), as Hadoop's oiv -p Web serves.
// Safe for concurrent use once loaded.
type Image struct {
	root *webNode
}

// LoadImage reads the whole image from r.
func LoadImage(r io.Reader) (*Image, error) {
	byID := map[uint64]*webNode{}
	img := &Image{}
	_, err := walk(r, func(_ fsimage.Header, in *fsimage.Inode, _ string) error {
		n := &webNode{in: *in}
		n.in.Name = append([]byte(nil), in.Name...)
		n.in.Blocks, n.in.UC = nil, nil // only the length is shown
		for _, b := range in.Blocks {
			n.length += b.NumBytes
		}
		if in.ParentID == 0 {
			img.root = n
		} else {
			p := byID[in.ParentID]
			p.children = append(p.children, n)
		}
		if in.IsDir {
			byID[in.ID] = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, n := range byID {
		sort.Slice(n.children, func(i, j int) bool { return string(n.children[i].in.Name) < string(n.children[j].in.Name) })
	}
	return img, nil
}

func (img *Image) lookup(p string) *webNode {
	n := img.root
	for _, part := range strings.Split(strings.Trim(path.Clean(p), "/"), "/") {
		if part == "" {
			continue
		}
		i := sort.Search(len(n.children), func(i int) bool { return string(n.children[i].in.Name) >= part })
		if i == len(n.children) || string(n.children[i].in.Name) != part {
			return nil
		}
		n = n.children[i]
	}
	return n
}

func fileStatus(n *webNode, suffix string) webhdfs.FileStatus {
	st := webhdfs.FileStatus{
		AccessTime: n.in.Atime, BlockSize: n.in.BlockSize, ChildrenNum: int64(len(n.children)),
		FileID: n.in.ID, Group: n.in.Perm.Group, Length: n.length,
		ModificationTime: n.in.Mtime, Owner: n.in.Perm.User, PathSuffix: suffix,
		Permission: webhdfs.Perm(uint32(n.in.Perm.Mode)), Replication: int64(n.in.Replication), Type: "FILE",
		StoragePolicy: int64(n.in.StoragePolicy),
	}
	if n.in.IsDir {
		st.Type = "DIRECTORY"
		st.AccessTime = 0
	}
	return st
}

func (n *webNode) summary(s map[string]int64) {
	if !n.in.IsDir {
		s["fileCount"]++
		s["length"] += n.length
		s["spaceConsumed"] += n.length * int64(n.in.Replication)
		return
	}
	s["directoryCount"]++
	for _, c := range n.children {
		c.summary(s)
	}
}

// remoteException writes a WebHDFS error as Hadoop does.
func remoteException(w http.ResponseWriter, code int, class, msg string) {
	short := class[strings.LastIndexByte(class, '.')+1:]
	webhdfs.WriteJSON(w, code, webhdfs.ErrorBody{RemoteException: webhdfs.RemoteException{
		Exception: short, JavaClassName: class, Message: msg}})
}

// ServeHTTP answers GET /webhdfs/v1/PATH?op=OP.
func (img *Image) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const prefix = "/webhdfs/v1"
	if !strings.HasPrefix(r.URL.Path, prefix) {
		remoteException(w, http.StatusNotFound, "java.io.FileNotFoundException", "Path "+r.URL.Path+" is not under "+prefix)
		return
	}
	p := strings.TrimPrefix(r.URL.Path, prefix)
	if p == "" {
		p = "/"
	}
	op := strings.ToUpper(r.URL.Query().Get("op"))
	if r.Method != http.MethodGet {
		remoteException(w, http.StatusMethodNotAllowed, "java.lang.IllegalArgumentException", "Invalid value for webhdfs parameter \"op\": "+r.Method+" is not allowed; the image viewer is read-only")
		return
	}
	switch op {
	case "GETFILESTATUS", "LISTSTATUS", "GETCONTENTSUMMARY", "GETACLSTATUS", "GETXATTRS", "LISTXATTRS":
	default:
		remoteException(w, http.StatusBadRequest, "java.lang.IllegalArgumentException", fmt.Sprintf("Invalid value for webhdfs parameter \"op\": %q is not supported by the image viewer", op))
		return
	}
	n := img.lookup(p)
	if n == nil {
		remoteException(w, http.StatusNotFound, "java.io.FileNotFoundException", "File does not exist: "+p)
		return
	}
	switch op {
	case "GETFILESTATUS":
		webhdfs.WriteJSON(w, http.StatusOK, webhdfs.FileStatusBody{FileStatus: fileStatus(n, "")})
	case "LISTSTATUS":
		list := []webhdfs.FileStatus{}
		if n.in.IsDir {
			for _, c := range n.children {
				list = append(list, fileStatus(c, string(c.in.Name)))
			}
		} else {
			list = append(list, fileStatus(n, ""))
		}
		webhdfs.WriteJSON(w, http.StatusOK, webhdfs.ListStatusBody{FileStatuses: webhdfs.FileStatuses{FileStatus: list}})
	case "GETCONTENTSUMMARY":
		s := map[string]int64{}
		n.summary(s)
		webhdfs.WriteJSON(w, http.StatusOK, map[string]webhdfs.ContentSummary{"ContentSummary": {
			DirectoryCount: s["directoryCount"], FileCount: s["fileCount"], Length: s["length"],
			Quota: n.in.NsQuota, SpaceConsumed: s["spaceConsumed"], SpaceQuota: n.in.DsQuota, TypeQuota: map[string]any{}}})
	case "GETACLSTATUS":
		entries := []string{}
		for _, e := range n.in.ACL {
			entries = append(entries, aclString(e))
		}
		webhdfs.WriteJSON(w, http.StatusOK, map[string]any{"AclStatus": map[string]any{
			"entries": entries, "group": n.in.Perm.Group, "owner": n.in.Perm.User,
			"permission": strconv.FormatUint(uint64(n.in.Perm.Mode&0o777), 8), "stickyBit": n.in.Perm.Mode&0o1000 != 0}})
	case "GETXATTRS":
		xs := []map[string]any{}
		for _, x := range n.in.XAttrs {
			var v any
			if x.Value != nil {
				v = "0x" + hex.EncodeToString(x.Value)
			}
			xs = append(xs, map[string]any{"name": xattrFullName(x), "value": v})
		}
		webhdfs.WriteJSON(w, http.StatusOK, map[string]any{"XAttrs": xs})
	case "LISTXATTRS":
		names := []string{}
		for _, x := range n.in.XAttrs {
			names = append(names, xattrFullName(x))
		}
		b, _ := json.Marshal(names)
		webhdfs.WriteJSON(w, http.StatusOK, map[string]any{"XAttrNames": string(b)})
	}
}
