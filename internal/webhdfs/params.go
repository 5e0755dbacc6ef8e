package webhdfs

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// Prefix is the path every WebHDFS URL starts with.
const Prefix = "/webhdfs/v1"

// DefaultUser is the user of a request without user.name: Hadoop's
// hadoop.http.staticuser.user default.
const DefaultUser = "dr.who"

// Unset is the value of an integer parameter the request did not carry.
const Unset = -1

// The operations of Hadoop 3's WebHDFS, by HTTP method, with the name of the
// Java enum Hadoop reports when an op is not one of its method's.
var opsByMethod = map[string]struct {
	enum string
	ops  []string
}{
	http.MethodGet: {"org.apache.hadoop.hdfs.web.resources.GetOpParam.Op", []string{
		"OPEN", "GETFILESTATUS", "LISTSTATUS", "LISTSTATUS_BATCH", "GETCONTENTSUMMARY", "GETQUOTAUSAGE",
		"GETFILECHECKSUM", "GETHOMEDIRECTORY", "GETDELEGATIONTOKEN", "GETTRASHROOT", "GETTRASHROOTS",
		"GETXATTRS", "LISTXATTRS", "GETACLSTATUS", "CHECKACCESS", "GETSERVERDEFAULTS",
		"GETSTORAGEPOLICY", "GETALLSTORAGEPOLICY", "GETSNAPSHOTDIFF", "GETSNAPSHOTDIFFLISTING",
		"GETSNAPSHOTTABLEDIRECTORYLIST", "GETSNAPSHOTLIST", "GETFILEBLOCKLOCATIONS", "GET_BLOCK_LOCATIONS",
		"GETECPOLICY", "GETECPOLICIES", "GETECCODECS", "GETSTATUS", "GETLINKTARGET", "GETFILELINKSTATUS",
	}},
	http.MethodPut: {"org.apache.hadoop.hdfs.web.resources.PutOpParam.Op", []string{
		"CREATE", "MKDIRS", "CREATESYMLINK", "RENAME", "SETREPLICATION", "SETOWNER", "SETPERMISSION",
		"SETTIMES", "RENEWDELEGATIONTOKEN", "CANCELDELEGATIONTOKEN", "MODIFYACLENTRIES",
		"REMOVEACLENTRIES", "REMOVEDEFAULTACL", "REMOVEACL", "SETACL", "SETXATTR", "REMOVEXATTR",
		"ENABLEECPOLICY", "DISABLEECPOLICY", "SETECPOLICY", "ALLOWSNAPSHOT", "DISALLOWSNAPSHOT",
		"CREATESNAPSHOT", "RENAMESNAPSHOT", "SETSTORAGEPOLICY", "SATISFYSTORAGEPOLICY", "SETQUOTA",
		"SETQUOTABYSTORAGETYPE",
	}},
	http.MethodPost: {"org.apache.hadoop.hdfs.web.resources.PostOpParam.Op", []string{
		"APPEND", "CONCAT", "TRUNCATE", "UNSETSTORAGEPOLICY", "UNSETECPOLICY",
	}},
	http.MethodDelete: {"org.apache.hadoop.hdfs.web.resources.DeleteOpParam.Op", []string{
		"DELETE", "DELETESNAPSHOT",
	}},
}

