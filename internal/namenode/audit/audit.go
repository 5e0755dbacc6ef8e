// Package audit writes the NameNode's audit log, hdfs-audit.log: one line
// per namespace operation a client asked for, allowed or refused, in the
// format of Hadoop's FSNamesystem.audit logger, so that the tools that read
// Hadoop's audit logs read ours.
//
// A line is
//
//	2026-12-03 10:12:07,123 INFO FSNamesystem.audit: allowed=true<TAB>ugi=joe (auth:SIMPLE)<TAB>ip=/127.0.0.1<TAB>cmd=create<TAB>src=/p<TAB>dst=null<TAB>perm=joe:supergroup:rw-r--r--<TAB>proto=rpc
//
// with a last field callerContext=CONTEXT[:SIGNATURE] when the caller sent
// one and hadoop.caller.context.enabled is true. The prefix is the layout
// Hadoop's log4j.properties gives the RFAAUDIT appender (%d{ISO8601} %p
// %c{2}: %m%n, local time). src and dst are escaped as Java's escapeJava
// does (quotes, backslashes, control and non-ASCII characters as \uXXXX), so
// a path cannot forge a field or a line.
//
// The Logger is asynchronous when Config.Async is set: Log puts the event
// in a bounded queue and a writer goroutine formats and writes it, so a
// call's answer never waits for the disk.
// The writer lets lines gather for 10 ms after the first one arrives
// (Config.FlushDelay; less when the queue fills) and then writes them all
// out, so a busy NameNode wakes it and makes one write system call per
// burst of lines, not one per line; Close writes everything out. When the queue is full, Log waits for room (Config.Blocking, the default,
// as Hadoop's asynchronous audit logging does: an audit trail with holes is
// worse than a slower NameNode, and only a disk slower than the NameNode's
// whole call rate fills it) or drops the event and counts it (Dropped; the
// next line written is preceded by a WARN line saying how many were lost).
// Without Async, Log writes and flushes the line itself.
//
// Safe for concurrent use. Close drains the queue, flushes and closes the
// file.
package audit

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"
)

// FileName is the audit log's name in the log directory.
const FileName = "hdfs-audit.log"

// Event is one audited operation.
type Event struct {
	Time    time.Time
	Allowed bool
	UGI     string // as Hadoop prints a UserGroupInformation: "joe (auth:SIMPLE)"
	IP      string // the caller's address without port; "" prints null
	Cmd     string
	Src     string // "" prints null
	Dst     string // "" prints null
	Perm    *Perm  // the path's status after the operation; nil prints null
	WebHDFS bool   // proto=webhdfs, else rpc
	// CallerContext and Signature are the caller context of the call,
	// printed when set (the Logger cuts them to its configured sizes).
	CallerContext string
	Signature     []byte
}

// Perm is an inode's owner, group and permission bits (with the sticky bit).
type Perm struct {
	Owner, Group string
	Mode         uint16
}

// Config configures a Logger.
type Config struct {
	// Dir is the log directory; the file is Dir/hdfs-audit.log.
	Dir string
	// Async: a writer goroutine writes the lines
	// (dfs.namenode.audit.log.async).
	Async bool
	// Blocking: with Async, Log waits when the queue is full instead of
	// dropping the event (dfs.namenode.audit.log.async.blocking).
	Blocking bool
	// BufferSize is the queue's capacity in events
	// (dfs.namenode.audit.log.async.buffer.size; default 128).
	BufferSize int
	// MaxFileSize rolls the file when it grows past this many bytes
	// (hdfs.audit.log.maxfilesize, 256 MB); MaxBackups old files are kept as
	// hdfs-audit.log.1 … .N (hdfs.audit.log.maxbackupindex, 20).
	MaxFileSize int64
	MaxBackups  int
	// Debug lists commands logged only at DEBUG level
	// (dfs.namenode.audit.log.debug.cmdlist): they are left out unless
	// DebugLevel is set.
	Debug      []string
	DebugLevel bool
	// CallerContext prints the callerContext field
	// (hadoop.caller.context.enabled); the context is cut to
	// CallerContextMax characters (hadoop.caller.context.max.size, 128)
	// and a signature longer than SignatureMax bytes is left out
	// (hadoop.caller.context.signature.max.size, 40).
	CallerContext    bool
	CallerContextMax int
	SignatureMax     int
	// FlushDelay is how long, with Async, the writer lets lines gather
	// after the first one before it writes them to the file (hdfsgo's;
	// default 10 ms; a full queue cuts it short). Lines a crash catches
	// queued are lost. Negative: write at once.
	FlushDelay time.Duration
}

