package namenode

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/audit"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security/authorize"
)

// AuditConfig is where and how the NameNode writes hdfs-audit.log.
type AuditConfig struct {
	// Enabled: the audit log is written (hdfs.audit.logger names the
	// RFAAUDIT appender, or is unset and there is a log directory).
	Enabled bool
	// Log is the writer's configuration: the directory (hadoop.log.dir,
	// else $HADOOP_LOG_DIR), dfs.namenode.audit.log.async (true here;
	// Hadoop: false), .async.blocking (true), .async.buffer.size (128),
	// .debug.cmdlist, hdfs.audit.log.maxfilesize (256MB),
	// .maxbackupindex (20), hadoop.caller.context.*.
	Log audit.Config
}

// auditConfigFrom reads the audit log's keys; env is $HDFS_AUDIT_LOGGER
// and $HADOOP_LOG_DIR's source.
func auditConfigFrom(c *conf.Conf, env func(string) string, errs *[]error) AuditConfig {
	r := c.Reader(errs)
	var a AuditConfig
	if v := strings.TrimSpace(c.String(conf.DFSNameNodeAuditLoggers)); v != "" && v != "default" {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "default" {
				*errs = append(*errs, fmt.Errorf("%s: audit logger %q is not supported (only \"default\", the hdfs-audit.log writer; from %s)",
					conf.DFSNameNodeAuditLoggers, name, c.Source(conf.DFSNameNodeAuditLoggers)))
			}
		}
	}
	dir := strings.TrimSpace(c.String(conf.HadoopLogDir))
	if dir == "" {
		dir = env("HADOOP_LOG_DIR")
	}
	logger := strings.TrimSpace(c.String(conf.HDFSAuditLogger))
	if logger == "" {
		logger = strings.TrimSpace(env("HDFS_AUDIT_LOGGER"))
	}
	level, appenders, _ := strings.Cut(logger, ",")
	level = strings.ToUpper(strings.TrimSpace(level))
	switch {
	case logger == "":
		a.Enabled = dir != ""
	case level == "OFF":
	case level != "INFO" && level != "DEBUG" && level != "TRACE" && level != "WARN" && level != "ERROR" && level != "FATAL":
		*errs = append(*errs, fmt.Errorf("%s: unknown level %q in %q (want LEVEL,APPENDER, e.g. INFO,RFAAUDIT)", conf.HDFSAuditLogger, level, logger))
	default:
		for _, ap := range strings.Split(appenders, ",") {
			switch strings.TrimSpace(ap) {
			case "RFAAUDIT", "DRFAAUDIT":
				a.Enabled = level == "INFO" || level == "DEBUG" || level == "TRACE"
			case "NullAppender", "":
			default:
				*errs = append(*errs, fmt.Errorf("%s: appender %q is not supported (RFAAUDIT writes hdfs-audit.log, NullAppender nothing)", conf.HDFSAuditLogger, ap))
			}
		}
		a.Log.DebugLevel = level == "DEBUG" || level == "TRACE"
	}
	if a.Enabled && dir == "" {
		*errs = append(*errs, fmt.Errorf("%s=%s: no log directory for hdfs-audit.log (set %s or HADOOP_LOG_DIR)", conf.HDFSAuditLogger, logger, conf.HadoopLogDir))
		a.Enabled = false
	}
	a.Log.Dir = dir
	a.Log.Async = r.Bool(conf.DFSNameNodeAuditLogAsync)
	a.Log.Blocking = r.Bool(conf.DFSNameNodeAuditLogAsyncBlocking)
	a.Log.BufferSize = int(r.Int(conf.DFSNameNodeAuditLogAsyncBufferSize))
	if a.Log.BufferSize <= 0 {
		*errs = append(*errs, fmt.Errorf("%s must be positive, got %d", conf.DFSNameNodeAuditLogAsyncBufferSize, a.Log.BufferSize))
	}
	a.Log.Debug = c.Strings(conf.DFSNameNodeAuditLogDebugCmdlist)
	if n, err := parseLog4jSize(c.String(conf.HDFSAuditLogMaxFileSize)); err != nil {
		*errs = append(*errs, fmt.Errorf("%s: %v", conf.HDFSAuditLogMaxFileSize, err))
	} else {
		a.Log.MaxFileSize = n
	}
	a.Log.MaxBackups = int(r.Int(conf.HDFSAuditLogMaxBackupIndex))
	a.Log.CallerContext = r.Bool(conf.HadoopCallerContextEnabled)
	a.Log.CallerContextMax = int(r.Int(conf.HadoopCallerContextMaxSize))
	a.Log.SignatureMax = int(r.Int(conf.HadoopCallerContextSignatureMaxSize))
	return a
}