// Request is one parsed WebHDFS request. Integer fields a request did not
// carry are Unset; booleans take Hadoop's defaults.
type Request struct {
	Method string
	Op     string // upper case, one of the method's operations
	Path   string // absolute, without a trailing slash (except "/")

	User string // user.name, DefaultUser when absent
	DoAs string // doas, "" when absent

	Offset       int64 // offset (OPEN), 0 by default
	Length       int64 // length (OPEN)
	BufferSize   int64 // buffersize
	Overwrite    bool  // overwrite (CREATE), false by default
	BlockSize    int64 // blocksize
	Replication  int64 // replication
	Permission   int64 // permission, octal on the wire
	Destination  string
	Recursive    bool // recursive (DELETE, MKDIRS is always recursive)
	Owner, Group string
	ModTime      int64 // modificationtime; Unset leaves it alone
	AccessTime   int64 // accesstime
	Sources      []string
	NewLength    int64 // newlength (TRUNCATE)
	NoRedirect   bool  // noredirect: answer {"Location":...} instead of 307
	StartAfter   string
	// RenameOptions is renameoptions (RENAME): "NONE" or "OVERWRITE";
	// with it RENAME is Hadoop's rename2 (an error instead of false).
	RenameOptions string
	CreateParent  bool   // createparent (CREATE), true by default
	NameNodeRPC   string // namenoderpcaddress, set on redirects to a DataNode

	// XAttrNames is every xattr.name of the request, in order (GETXATTRS
	// takes several; SETXATTR and REMOVEXATTR one).
	XAttrNames []string
	XAttrValue string // xattr.value, encoded as XAttrValue describes
	// XAttrFlag is flag (SETXATTR): XAttrCreate|XAttrReplace, 0 when absent.
	XAttrFlag uint32
	// XAttrEncoding is encoding (GETXATTRS): "TEXT", "HEX", "BASE64" or "".
	XAttrEncoding string
	StoragePolicy string // storagepolicy (SETSTORAGEPOLICY)
	// Delegation is delegation: a delegation token in Hadoop's URL-string
	// form that authenticates the request instead of SPNEGO.
	Delegation string
	// Token is token (RENEWDELEGATIONTOKEN, CANCELDELEGATIONTOKEN), the
	// token acted on; Renewer is renewer (GETDELEGATIONTOKEN).
	Token, Renewer string

	// Snapshot ops: snapshotname (CREATESNAPSHOT, DELETESNAPSHOT, the new
	// name of RENAMESNAPSHOT, the later side of GETSNAPSHOTDIFF and
	// GETSNAPSHOTDIFFLISTING), oldsnapshotname (RENAMESNAPSHOT, the earlier
	// side of a diff), and fromsnapshot and tosnapshot, which a diff
	// also takes for its sides ("" is the current tree).
	SnapshotName, OldSnapshotName string
	FromSnapshot, ToSnapshot      string
	// GETSNAPSHOTDIFFLISTING's cursor: snapshotdiffstartpath ("" at the
	// start) and snapshotdiffindex (-1 at the start), as the previous
	// page's lastPath and lastIndex.
	SnapshotDiffStartPath string
	SnapshotDiffIndex     int64
	ACLSpec               string // aclspec, read by ParseACLSpec
}

// The bits of Request.XAttrFlag: HDFS's XAttrSetFlag values.
const (
	XAttrCreate  = 1
	XAttrReplace = 2
)

// userPattern is the form Hadoop's WebHDFS accepts for user.name and doas
// (dfs.webhdfs.user.provider.user.pattern's default).
const userPattern = "^[A-Za-z_][A-Za-z0-9._-]*[$]?$"

// validUser matches userPattern.
func validUser(u string) bool {
	for i := 0; i < len(u); i++ {
		c := u[i]
		letter := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_'
		switch {
		case letter:
		case i == 0:
			return false
		case c >= '0' && c <= '9' || c == '.' || c == '-':
		case c == '$' && i == len(u)-1:
		default:
			return false
		}
	}
	return u != ""
}

// paramError is Hadoop's answer to a bad parameter value.
func paramError(name, value, why string) error {
	return remoteerr.New(remoteerr.ClassIllegalArgument, "Invalid value for webhdfs parameter %q: %q %s", name, value, why)
}

