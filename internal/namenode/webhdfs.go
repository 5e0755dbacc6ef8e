package namenode

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/webhdfs"
)

// webHDFS serves /webhdfs/v1 on the NameNode's web port. Every namespace
// operation is a call of the ClientProtocol handler that serves it over RPC
// (clientRPC), with the HTTP caller in ctx: the same HA check, request
// limits, permission checks and edit-log path. There is no retry cache
// entry (an HTTP request carries no client and call id), as in Hadoop.
// CREATE, APPEND, OPEN and GETFILECHECKSUM are answered with a redirect to a
// DataNode's /webhdfs/v1, which moves the data with the ordinary client.
type webHDFS struct {
	nn   *NameNode
	c    *clientRPC
	next atomic.Uint64 // round-robin over live DataNodes for CREATE
}

func registerWebHDFS(nn *NameNode, c *clientRPC) {
	nn.web.SetWebHDFS(&webHDFS{nn: nn, c: c})
}

// webCall runs one ClientProtocol handler for a WebHDFS request, after the
// checks an RPC call of the method passes.
func webCall[Req, Resp proto.Message](ctx context.Context, h *webHDFS, method string, f func(context.Context, Req) (Resp, error), req Req) (Resp, error) {
	var zero Resp
	if err := h.nn.precheck(ctx, categories[ClientProtocolName][method], method, req); err != nil {
		return zero, err
	}
	resp, err := f(ctx, req)
	h.nn.activity.record(method, err == nil)
	h.nn.auditCall(ctx, method, req, resp, err)
	return resp, err
}

func (h *webHDFS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, err := webhdfs.Parse(r.Method, r.URL.Path, r.URL.RawQuery)
	if err != nil {
		webhdfs.WriteError(w, err)
		return
	}
	remote, _, _ := net.SplitHostPort(r.RemoteAddr)
	wc := webCaller{user: req.User, remote: remote}
	if h.nn.cfg.Kerberos != nil {
		// user.name is a claim anyone can make; with Kerberos the caller
		// is who SPNEGO or a delegation token proved.
		if wc, err = h.kerberosWebCaller(r, req, remote); err != nil {
			webhdfs.WriteError(w, err)
			return
		}
		req.User = wc.user
	}
	if req.DoAs != "" && req.DoAs != req.User {
		// doas: the same proxy-user rules as RPC (hadoop.proxyuser.*).
		if err := h.nn.access.webProxy(req.User, req.DoAs, remote); err != nil {
			webhdfs.WriteError(w, remoteerr.New(classAuthorization, "%s", err.Error()))
			return
		}
		wc.user, wc.realUser = req.DoAs, req.User
	}
	ctx := context.WithValue(r.Context(), webCallerKey{}, wc)
	if err := h.serve(ctx, w, r, req); err != nil {
		webhdfs.WriteError(w, err)
	}
}