// parseLog4jSize reads a log4j file size: a number with an optional KB,
// MB or GB.
func parseLog4jSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}} {
		if strings.HasSuffix(strings.ToUpper(s), u.suffix) {
			s, mult = strings.TrimSpace(s[:len(s)-2]), u.m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q (want a positive number with KB, MB or GB)", s)
	}
	return n * mult, nil
}

// openAudit opens the audit log when it is enabled (nil otherwise).
func openAudit(cfg AuditConfig) (*audit.Logger, error) {
	if !cfg.Enabled {
		return nil, nil
	}
	l, err := audit.Open(cfg.Log)
	if err != nil {
		return nil, fmt.Errorf("namenode: %w", err)
	}
	return l, nil
}

// auditSpec is how one ClientProtocol method is audited: Hadoop's command
// name and the request fields that are its src and dst.
type auditSpec struct {
	cmd      string
	src, dst string // request field names ("" for none)
	// stat: the perm field is the status of src ('s') or dst ('d') after
	// a successful call, as Hadoop's auditStat; 0 for perm=null.
	stat byte
	// cmdOf computes the command from the request (setQuota, rename2).
	cmdOf func(proto.Message) string
	// srcOf and dstOf compute src and dst when a field is not enough.
	srcOf, dstOf func(proto.Message) string
}

// auditSpecs are the audited ClientProtocol methods, with Hadoop's
// FSNamesystem command names. Block-level calls (addBlock, complete, …)
// are not audited, as in Hadoop.
var auditSpecs = map[string]auditSpec{
	"getBlockLocations":  {cmd: "open", src: "src"},
	"getFileInfo":        {cmd: "getfileinfo", src: "src"},
	"getFileLinkInfo":    {cmd: "getfileinfo", src: "src"},
	"getListing":         {cmd: "listStatus", src: "src"},
	"getContentSummary":  {cmd: "contentSummary", src: "path"},
	"getQuotaUsage":      {cmd: "quotaUsage", src: "path"},
	"mkdirs":             {cmd: "mkdirs", src: "src", stat: 's'},
	"create":             {cmd: "create", src: "src", stat: 's'},
	"append":             {cmd: "append", src: "src"},
	"delete":             {cmd: "delete", src: "src"},
	"rename":             {cmd: "rename", src: "src", dst: "dst", stat: 'd'},
	"rename2":            {cmdOf: rename2Cmd, src: "src", dst: "dst", stat: 'd'},
	"setPermission":      {cmd: "setPermission", src: "src", stat: 's'},
	"setOwner":           {cmd: "setOwner", src: "src", stat: 's'},
	"setTimes":           {cmd: "setTimes", src: "src", stat: 's'},
	"setReplication":     {cmd: "setReplication", src: "src"},
	"setQuota":           {cmdOf: quotaCmd, src: "path"},
	"concat":             {cmd: "concat", srcOf: concatSrcs, dst: "trg", stat: 'd'},
	"truncate":           {cmd: "truncate", src: "src", stat: 's'},
	"recoverLease":       {cmd: "recoverLease", src: "src"},
	"isFileClosed":       {cmd: "isFileClosed", src: "src"},
	"setXAttr":           {cmd: "setXAttr", src: "src", stat: 's'},
	"removeXAttr":        {cmd: "removeXAttr", src: "src", stat: 's'},
	"getXAttrs":          {cmd: "getXAttrs", src: "src"},
	"listXAttrs":         {cmd: "listXAttrs", src: "src"},
	"setStoragePolicy":   {cmd: "setStoragePolicy", src: "src", stat: 's'},
	"unsetStoragePolicy": {cmd: "unsetStoragePolicy", src: "src", stat: 's'},
	"getStoragePolicy":   {cmd: "getStoragePolicy", src: "path"},
	"modifyAclEntries":   {cmd: "modifyAclEntries", src: "src", stat: 's'},
	"removeAclEntries":   {cmd: "removeAclEntries", src: "src", stat: 's'},
	"removeDefaultAcl":   {cmd: "removeDefaultAcl", src: "src", stat: 's'},
	"removeAcl":          {cmd: "removeAcl", src: "src", stat: 's'},
	"setAcl":             {cmd: "setAcl", src: "src", stat: 's'},
	"getAclStatus":       {cmd: "getAclStatus", src: "src"},
	"allowSnapshot":      {cmd: "allowSnapshot", src: "snapshotRoot"},
	"disallowSnapshot":   {cmd: "disallowSnapshot", src: "snapshotRoot"},
	"createSnapshot": {cmd: "createSnapshot", src: "snapshotRoot",
		dstOf: func(m proto.Message) string { return snapshotPath(m, "snapshotRoot", "snapshotName") }},
	"deleteSnapshot": {cmd: "deleteSnapshot",
		srcOf: func(m proto.Message) string { return snapshotPath(m, "snapshotRoot", "snapshotName") }},
	"renameSnapshot": {cmd: "renameSnapshot",
		srcOf: func(m proto.Message) string { return snapshotPath(m, "snapshotRoot", "snapshotOldName") },
		dstOf: func(m proto.Message) string { return snapshotPath(m, "snapshotRoot", "snapshotNewName") }},
	"getSnapshottableDirListing": {cmd: "listSnapshottableDirectory"},
	"getDelegationToken":         {cmd: "getDelegationToken"},
	"renewDelegationToken":       {cmd: "renewDelegationToken"},
	"cancelDelegationToken":      {cmd: "cancelDelegationToken"},
	"listOpenFiles":              {cmd: "listOpenFiles", src: "path"},
	"getDatanodeReport":          {cmd: "datanodeReport"},
	"getDatanodeStorageReport":   {cmd: "getDatanodeStorageReport"},
	"saveNamespace":              {cmd: "saveNamespace"},
	"rollEdits":                  {cmd: "rollEditLog"},
	"metaSave":                   {cmd: "metaSave"},
	"refreshNodes":               {cmd: "refreshNodes"},
	"finalizeUpgrade":            {cmd: "finalizeUpgrade"},
}