// Logger writes audit events to a file.
type Logger struct {
	cfg   Config
	path  string
	debug map[string]bool

	queue chan Event    // Async only
	kick  chan struct{} // cap 1: the queue is full, write now
	done  chan struct{} // closed when the writer has returned

	closeOnce sync.Once
	closed    atomic.Bool
	dropped   atomic.Int64 // events dropped on a full queue, not yet reported
	lost      atomic.Int64 // all events dropped
	written   atomic.Int64

	mu struct {
		sync.Mutex
		f    *os.File
		w    *bufio.Writer
		size int64
		err  error // the first write error; the log stops writing after it
		buf  []byte
	}
}

// Open creates (or appends to) Dir/hdfs-audit.log and, with Async, starts
// the writer goroutine.
func Open(cfg Config) (*Logger, error) {
	if cfg.BufferSize <= 0 {
		cfg.BufferSize = 128
	}
	if cfg.MaxFileSize <= 0 {
		cfg.MaxFileSize = 256 << 20
	}
	if cfg.MaxBackups < 0 {
		cfg.MaxBackups = 0
	}
	if cfg.CallerContextMax <= 0 {
		cfg.CallerContextMax = 128
	}
	if cfg.SignatureMax <= 0 {
		cfg.SignatureMax = 40
	}
	if cfg.FlushDelay == 0 {
		cfg.FlushDelay = 10 * time.Millisecond
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("audit: log directory: %w", err)
	}
	l := &Logger{cfg: cfg, path: filepath.Join(cfg.Dir, FileName), debug: map[string]bool{}}
	for _, c := range cfg.Debug {
		if c = strings.TrimSpace(c); c != "" {
			l.debug[c] = true
		}
	}
	if err := l.openFile(); err != nil {
		return nil, err
	}
	if cfg.Async {
		l.queue = make(chan Event, cfg.BufferSize)
		l.kick = make(chan struct{}, 1)
		l.done = make(chan struct{})
		go l.run()
	}
	return l, nil
}

// Path is the audit log file's path.
func (l *Logger) Path() string { return l.path }

// Stats are the Logger's counters.
type Stats struct {
	Written int64 // lines written
	Dropped int64 // events dropped on a full queue (Blocking false)
}

// Stats returns the counters.
func (l *Logger) Stats() Stats {
	return Stats{Written: l.written.Load(), Dropped: l.lost.Load()}
}

func (l *Logger) openFile() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit: %w", err)
	}
	l.mu.f, l.mu.size = f, st.Size()
	l.mu.w = bufio.NewWriterSize(f, 64<<10)
	return nil
}

// Log records e. It never fails: a Logger that cannot write reports the
// error through Err and goes on answering (as a log4j appender does).
func (l *Logger) Log(e Event) {
	if l == nil || l.closed.Load() {
		return
	}
	if !l.cfg.DebugLevel && l.debug[e.Cmd] {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	if l.queue == nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.writeLocked(e)
		l.flushLocked()
		return
	}
	defer func() { _ = recover() }() // the queue closed under us: Close won the race
	select {
	case l.queue <- e:
		return
	default:
	}
	// Full: wake the writer if it is letting lines gather.
	select {
	case l.kick <- struct{}{}:
	default:
	}
	if l.cfg.Blocking {
		l.queue <- e
		return
	}
	l.dropped.Add(1)
	l.lost.Add(1)
}