// Parse reads a WebHDFS request: method, the URL path (decoded, starting
// with Prefix) and the raw query. Parameter names are matched without
// regard to case; unknown parameters are ignored, as in Hadoop. The error
// is a *remoteerr.Error (IllegalArgumentException for a bad value,
// UnsupportedOperationException for a method WebHDFS does not use).
func Parse(method, path, rawQuery string) (*Request, error) {
	if !strings.HasPrefix(path, Prefix) || (len(path) > len(Prefix) && path[len(Prefix)] != '/') {
		return nil, remoteerr.New(remoteerr.ClassIllegalArgument, "webhdfs: path %q does not start with %s/", path, Prefix)
	}
	p := path[len(Prefix):]
	if p == "" {
		p = "/"
	}
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
		if p == "" {
			p = "/"
		}
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, remoteerr.New(remoteerr.ClassIllegalArgument, "webhdfs: malformed query string: %v", err)
	}
	vals := make(map[string]string, len(q))
	for k, v := range q {
		if len(v) > 0 {
			vals[strings.ToLower(k)] = v[len(v)-1]
		}
	}
	r := &Request{Method: method, Path: p, User: DefaultUser, Length: Unset, BufferSize: Unset,
		BlockSize: Unset, Replication: Unset, Permission: Unset, ModTime: Unset, AccessTime: Unset,
		NewLength: Unset, CreateParent: true, SnapshotDiffIndex: Unset}
	ms, ok := opsByMethod[method]
	if !ok {
		return nil, remoteerr.New(remoteerr.ClassUnsupported, "webhdfs: HTTP method %s is not used by WebHDFS (GET, PUT, POST, DELETE)", method)
	}
	op, ok := vals["op"]
	if !ok || op == "" {
		return nil, remoteerr.New(remoteerr.ClassIllegalArgument, "webhdfs: parameter \"op\" is missing")
	}
	r.Op = strings.ToUpper(op)
	known := false
	for _, o := range ms.ops {
		known = known || o == r.Op
	}
	if !known {
		return nil, remoteerr.New(remoteerr.ClassIllegalArgument,
			"Invalid value for webhdfs parameter \"op\": No enum constant %s.%s", ms.enum, r.Op)
	}
	if u, ok := vals["user.name"]; ok && u != "" {
		if !validUser(u) {
			return nil, paramError("user.name", u, "does not belong to the domain "+userPattern)
		}
		r.User = u
	}
	if u, ok := vals["doas"]; ok && u != "" {
		if !validUser(u) {
			return nil, paramError("doas", u, "does not belong to the domain "+userPattern)
		}
		r.DoAs = u
	}
	ints := []struct {
		name     string
		dst      *int64
		min, max int64
	}{
		{"offset", &r.Offset, 0, 1<<63 - 1},
		{"length", &r.Length, 0, 1<<63 - 1},
		{"buffersize", &r.BufferSize, 1, 1<<31 - 1},
		{"blocksize", &r.BlockSize, 1, 1<<63 - 1},
		{"replication", &r.Replication, 1, 1<<15 - 1},
		{"modificationtime", &r.ModTime, -1, 1<<63 - 1},
		{"accesstime", &r.AccessTime, -1, 1<<63 - 1},
		{"newlength", &r.NewLength, 0, 1<<63 - 1},
		{"snapshotdiffindex", &r.SnapshotDiffIndex, -1, 1<<31 - 1},
	}
	for _, in := range ints {
		v, ok := vals[in.name]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, paramError(in.name, v, "is not a decimal integer")
		}
		if n < in.min || n > in.max {
			return nil, paramError(in.name, v, fmt.Sprintf("is out of range [%d, %d]", in.min, in.max))
		}
		*in.dst = n
	}
	if v, ok := vals["permission"]; ok {
		n, err := strconv.ParseInt(v, 8, 64)
		if err != nil || n < 0 || n > 0o1777 {
			return nil, paramError("permission", v, "is not an octal permission between 0 and 1777")
		}
		r.Permission = n
	}
	bools := []struct {
		name string
		dst  *bool
	}{
		{"overwrite", &r.Overwrite}, {"recursive", &r.Recursive}, {"noredirect", &r.NoRedirect},
		{"createparent", &r.CreateParent},
	}
	for _, b := range bools {
		v, ok := vals[b.name]
		if !ok || v == "" {
			continue
		}
		switch strings.ToLower(v) {
		case "true":
			*b.dst = true
		case "false":
			*b.dst = false
		default:
			return nil, paramError(b.name, v, "is not true or false")
		}
	}
	if v, ok := vals["destination"]; ok {
		if !strings.HasPrefix(v, "/") {
			return nil, paramError("destination", v, "is not an absolute path")
		}
		r.Destination = v
	}
	r.Owner, r.Group = vals["owner"], vals["group"]
	if v, ok := vals["sources"]; ok && v != "" {
		for _, s := range strings.Split(v, ",") {
			if !strings.HasPrefix(s, "/") {
				return nil, paramError("sources", v, "holds a path that is not absolute")
			}
			r.Sources = append(r.Sources, s)
		}
	}
	r.StartAfter = vals["startafter"]
	if v, ok := vals["renameoptions"]; ok && v != "" {
		switch strings.ToUpper(v) {
		case "NONE", "OVERWRITE":
			r.RenameOptions = strings.ToUpper(v)
		default:
			return nil, paramError("renameoptions", v, "is not NONE or OVERWRITE")
		}
	}
	r.NameNodeRPC = vals["namenoderpcaddress"]
	r.XAttrNames = repeated(rawQuery, "xattr.name")
	r.XAttrValue = vals["xattr.value"]
	if v := vals["flag"]; v != "" {
		for _, f := range strings.Split(v, ",") {
			switch strings.ToUpper(f) {
			case "CREATE":
				r.XAttrFlag |= XAttrCreate
			case "REPLACE":
				r.XAttrFlag |= XAttrReplace
			default:
				return nil, remoteerr.New(remoteerr.ClassIllegalArgument,
					"Invalid value for webhdfs parameter \"flag\": No enum constant org.apache.hadoop.fs.XAttrSetFlag.%s", strings.ToUpper(f))
			}
		}
	}
	if v := vals["encoding"]; v != "" {
		switch strings.ToUpper(v) {
		case "TEXT", "HEX", "BASE64":
			r.XAttrEncoding = strings.ToUpper(v)
		default:
			return nil, remoteerr.New(remoteerr.ClassIllegalArgument,
				"Invalid value for webhdfs parameter \"encoding\": No enum constant org.apache.hadoop.fs.XAttrCodec.%s", strings.ToUpper(v))
		}
	}
	r.StoragePolicy = vals["storagepolicy"]
	r.ACLSpec = vals["aclspec"]
	r.Delegation, r.Token, r.Renewer = vals["delegation"], vals["token"], vals["renewer"]
	r.SnapshotName, r.OldSnapshotName = vals["snapshotname"], vals["oldsnapshotname"]
	r.FromSnapshot, r.ToSnapshot = vals["fromsnapshot"], vals["tosnapshot"]
	r.SnapshotDiffStartPath = vals["snapshotdiffstartpath"]
	return r, nil
}