// stringField is the string field name of m ("" when m has none).
func stringField(m proto.Message, name string) string {
	r := m.ProtoReflect()
	fd := r.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() {
		return ""
	}
	return r.Get(fd).String()
}

func snapshotPath(m proto.Message, root, name string) string {
	r := strings.TrimSuffix(stringField(m, root), "/")
	return r + "/.snapshot/" + stringField(m, name)
}

// rename2Cmd is Hadoop's "rename (options=[…])".
func rename2Cmd(m proto.Message) string {
	req, _ := m.(*hdfs.Rename2RequestProto)
	var opts []string
	if req.GetOverwriteDest() {
		opts = append(opts, "OVERWRITE")
	}
	if req.GetMoveToTrash() {
		opts = append(opts, "TO_TRASH")
	}
	if len(opts) == 0 {
		opts = []string{"NONE"}
	}
	return "rename (options=[" + strings.Join(opts, ", ") + "])"
}

// quotaCmd is the command Hadoop logs for setQuota: clearQuota,
// clearSpaceQuota, setQuota or setSpaceQuota.
func quotaCmd(m proto.Message) string {
	req, _ := m.(*hdfs.SetQuotaRequestProto)
	const reset, dontSet = uint64(1<<64 - 1), uint64(1<<63 - 1) // -1 and Long.MAX_VALUE
	ns, ds := req.GetNamespaceQuota(), req.GetStoragespaceQuota()
	switch {
	case ns == reset && ds == dontSet:
		return "clearQuota"
	case ns == dontSet && ds == reset:
		return "clearSpaceQuota"
	case ds == dontSet:
		return "setQuota"
	default:
		return "setSpaceQuota"
	}
}

// concatSrcs prints the sources as Java's Arrays.toString: [/a, /b].
func concatSrcs(m proto.Message) string {
	req, _ := m.(*hdfs.ConcatRequestProto)
	return "[" + strings.Join(req.GetSrcs(), ", ") + "]"
}

