// Package protocol holds the names the quorum journal's two ends share:
// the RPC protocols' Java names, the qjournal:// URI, the rules for a
// journal id, and the JournalNode's /getJournal HTTP query. Hadoop's names
// are kept, so that an operator finds what they know.
//
// Callers: internal/qjournal/client (the NameNode side) and
// internal/qjournal/server (the JournalNode). The package does no I/O and
// holds no state; everything is safe for concurrent use.
//
//	addrs, jid, err := protocol.ParseURI("qjournal://jn1:8485;jn2:8485;jn3:8485/ns1")
//	u := protocol.GetJournalURL("http://jn1:8480", jid, 101, storageInfo)
//	q, err := protocol.ParseGetJournal(r.URL.RawQuery) // on the JournalNode
//
// # /getJournal
//
//	GET /getJournal?jid=<journal id>&segmentTxId=<first txid>[&storageInfo=<si>] HTTP/1.1
//
//	HTTP/1.1 200 OK
//	Content-Length: <size>
//	X-Image-Edits-Name: edits_<a:019d>-<b:019d> | edits_inprogress_<a:019d>
//
//	<the segment file, byte for byte>
//
// storageInfo is "<layoutVersion>:<namespaceID>:<cTime>:<clusterID>"; when
// present it must equal the journal's. Refusals: 400 (a parameter missing,
// repeated or malformed), 403 (storageInfo differs: "This node has storage
// info '…' but the requesting node expected '…'"), 404 (no such journal or
// segment: "No edit log found starting at txid N"), 405 (not GET).
package protocol

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Java names of the RPC protocols. Part of the wire protocol.
const (
	// QJournalProtocol is what a NameNode calls on JournalNodes.
	QJournalProtocol = "org.apache.hadoop.hdfs.qjournal.protocol.QJournalProtocol"
	// InterQJournalProtocol is what JournalNodes call on each other (sync).
	InterQJournalProtocol = "org.apache.hadoop.hdfs.qjournal.protocol.InterQJournalProtocol"
)

// URIScheme is the scheme of dfs.namenode.shared.edits.dir for a quorum
// journal.
const URIScheme = "qjournal"

// DefaultRPCPort is a JournalNode's RPC port when a URI names none
// (dfs.journalnode.rpc-address's default, 8485).
const DefaultRPCPort = 8485

// Errors of the package.
var (
	// ErrBadURI: a qjournal:// URI that names no JournalNode or no journal.
	ErrBadURI = errors.New("qjournal: bad quorum journal URI")
	// ErrBadJournalID: a journal id that is empty, holds '/' or starts with '.'.
	ErrBadJournalID = errors.New("qjournal: bad journal id")
	// ErrBadQuery: a /getJournal query that is missing, repeats or
	// misspells a parameter.
	ErrBadQuery = errors.New("qjournal: bad /getJournal query")
)

// MaxJournalIDLen bounds a journal id (it names a directory).
const MaxJournalIDLen = 255

// CheckJournalID checks a journal id as Hadoop does (non-empty, no '/',
// not starting with '.'), and that it is a plain, bounded file name.
func CheckJournalID(jid string) error {
	bad := jid == "" || strings.Contains(jid, "/") || strings.HasPrefix(jid, ".") || len(jid) > MaxJournalIDLen
	for i := 0; i < len(jid) && !bad; i++ {
		if c := jid[i]; c < ' ' || c == 0x7f || c == '\\' {
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("%w: %s", ErrBadJournalID, clip(jid))
	}
	return nil
}

// ParseURI splits qjournal://h1:port;h2:port;.../jid into the JournalNodes'
// RPC addresses, in order (port 8485 when a host names none), and the
// journal id.
func ParseURI(uri string) (addrs []string, jid string, err error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(uri), URIScheme+"://")
	if !ok {
		return nil, "", fmt.Errorf("%w: %q does not start with %s://", ErrBadURI, uri, URIScheme)
	}
	auth, path, ok := strings.Cut(rest, "/")
	if !ok || path == "" {
		return nil, "", fmt.Errorf("%w: %q must identify the journal in its path (qjournal://host:port;.../journalId)", ErrBadURI, uri)
	}
	if err := CheckJournalID(path); err != nil {
		return nil, "", fmt.Errorf("%w: %q: %v", ErrBadURI, uri, err)
	}
	for _, h := range strings.Split(auth, ";") {
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, "", fmt.Errorf("%w: %q has an empty JournalNode address", ErrBadURI, uri)
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			host, port = h, strconv.Itoa(DefaultRPCPort)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 || host == "" {
			return nil, "", fmt.Errorf("%w: %q: bad JournalNode address %q", ErrBadURI, uri, h)
		}
		addrs = append(addrs, net.JoinHostPort(host, port))
	}
	return addrs, path, nil
}