// Query is the request's parameters as a query string that Parse reads
// back into the same Request (the NameNode builds its redirects with it).
func (r *Request) Query() string {
	q := url.Values{}
	q.Set("op", r.Op)
	q.Set("user.name", r.User)
	if r.DoAs != "" {
		q.Set("doas", r.DoAs)
	}
	for _, in := range []struct {
		name string
		v    int64
		def  int64
	}{
		{"offset", r.Offset, 0}, {"length", r.Length, Unset}, {"buffersize", r.BufferSize, Unset},
		{"blocksize", r.BlockSize, Unset}, {"replication", r.Replication, Unset},
		{"modificationtime", r.ModTime, Unset}, {"accesstime", r.AccessTime, Unset},
		{"newlength", r.NewLength, Unset}, {"snapshotdiffindex", r.SnapshotDiffIndex, Unset},
	} {
		if in.v != in.def {
			q.Set(in.name, strconv.FormatInt(in.v, 10))
		}
	}
	if r.Permission != Unset {
		q.Set("permission", strconv.FormatInt(r.Permission, 8))
	}
	if r.Overwrite {
		q.Set("overwrite", "true")
	}
	if r.Recursive {
		q.Set("recursive", "true")
	}
	if r.NoRedirect {
		q.Set("noredirect", "true")
	}
	if !r.CreateParent {
		q.Set("createparent", "false")
	}
	if r.Destination != "" {
		q.Set("destination", r.Destination)
	}
	if r.Owner != "" {
		q.Set("owner", r.Owner)
	}
	if r.Group != "" {
		q.Set("group", r.Group)
	}
	if len(r.Sources) > 0 {
		q.Set("sources", strings.Join(r.Sources, ","))
	}
	if r.StartAfter != "" {
		q.Set("startAfter", r.StartAfter)
	}
	if r.RenameOptions != "" {
		q.Set("renameoptions", r.RenameOptions)
	}
	if r.NameNodeRPC != "" {
		q.Set("namenoderpcaddress", r.NameNodeRPC)
	}
	if r.Delegation != "" {
		q.Set("delegation", r.Delegation)
	}
	if r.Token != "" {
		q.Set("token", r.Token)
	}
	if r.Renewer != "" {
		q.Set("renewer", r.Renewer)
	}
	if r.XAttrValue != "" {
		q.Set("xattr.value", r.XAttrValue)
	}
	var flags []string
	if r.XAttrFlag&XAttrCreate != 0 {
		flags = append(flags, "CREATE")
	}
	if r.XAttrFlag&XAttrReplace != 0 {
		flags = append(flags, "REPLACE")
	}
	if len(flags) > 0 {
		q.Set("flag", strings.Join(flags, ","))
	}
	if r.XAttrEncoding != "" {
		q.Set("encoding", r.XAttrEncoding)
	}
	if r.StoragePolicy != "" {
		q.Set("storagepolicy", r.StoragePolicy)
	}
	if r.ACLSpec != "" {
		q.Set("aclspec", r.ACLSpec)
	}
	for k, v := range map[string]string{"snapshotname": r.SnapshotName, "oldsnapshotname": r.OldSnapshotName,
		"fromsnapshot": r.FromSnapshot, "tosnapshot": r.ToSnapshot, "snapshotdiffstartpath": r.SnapshotDiffStartPath} {
		if v != "" {
			q.Set(k, v)
		}
	}
	out := q.Encode()
	// xattr.name repeats and keeps its order, which Encode's sorting of
	// one key's values would not change but its map would not hold.
	for _, n := range r.XAttrNames {
		out += "&xattr.name=" + url.QueryEscape(n)
	}
	return out
}

// repeated is every value of the parameter name (matched without regard
// to case) in rawQuery, in order; nil when there is none. rawQuery has
// already passed url.ParseQuery.
func repeated(rawQuery, name string) []string {
	var out []string
	for _, kv := range strings.Split(rawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		k, err := url.QueryUnescape(k)
		if err != nil || !strings.EqualFold(k, name) {
			continue
		}
		if v, err = url.QueryUnescape(v); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// URLPath is the escaped URL path of the request's Path.
func URLPath(p string) string {
	return (&url.URL{Path: Prefix + p}).EscapedPath()
}

// Ops lists every operation WebHDFS names for method, sorted.
func Ops(method string) []string {
	out := append([]string(nil), opsByMethod[method].ops...)
	sort.Strings(out)
	return out
}