// auditCall logs the call of method with req when the audit log is on
// and the method is audited: an answered call as allowed=true, a refused
// one (AccessControlException) as allowed=false; other failures are not
// logged, as in Hadoop. The line is queued; nothing here waits for the
// disk (unless the queue is full and blocking, see package audit).
func (nn *NameNode) auditCall(ctx context.Context, method string, req, resp proto.Message, err error) {
	if nn.audit == nil || ctx.Value(notAuditedKey{}) != nil {
		return
	}
	spec, ok := auditSpecs[method]
	if !ok {
		return
	}
	allowed := err == nil
	if !allowed {
		if class, _ := remoteerr.ClassOf(err); class != remoteerr.ClassAccessControl && !errors.Is(err, fs.ErrPermission) {
			return
		}
	}
	e := audit.Event{Allowed: allowed, Cmd: spec.cmd, Time: nn.deps.Clock.Now()}
	if spec.cmdOf != nil {
		e.Cmd = spec.cmdOf(req)
	}
	switch {
	case spec.srcOf != nil:
		e.Src = spec.srcOf(req)
	case spec.src != "":
		e.Src = stringField(req, spec.src)
	}
	switch {
	case spec.dstOf != nil:
		e.Dst = spec.dstOf(req)
	case spec.dst != "":
		e.Dst = stringField(req, spec.dst)
	}
	if wc, ok := ctx.Value(webCallerKey{}).(webCaller); ok {
		e.WebHDFS = true
		e.IP = wc.remote
		e.UGI = webUGI(wc)
	} else if ci, ok := ipc.CallerFromContext(ctx); ok {
		e.UGI = callerUGI(ci)
		if ci.Remote != nil {
			if h, _, err := net.SplitHostPort(ci.Remote.String()); err == nil {
				e.IP = h
			}
		}
		e.CallerContext, e.Signature = ci.CallerContext, ci.CallerSignature
	}
	if allowed && spec.stat != 0 {
		e.Perm = nn.auditStat(method, spec, e, resp)
	}
	nn.audit.Log(e)
}

// callerUGI prints an RPC caller as Hadoop's UserGroupInformation does.
func callerUGI(ci ipc.Caller) string {
	return authorize.UGI(authorize.Conn{User: ci.User, RealUser: ci.RealUser, Principal: ci.Principal, TokenAuth: ci.TokenAuth})
}

// auditStat is the status of the call's path after it succeeded (the
// perm field): from the answer when it carries one, else read under the
// namesystem's read lock.
func (nn *NameNode) auditStat(method string, spec auditSpec, e audit.Event, resp proto.Message) *audit.Perm {
	if r, ok := resp.(*hdfs.CreateResponseProto); ok && r.GetFs() != nil {
		fs := r.GetFs()
		return &audit.Perm{Owner: fs.GetOwner(), Group: fs.GetGroup(), Mode: uint16(fs.GetPermission().GetPerm())}
	}
	p := e.Src
	if spec.stat == 'd' {
		p = e.Dst
	}
	if p == "" {
		return nil
	}
	var fi namespace.FileInfo
	var err error
	su := namespace.Caller{User: nn.cfg.SuperUser, Super: true}
	nn.ns.read(func(t *namespace.Tree) {
		fi, err = t.Stat(su, p)
		if err == nil && fi.IsDir && method == "rename" {
			// The old rename moves src into an existing directory dst.
			if in, err2 := t.Stat(su, strings.TrimSuffix(p, "/")+"/"+path.Base(e.Src)); err2 == nil {
				fi = in
			}
		}
	})
	if err != nil {
		return nil
	}
	return &audit.Perm{Owner: fi.Perm.User, Group: fi.Perm.Group, Mode: fi.Perm.Mode}
}

// closeAudit flushes and closes the audit log.
func (nn *NameNode) closeAudit() error {
	if nn.audit == nil {
		return nil
	}
	return nn.audit.Close()
}

// AuditLogPath is the audit log's file ("" when it is off).
func (nn *NameNode) AuditLogPath() string {
	if nn.audit == nil {
		return ""
	}
	return nn.audit.Path()
}

// notAuditedKey marks a call made on the way to another one (WebHDFS
// LISTSTATUS's look at its path before the listing): Hadoop logs only the
// operation asked for.
type notAuditedKey struct{}

func notAudited(ctx context.Context) context.Context {
	return context.WithValue(ctx, notAuditedKey{}, true)
}