// run is the writer goroutine. It sleeps until a line is queued, then
// lets lines gather for FlushDelay (less when the queue fills: Log kicks
// it), formats everything queued into its buffer and writes the buffer
// out: a busy NameNode wakes it and makes one write system call per
// FlushDelay rather than per line.
func (l *Logger) run() {
	defer close(l.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		e, ok := <-l.queue
		if !ok {
			return // Close flushes
		}
		if l.cfg.FlushDelay > 0 {
			timer.Reset(l.cfg.FlushDelay)
			select {
			case <-timer.C:
			case <-l.kick:
				timer.Stop()
			}
		}
		l.mu.Lock()
		l.writeLocked(e)
	more:
		for range 4 * cap(l.queue) {
			select {
			case e, ok := <-l.queue:
				if !ok {
					break more
				}
				l.writeLocked(e)
			default:
				break more
			}
		}
		l.flushLocked()
		l.mu.Unlock()
	}
}

// Err is the first error writing the file, if any.
func (l *Logger) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.err
}

// Close writes what is queued, flushes and closes the file.
func (l *Logger) Close() error {
	if l == nil {
		return nil
	}
	l.closeOnce.Do(func() {
		l.closed.Store(true)
		if l.queue != nil {
			close(l.queue)
			<-l.done
		}
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.f == nil {
		return l.mu.err
	}
	l.flushLocked()
	err := l.mu.f.Close()
	l.mu.f, l.mu.w = nil, nil
	if l.mu.err != nil {
		return l.mu.err
	}
	return err
}

func (l *Logger) writeLocked(e Event) {
	if l.mu.w == nil || l.mu.err != nil {
		return
	}
	if n := l.dropped.Swap(0); n > 0 {
		l.mu.buf = appendPrefix(l.mu.buf[:0], e.Time, "WARN")
		l.mu.buf = fmt.Appendf(l.mu.buf, "%d audit events were dropped: the queue (dfs.namenode.audit.log.async.buffer.size=%d) was full and dfs.namenode.audit.log.async.blocking is false\n",
			n, l.cfg.BufferSize)
		l.emitLocked()
	}
	l.mu.buf = l.Append(l.mu.buf[:0], e)
	l.emitLocked()
	l.written.Add(1)
}

func (l *Logger) emitLocked() {
	if l.mu.size+int64(len(l.mu.buf)) > l.cfg.MaxFileSize && l.mu.size > 0 {
		l.rollLocked()
		if l.mu.w == nil {
			return
		}
	}
	n, err := l.mu.w.Write(l.mu.buf)
	l.mu.size += int64(n)
	if err != nil {
		l.mu.err = fmt.Errorf("audit: %s: %w", l.path, err)
	}
}

func (l *Logger) flushLocked() {
	if l.mu.w == nil || l.mu.err != nil {
		return
	}
	if err := l.mu.w.Flush(); err != nil {
		l.mu.err = fmt.Errorf("audit: %s: %w", l.path, err)
	}
}

// rollLocked renames hdfs-audit.log to .1 (and .1 to .2, …, dropping the
// one past MaxBackups) and opens a new file, as log4j's
// RollingFileAppender does.
func (l *Logger) rollLocked() {
	l.flushLocked()
	l.mu.f.Close()
	l.mu.f, l.mu.w = nil, nil
	if l.cfg.MaxBackups == 0 {
		_ = os.Remove(l.path)
	} else {
		_ = os.Remove(fmt.Sprintf("%s.%d", l.path, l.cfg.MaxBackups))
		for i := l.cfg.MaxBackups - 1; i >= 1; i-- {
			_ = os.Rename(fmt.Sprintf("%s.%d", l.path, i), fmt.Sprintf("%s.%d", l.path, i+1))
		}
		_ = os.Rename(l.path, l.path+".1")
	}
	if err := l.openFile(); err != nil {
		l.mu.err = err
	}
}

// appendPrefix appends log4j's "%d{ISO8601} %p %c{2}: " for the
// FSNamesystem.audit logger.
func appendPrefix(b []byte, t time.Time, level string) []byte {
	b = t.AppendFormat(b, "2006-01-02 15:04:05")
	b = append(b, ',')
	ms := t.Nanosecond() / 1e6
	b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	b = append(b, ' ')
	b = append(b, level...)
	return append(b, " FSNamesystem.audit: "...)
}

// Append appends e's whole line (prefix, fields, newline) to b.
func (l *Logger) Append(b []byte, e Event) []byte {
	b = appendPrefix(b, e.Time, "INFO")
	b = AppendFields(b, e)
	if l.cfg.CallerContext && e.CallerContext != "" {
		b = append(b, "\tcallerContext="...)
		ctx := e.CallerContext
		if r := []rune(ctx); len(r) > l.cfg.CallerContextMax {
			ctx = string(r[:l.cfg.CallerContextMax])
		}
		b = append(b, ctx...)
		if n := len(e.Signature); n > 0 && n <= l.cfg.SignatureMax {
			b = append(b, ':')
			b = append(b, e.Signature...)
		}
	}
	return append(b, '\n')
}

// AppendFields appends the fields Hadoop's default audit logger writes,
// allowed through proto, without prefix, caller context or newline.
func AppendFields(b []byte, e Event) []byte {
	b = append(b, "allowed="...)
	b = strconv.AppendBool(b, e.Allowed)
	b = append(b, "\tugi="...)
	b = append(b, e.UGI...)
	b = append(b, "\tip="...)
	if e.IP == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, '/')
		b = append(b, e.IP...)
	}
	b = append(b, "\tcmd="...)
	b = append(b, e.Cmd...)
	b = append(b, "\tsrc="...)
	b = appendPath(b, e.Src)
	b = append(b, "\tdst="...)
	b = appendPath(b, e.Dst)
	b = append(b, "\tperm="...)
	if e.Perm == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Perm.Owner...)
		b = append(b, ':')
		b = append(b, e.Perm.Group...)
		b = append(b, ':')
		b = AppendMode(b, e.Perm.Mode)
	}
	b = append(b, "\tproto="...)
	if e.WebHDFS {
		return append(b, "webhdfs"...)
	}
	return append(b, "rpc"...)
}