// GetJournalPath is where a JournalNode serves segments on its web server.
const GetJournalPath = "/getJournal"

// Query parameters of /getJournal (Hadoop's GetJournalEditServlet).
const (
	ParamJournalID   = "jid"
	ParamSegmentTxID = "segmentTxId"
	ParamStorageInfo = "storageInfo"
)

// MaxQueryLen bounds a /getJournal query string.
const MaxQueryLen = 2048

// GetJournalQuery is a parsed /getJournal request.
type GetJournalQuery struct {
	JournalID   string
	SegmentTxID int64
	// StorageInfo is the caller's expectation, "" when it sent none.
	StorageInfo string
}

// GetJournalURL is the URL of segment first of journal jid on the
// JournalNode whose web server is base ("http://host:port"); storageInfo
// may be "".
func GetJournalURL(base, jid string, first int64, storageInfo string) string {
	q := ParamJournalID + "=" + url.QueryEscape(jid) + "&" + ParamSegmentTxID + "=" + strconv.FormatInt(first, 10)
	if storageInfo != "" {
		q += "&" + ParamStorageInfo + "=" + url.QueryEscape(storageInfo)
	}
	return strings.TrimSuffix(base, "/") + GetJournalPath + "?" + q
}

// ParseGetJournal parses and checks a /getJournal query string. Errors
// wrap ErrBadQuery and say what was wrong.
func ParseGetJournal(rawQuery string) (GetJournalQuery, error) {
	var q GetJournalQuery
	if len(rawQuery) > MaxQueryLen {
		return q, fmt.Errorf("%w: query of %d bytes exceeds %d", ErrBadQuery, len(rawQuery), MaxQueryLen)
	}
	vals, err := url.ParseQuery(rawQuery)
	if err != nil {
		return q, fmt.Errorf("%w: %v", ErrBadQuery, err)
	}
	for k, v := range vals {
		switch k {
		case ParamJournalID, ParamSegmentTxID, ParamStorageInfo:
			if len(v) != 1 {
				return q, fmt.Errorf("%w: parameter %s given %d times", ErrBadQuery, k, len(v))
			}
		default:
			return q, fmt.Errorf("%w: unknown parameter %q", ErrBadQuery, clip(k))
		}
	}
	jid, ok := vals[ParamJournalID]
	if !ok {
		return q, fmt.Errorf("%w: missing %s", ErrBadQuery, ParamJournalID)
	}
	if err := CheckJournalID(jid[0]); err != nil {
		return q, fmt.Errorf("%w: %v", ErrBadQuery, err)
	}
	q.JournalID = jid[0]
	seg, ok := vals[ParamSegmentTxID]
	if !ok {
		return q, fmt.Errorf("%w: missing %s", ErrBadQuery, ParamSegmentTxID)
	}
	n, err := strconv.ParseInt(seg[0], 10, 64)
	if err != nil || n < 1 {
		return q, fmt.Errorf("%w: %s=%q is not a positive txid", ErrBadQuery, ParamSegmentTxID, clip(seg[0]))
	}
	q.SegmentTxID = n
	if si, ok := vals[ParamStorageInfo]; ok {
		if si[0] == "" {
			return q, fmt.Errorf("%w: empty %s", ErrBadQuery, ParamStorageInfo)
		}
		q.StorageInfo = si[0]
	}
	return q, nil
}

// clip shortens outside input quoted in an error.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:max]) + "…"
}