func (h *webHDFS) serve(ctx context.Context, w http.ResponseWriter, r *http.Request, req *webhdfs.Request) error {
	c := h.c
	p := proto.String(req.Path)
	switch req.Op {
	case "GETFILESTATUS":
		resp, err := webCall(ctx, h, "getFileInfo", c.getFileInfo, &hdfs.GetFileInfoRequestProto{Src: p})
		if err != nil {
			return err
		}
		if resp.Fs == nil {
			return remoteerr.New(remoteerr.ClassFileNotFound, "File does not exist: %s", req.Path)
		}
		webhdfs.WriteJSON(w, http.StatusOK, webhdfs.FileStatusBody{FileStatus: jsonStatus(resp.Fs)})
	case "LISTSTATUS":
		var out webhdfs.ListStatusBody
		out.FileStatuses.FileStatus = []webhdfs.FileStatus{}
		// A file lists as itself, with an empty pathSuffix, as in Hadoop.
		fi, err := webCall(notAudited(ctx), h, "getFileInfo", c.getFileInfo, &hdfs.GetFileInfoRequestProto{Src: p})
		if err != nil {
			return err
		}
		if fi.Fs != nil && fi.Fs.GetFileType() != hdfs.HdfsFileStatusProto_IS_DIR {
			out.FileStatuses.FileStatus = append(out.FileStatuses.FileStatus, jsonStatus(fi.Fs))
			webhdfs.WriteJSON(w, http.StatusOK, out)
			return nil
		}
		after := []byte{}
		// Each round returns at least one entry or ends; the bound is a
		// guard against a NameNode bug, not a limit a directory reaches.
		for range 1 << 20 {
			dl, err := h.listing(ctx, req.Path, after)
			if err != nil {
				return err
			}
			for _, st := range dl.PartialListing {
				out.FileStatuses.FileStatus = append(out.FileStatuses.FileStatus, jsonStatus(st))
			}
			if dl.GetRemainingEntries() == 0 || len(dl.PartialListing) == 0 {
				break
			}
			after = dl.PartialListing[len(dl.PartialListing)-1].GetPath()
		}
		webhdfs.WriteJSON(w, http.StatusOK, out)
	case "LISTSTATUS_BATCH":
		dl, err := h.listing(ctx, req.Path, []byte(req.StartAfter))
		if err != nil {
			return err
		}
		var out webhdfs.DirectoryListingBody
		list := []webhdfs.FileStatus{}
		for _, st := range dl.PartialListing {
			list = append(list, jsonStatus(st))
		}
		out.DirectoryListing.PartialListing.FileStatuses.FileStatus = list
		out.DirectoryListing.RemainingEntries = int64(dl.GetRemainingEntries())
		webhdfs.WriteJSON(w, http.StatusOK, out)
	case "GETCONTENTSUMMARY":
		resp, err := webCall(ctx, h, "getContentSummary", c.getContentSummary, &hdfs.GetContentSummaryRequestProto{Path: p})
		if err != nil {
			return err
		}
		s := resp.GetSummary()
		webhdfs.WriteJSON(w, http.StatusOK, map[string]webhdfs.ContentSummary{"ContentSummary": {
			DirectoryCount: int64(s.GetDirectoryCount()), FileCount: int64(s.GetFileCount()), Length: int64(s.GetLength()),
			Quota: int64(s.GetQuota()), SpaceConsumed: int64(s.GetSpaceConsumed()), SpaceQuota: int64(s.GetSpaceQuota()),
			TypeQuota: webTypeQuota(s.GetTypeQuotaInfos()),
		}})
	case "GETQUOTAUSAGE":
		resp, err := webCall(ctx, h, "getQuotaUsage", c.getQuotaUsage, &hdfs.GetQuotaUsageRequestProto{Path: p})
		if err != nil {
			return err
		}
		q := resp.GetUsage()
		webhdfs.WriteJSON(w, http.StatusOK, map[string]webhdfs.QuotaUsage{"QuotaUsage": {
			FileAndDirectoryCount: int64(q.GetFileAndDirectoryCount()), Quota: int64(q.GetQuota()),
			SpaceConsumed: int64(q.GetSpaceConsumed()), SpaceQuota: int64(q.GetSpaceQuota()), TypeQuota: webTypeQuota(q.GetTypeQuotaInfos()),
		}})
	case "GETHOMEDIRECTORY":
		webhdfs.WriteJSON(w, http.StatusOK, map[string]string{"Path": "/user/" + req.User})
	case "GETTRASHROOT":
		webhdfs.WriteJSON(w, http.StatusOK, map[string]string{"Path": "/user/" + req.User + "/.Trash"})
	case "GETSERVERDEFAULTS":
		resp, err := webCall(ctx, h, "getServerDefaults", c.getServerDefaults, &hdfs.GetServerDefaultsRequestProto{})
		if err != nil {
			return err
		}
		d := resp.GetServerDefaults()
		webhdfs.WriteJSON(w, http.StatusOK, map[string]webhdfs.ServerDefaults{"FsServerDefaults": {
			BlockSize: int64(d.GetBlockSize()), BytesPerChecksum: int64(d.GetBytesPerChecksum()),
			WritePacketSize: int64(d.GetWritePacketSize()), Replication: int64(d.GetReplication()),
			FileBufferSize: int64(d.GetFileBufferSize()), EncryptDataTransfer: d.GetEncryptDataTransfer(),
			TrashInterval: int64(d.GetTrashInterval()), ChecksumType: "CRC32C", DefaultStoragePolicyID: 7,
		}})
	case "MKDIRS":
		perm := req.Permission
		if perm == webhdfs.Unset {
			perm = 0o755
		}
		_, err := webCall(ctx, h, "mkdirs", c.mkdirs, &hdfs.MkdirsRequestProto{Src: p,
			Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(uint32(perm))}, CreateParent: proto.Bool(true)})
		if err != nil {
			return err
		}
		webhdfs.Boolean(w, true)
	case "RENAME":
		if req.Destination == "" {
			return remoteerr.New(remoteerr.ClassIllegalArgument, "RENAME: the destination parameter is missing")
		}
		if req.RenameOptions != "" {
			_, err := webCall(ctx, h, "rename2", c.rename2, &hdfs.Rename2RequestProto{Src: p, Dst: proto.String(req.Destination),
				OverwriteDest: proto.Bool(req.RenameOptions == "OVERWRITE")})
			if err != nil {
				return err
			}
			webhdfs.Empty(w)
			return nil
		}
		resp, err := webCall(ctx, h, "rename", c.rename, &hdfs.RenameRequestProto{Src: p, Dst: proto.String(req.Destination)})
		if err != nil {
			return err
		}
		webhdfs.Boolean(w, resp.GetResult())
	case "SETREPLICATION":
		repl := req.Replication
		if repl == webhdfs.Unset {
			repl = int64(h.nn.cfg.Replication)
		}
		resp, err := webCall(ctx, h, "setReplication", c.setReplication, &hdfs.SetReplicationRequestProto{Src: p, Replication: proto.Uint32(uint32(repl))})
		if err != nil {
			return err
		}
		webhdfs.Boolean(w, resp.GetResult())
	case "SETOWNER":
		_, err := webCall(ctx, h, "setOwner", c.setOwner, &hdfs.SetOwnerRequestProto{Src: p, Username: optString(req.Owner), Groupname: optString(req.Group)})
		if err != nil {
			return err
		}
		webhdfs.Empty(w)
	case "SETPERMISSION":
		perm := req.Permission
		if perm == webhdfs.Unset {
			perm = 0o755
		}
		_, err := webCall(ctx, h, "setPermission", c.setPermission, &hdfs.SetPermissionRequestProto{Src: p, Permission: &hdfs.FsPermissionProto{Perm: proto.Uint32(uint32(perm))}})
		if err != nil {
			return err
		}
		webhdfs.Empty(w)
	case "SETTIMES":
		_, err := webCall(ctx, h, "setTimes", c.setTimes, &hdfs.SetTimesRequestProto{Src: p,
			Mtime: proto.Uint64(uint64(req.ModTime)), Atime: proto.Uint64(uint64(req.AccessTime))})
		if err != nil {
			return err
		}
		webhdfs.Empty(w)
	case "CONCAT":
		if len(req.Sources) == 0 {
			return remoteerr.New(remoteerr.ClassIllegalArgument, "CONCAT: the sources parameter is missing")
		}
		_, err := webCall(ctx, h, "concat", c.concat, &hdfs.ConcatRequestProto{Trg: p, Srcs: req.Sources})
		if err != nil {
			return err
		}
		webhdfs.Empty(w)
	case "TRUNCATE":
		if req.NewLength == webhdfs.Unset {
			return remoteerr.New(remoteerr.ClassIllegalArgument, "TRUNCATE: the newlength parameter is missing")
		}
		resp, err := webCall(ctx, h, "truncate", c.truncate, &hdfs.TruncateRequestProto{Src: p,
			NewLength: proto.Uint64(uint64(req.NewLength)), ClientName: proto.String("WebHDFS_" + req.User)})
		if err != nil {
			return err
		}
		webhdfs.Boolean(w, resp.GetResult())
	case "DELETE":
		resp, err := webCall(ctx, h, "delete", c.delete, &hdfs.DeleteRequestProto{Src: p, Recursive: proto.Bool(req.Recursive)})
		if err != nil {
			return err
		}
		webhdfs.Boolean(w, resp.GetResult())
	case "GETACLSTATUS":
		resp, err := webCall(ctx, h, "getAclStatus", c.getAclStatus, &hdfs.GetAclStatusRequestProto{Src: p})
		if err != nil {
			return err
		}
		st := resp.GetResult()
		entries := []string{}
		for _, e := range st.GetEntries() {
			entries = append(entries, aclEntryText(e))
		}
		perm := ""
		if st.GetPermission() != nil {
			perm = webhdfs.Perm(st.GetPermission().GetPerm())
		}
		webhdfs.WriteJSON(w, http.StatusOK, map[string]any{"AclStatus": map[string]any{
			"entries": entries, "group": st.GetGroup(), "owner": st.GetOwner(), "permission": perm, "stickyBit": st.GetSticky(),
		}})
	case "ALLOWSNAPSHOT":
		if _, err := webCall(ctx, h, "allowSnapshot", c.allowSnapshot, &hdfs.AllowSnapshotRequestProto{SnapshotRoot: p}); err != nil {
			return err
		}
		webhdfs.Empty(w)
	case "DISALLOWSNAPSHOT":
		if _, err := webCall(ctx, h, "disallowSnapshot", c.disallowSnapshot, &hdfs.DisallowSnapshotRequestProto{SnapshotRoot: p}); err != nil {
			return err
		}
		webhdfs.Empty(w)
	case "CREATESNAPSHOT":
		resp, err := webCall(ctx, h, "createSnapshot", c.createSnapshot, &hdfs.CreateSnapshotRequestProto{SnapshotRoot: p, SnapshotName: optString(req.SnapshotName)})
		if err != nil {
			return err
		}
		webhdfs.WriteJSON(w, http.StatusOK, map[string]any{"Path": resp.GetSnapshotPath()})
	case "DELETESNAPSHOT":
		if _, err := webCall(ctx, h, "deleteSnapshot", c.deleteSnapshot, &hdfs.DeleteSnapshotRequestProto{SnapshotRoot: p,
			SnapshotName: proto.String(req.SnapshotName)}); err != nil {
			return err
		}
		webhdfs.Empty(w)
	case "RENAMESNAPSHOT":
		if _, err := webCall(ctx, h, "renameSnapshot", c.renameSnapshot, &hdfs.RenameSnapshotRequestProto{SnapshotRoot: p,
			SnapshotOldName: proto.String(req.OldSnapshotName), SnapshotNewName: proto.String(req.SnapshotName)}); err != nil {
			return err
		}
		webhdfs.Empty(w)
	case "GETSNAPSHOTLIST":
		resp, err := webCall(ctx, h, "getSnapshotListing", c.getSnapshotListing, &hdfs.GetSnapshotListingRequestProto{SnapshotRoot: p})
		if err != nil {
			return err
		}
		list := []any{}
		for _, s := range resp.GetSnapshotList().GetSnapshotListing() {
			status := "ACTIVE"
			if s.GetIsDeleted() {
				status = "DELETED"
			}
			list = append(list, map[string]any{"snapshotID": s.GetSnapshotID(), "deletionStatus": status,
				"fullPath":  namespace.SnapshotPath(string(s.GetParentFullpath()), string(s.GetDirStatus().GetPath())),
				"dirStatus": jsonStatus(s.GetDirStatus())})
		}
		webhdfs.WriteJSON(w, http.StatusOK, map[string]any{"SnapshotList": list})
	case "GETSNAPSHOTDIFF":
		from, to := diffSides(req)
		resp, err := webCall(ctx, h, "getSnapshotDiffReport", c.getSnapshotDiffReport, &hdfs.GetSnapshotDiffReportRequestProto{SnapshotRoot: p,
			FromSnapshot: proto.String(from), ToSnapshot: proto.String(to)})
		if err != nil {
			return err
		}
		r := resp.GetDiffReport()
		types := map[string]string{"M": "MODIFY", "+": "CREATE", "-": "DELETE", "R": "RENAME"}
		list := []any{}
		for _, e := range r.GetDiffReportEntries() {
			m := map[string]any{"sourcePath": string(e.GetFullpath()), "type": types[e.GetModificationLabel()]}
			if e.GetModificationLabel() == "R" {
				m["targetPath"] = string(e.GetTargetPath())
			}
			list = append(list, m)
		}
		webhdfs.WriteJSON(w, http.StatusOK, map[string]any{"SnapshotDiffReport": map[string]any{
			"snapshotRoot": r.GetSnapshotRoot(), "fromSnapshot": r.GetFromSnapshot(), "toSnapshot": r.GetToSnapshot(), "diffList": list}})
	case "GETSNAPSHOTDIFFLISTING":
		from, to := diffSides(req)
		resp, err := webCall(ctx, h, "getSnapshotDiffReportListing", c.getSnapshotDiffReportListing, &hdfs.GetSnapshotDiffReportListingRequestProto{
			SnapshotRoot: p, FromSnapshot: proto.String(from), ToSnapshot: proto.String(to),
			Cursor: &hdfs.SnapshotDiffReportCursorProto{StartPath: []byte(req.SnapshotDiffStartPath), Index: proto.Int32(int32(req.SnapshotDiffIndex))}})
		if err != nil {
			return err
		}
		r := resp.GetDiffReport()
		list := func(es []*hdfs.SnapshotDiffReportListingEntryProto) []any {
			out := []any{}
			for _, e := range es {
				m := map[string]any{"dirId": e.GetDirId(), "fileId": e.GetFileId(), "isReference": e.GetIsReference(),
					"sourcePath": string(e.GetFullpath())}
				if e.TargetPath != nil {
					m["targetPath"] = string(e.GetTargetPath())
				}
				out = append(out, m)
			}
			return out
		}
		webhdfs.WriteJSON(w, http.StatusOK, map[string]any{"SnapshotDiffReportListing": map[string]any{
			"createList": list(r.GetCreatedEntries()), "deleteList": list(r.GetDeletedEntries()), "modifyList": list(r.GetModifiedEntries()),
			"isFromEarlier": r.GetIsFromEarlier(), "lastIndex": r.GetCursor().GetIndex(), "lastPath": string(r.GetCursor().GetStartPath())}})
	case "GETSNAPSHOTTABLEDIRECTORYLIST":
		resp, err := webCall(ctx, h, "getSnapshottableDirListing", c.getSnapshottableDirListing, &hdfs.GetSnapshottableDirListingRequestProto{})
		if err != nil {
			return err
		}
		var list []any // null when there are none, as HDFS answers
		for _, d := range resp.GetSnapshottableDirList().GetSnapshottableDirListing() {
			list = append(list, map[string]any{"dirStatus": jsonStatus(d.GetDirStatus()), "parentFullPath": string(d.GetParentFullpath()),
				"snapshotNumber": d.GetSnapshotNumber(), "snapshotQuota": d.GetSnapshotQuota()})
		}
		webhdfs.WriteJSON(w, http.StatusOK, map[string]any{"SnapshottableDirectoryList": list})
	case "CREATE", "APPEND", "OPEN", "GETFILECHECKSUM":
		return h.redirect(ctx, w, r, req)
	default:
		if ok, err := h.serveTokenOp(ctx, w, req); ok {
			return err
		}
		if ok, err := h.serveFeature(ctx, w, req); ok {
			return err
		}
		return remoteerr.New(remoteerr.ClassUnsupported, "%s is not supported by this NameNode yet", req.Op)
	}
	return nil
}