func appendPath(b []byte, p string) []byte {
	if p == "" {
		return append(b, "null"...)
	}
	return AppendEscaped(b, p)
}

// AppendMode appends a permission as Hadoop's FsPermission prints it:
// rwxr-xr-x, the last character t (or T without execute for others) when
// the sticky bit is set.
func AppendMode(b []byte, mode uint16) []byte {
	const rwx = "rwx"
	for i := 8; i >= 0; i-- {
		if mode&(1<<i) != 0 {
			b = append(b, rwx[(8-i)%3])
		} else {
			b = append(b, '-')
		}
	}
	if mode&0o1000 != 0 {
		if mode&0o001 != 0 {
			b[len(b)-1] = 't'
		} else {
			b[len(b)-1] = 'T'
		}
	}
	return b
}

// AppendEscaped appends s escaped as Java's StringEscapeUtils.escapeJava
// does: \" \\ \b \n \t \f \r, other characters below 32 and above 127 as
// \uXXXX (UTF-16 code units, so a character outside the BMP is two).
func AppendEscaped(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	u := func(b []byte, r rune) []byte {
		return append(b, '\\', 'u', hex[r>>12&0xF], hex[r>>8&0xF], hex[r>>4&0xF], hex[r&0xF])
	}
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, '\\', '"')
		case r == '\\':
			b = append(b, '\\', '\\')
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r < 32 || (r > 0x7f && r < 0x10000):
			b = u(b, r)
		case r >= 0x10000:
			r1, r2 := utf16.EncodeRune(r)
			b = u(u(b, r1), r2)
		default:
			b = append(b, byte(r))
		}
	}
	return b
}

// UGI prints a caller as Hadoop's UserGroupInformation.toString does:
// "joe (auth:SIMPLE)", or for a proxy "joe (auth:PROXY) via super
// (auth:KERBEROS)".
func UGI(user, auth, realUser, realAuth string) string {
	if realUser == "" {
		return user + " (auth:" + auth + ")"
	}
	return user + " (auth:PROXY) via " + realUser + " (auth:" + realAuth + ")"
}