// aclEntryText is an ACL entry as Hadoop writes it: [default:]type:name:rwx.
func aclEntryText(e *hdfs.AclEntryProto) string {
	const rwx = "rwx"
	p := int(e.GetPermissions())
	perm := []byte("---")
	for i := range 3 {
		if p&(4>>i) != 0 {
			perm[i] = rwx[i]
		}
	}
	scope := ""
	if e.GetScope() == hdfs.AclEntryProto_DEFAULT {
		scope = "default:"
	}
	return scope + strings.ToLower(e.GetType().String()) + ":" + e.GetName() + ":" + string(perm)
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return proto.String(s)
}

// listing is one getListing call; a missing path is FileNotFound.
func (h *webHDFS) listing(ctx context.Context, path string, after []byte) (*hdfs.DirectoryListingProto, error) {
	resp, err := webCall(ctx, h, "getListing", h.c.getListing, &hdfs.GetListingRequestProto{
		Src: proto.String(path), StartAfter: after, NeedLocation: proto.Bool(false)})
	if err != nil {
		return nil, err
	}
	if resp.DirList == nil {
		return nil, remoteerr.New(remoteerr.ClassFileNotFound, "File %s does not exist.", path)
	}
	return resp.DirList, nil
}

// jsonStatus is an HdfsFileStatus in WebHDFS's JSON form.
func jsonStatus(st *hdfs.HdfsFileStatusProto) webhdfs.FileStatus {
	typ := "FILE"
	switch st.GetFileType() {
	case hdfs.HdfsFileStatusProto_IS_DIR:
		typ = "DIRECTORY"
	case hdfs.HdfsFileStatusProto_IS_SYMLINK:
		typ = "SYMLINK"
	}
	return webhdfs.FileStatus{
		AccessTime: int64(st.GetAccessTime()), BlockSize: int64(st.GetBlocksize()), ChildrenNum: int64(st.GetChildrenNum()),
		FileID: st.GetFileId(), Group: st.GetGroup(), Length: int64(st.GetLength()),
		ModificationTime: int64(st.GetModificationTime()), Owner: st.GetOwner(), PathSuffix: string(st.GetPath()),
		Permission: webhdfs.Perm(st.GetPermission().GetPerm()), Replication: int64(st.GetBlockReplication()),
		Type: typ,
	}
}

// redirect answers the data operations: 307 to a DataNode's /webhdfs/v1
// with the request's parameters and namenoderpcaddress (or, with
// noredirect=true, 200 and {"Location":...}). OPEN goes to a holder of
// the block at offset, APPEND and GETFILECHECKSUM to a holder of a block of
// the file, CREATE to the next live DataNode.
func (h *webHDFS) redirect(ctx context.Context, w http.ResponseWriter, r *http.Request, req *webhdfs.Request) error {
	var node *hdfs.DatanodeIDProto
	if req.Op != "CREATE" {
		st, err := webCall(ctx, h, "getFileInfo", h.c.getFileInfo, &hdfs.GetFileInfoRequestProto{Src: proto.String(req.Path)})
		if err != nil {
			return err
		}
		if st.Fs == nil {
			return remoteerr.New(remoteerr.ClassFileNotFound, "File does not exist: %s", req.Path)
		}
		if st.Fs.GetFileType() == hdfs.HdfsFileStatusProto_IS_DIR {
			return remoteerr.New(remoteerr.ClassFileNotFound, "Path is not a file: %s", req.Path)
		}
		off := req.Offset
		if req.Op == "APPEND" && st.Fs.GetLength() > 0 {
			off = int64(st.Fs.GetLength()) - 1
		}
		if off < int64(st.Fs.GetLength()) {
			lbs, err := webCall(ctx, h, "getBlockLocations", h.c.getBlockLocations, &hdfs.GetBlockLocationsRequestProto{
				Src: proto.String(req.Path), Offset: proto.Uint64(uint64(off)), Length: proto.Uint64(1)})
			if err != nil {
				return err
			}
			for _, b := range lbs.GetLocations().GetBlocks() {
				if locs := b.GetLocs(); len(locs) > 0 {
					node = locs[0].GetId()
					break
				}
			}
		}
	}
	addr := ""
	if node != nil {
		addr = net.JoinHostPort(node.GetIpAddr(), strconv.Itoa(int(node.GetInfoPort())))
	} else {
		var live []blockmgmt.DatanodeInfo
		h.c.ns.readLocked(func() { live = h.c.ns.mu.bm.DatanodeReport(blockmgmt.ReportLive, h.c.ns.clock.Now()) })
		if len(live) == 0 {
			return remoteerr.New(remoteerr.ClassIOException, "Failed to find datanode, suggest to check cluster health.")
		}
		d := live[h.next.Add(1)%uint64(len(live))]
		addr = net.JoinHostPort(d.ID.IPAddr, strconv.Itoa(d.ID.InfoPort))
	}
	dn := *req
	dn.NoRedirect = false
	dn.NameNodeRPC = h.rpcAddress(r)
	deleg, err := h.redirectDelegation(ctx, req)
	if err != nil {
		return err
	}
	dn.Delegation = deleg
	loc := "http://" + addr + webhdfs.URLPath(req.Path) + "?" + dn.Query()
	if req.NoRedirect {
		webhdfs.WriteJSON(w, http.StatusOK, map[string]string{"Location": loc})
		return nil
	}
	w.Header().Set("Location", loc)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusTemporaryRedirect)
	return nil
}

// rpcAddress is the NameNode RPC address a DataNode should dial for a
// request: the listen address, with an unspecified IP replaced by the one
// the HTTP request arrived on.
func (h *webHDFS) rpcAddress(r *http.Request) string {
	host, port, err := net.SplitHostPort(h.nn.addr.String())
	if err != nil {
		return h.nn.addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			if lh, _, err := net.SplitHostPort(la.String()); err == nil {
				host = lh
			}
		}
	}
	return net.JoinHostPort(host, port)
}

// diffSides are the two sides of GETSNAPSHOTDIFF and GETSNAPSHOTDIFFLISTING:
// Hadoop's oldsnapshotname (from) and snapshotname (to), or fromsnapshot
// and tosnapshot when either of those is given; "" is the current tree.
func diffSides(req *webhdfs.Request) (from, to string) {
	if req.FromSnapshot != "" || req.ToSnapshot != "" {
		return req.FromSnapshot, req.ToSnapshot
	}
	return req.OldSnapshotName, req.SnapshotName
}
