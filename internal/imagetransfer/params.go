package imagetransfer

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Path is where roles mount the Server on their web server (Hadoop's
// ImageServlet path). Part of the protocol.
const Path = "/imagetransfer"

// Query parameters and headers of the exchange (Hadoop's names). Part of the
// protocol.
const (
	ParamGetImage         = "getimage"         // GET: fetch an image; value ignored ("1")
	ParamGetEdit          = "getedit"          // GET: fetch a finalized edit segment ("1")
	ParamGetAliasMap      = "getaliasmap"      // GET: Hadoop's provided-storage alias map; refused
	ParamTxID             = "txid"             // image txid, or "latest" (GET only)
	ParamStartTxID        = "startTxId"        // first txid of the segment
	ParamEndTxID          = "endTxId"          // last txid of the segment
	ParamStorageInfo      = "storageInfo"      // the caller's StorageInfo; required on PUT
	ParamImageFile        = "imageFile"        // image kind: only "IMAGE" is served and stored
	ParamBootstrapStandby = "bootstrapstandby" // GET image: "true" selects the bootstrap throttle
	ParamFileLength       = "File-Length"      // PUT: the image's size in bytes

	LatestTxID      = "latest" // value of txid asking for the newest image
	ImageFileImage  = "IMAGE"  // value of imageFile for a regular image
	imageFileRollbk = "IMAGE_ROLLBACK"

	HeaderMD5                = "X-MD5-Digest"       // 32 lowercase hex digits of the image's MD5
	HeaderFileName           = "X-Image-Edits-Name" // file name of what a GET serves
	HeaderContentDisposition = "Content-Disposition"
	HeaderTransferEncoding   = "Content-Transfer-Encoding" // "binary" on PUT
	contentTypeBinary        = "application/octet-stream"
)

// Latest, given as the txid to Client.DownloadImage, asks for the newest
// image (txid=latest).
const Latest int64 = -1

// MaxQueryLen bounds a request's query string: the longest legal one is
// under 400 bytes.
const MaxQueryLen = 4096

// Op is what a request asks for.
type Op int

// Operations of the servlet.
const (
	OpGetImage Op = iota + 1 // GET ?getimage=1&txid=N|latest
	OpGetEdits               // GET ?getedit=1&startTxId=A&endTxId=B
	OpPutImage               // PUT ?txid=N&storageInfo=…&File-Length=L&imageFile=IMAGE
)

func (o Op) String() string {
	switch o {
	case OpGetImage:
		return "get image"
	case OpGetEdits:
		return "get edits"
	case OpPutImage:
		return "put image"
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// Request is a parsed, validated request.
type Request struct {
	Op Op
	// TxID is the image's txid (OpGetImage unless Latest, OpPutImage).
	TxID int64
	// Latest asks for the newest image (OpGetImage, txid=latest).
	Latest bool
	// StartTxID and EndTxID bound the segment (OpGetEdits).
	StartTxID, EndTxID int64
	// StorageInfo is the caller's, nil when the parameter was absent
	// (allowed on GET only).
	StorageInfo *StorageInfo
	// BootstrapStandby marks a download by hdfs namenode -bootstrapStandby.
	BootstrapStandby bool
	// FileLength is the declared image size (OpPutImage).
	FileLength int64
	// MD5 is the X-MD5-Digest header (required on OpPutImage).
	MD5    [16]byte
	HasMD5 bool
}

// requestError is a refusal of a request: the status and the text sent.
type requestError struct {
	status int
	msg    string
	err    error // the sentinel it matches
	cause  error // what it was made from, if anything
}

func (e *requestError) Error() string { return e.msg }

func (e *requestError) Unwrap() []error {
	if e.cause != nil {
		return []error{e.err, e.cause}
	}
	return []error{e.err}
}

func badRequest(format string, args ...any) *requestError {
	return &requestError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...), err: ErrBadRequest}
}

// illegal prefixes the parameter errors with Hadoop's own words for them.
const illegal = "Illegal parameters to TransferFsImage: "

// ParseRequest validates a request's method, query string, headers and
// declared body length (-1 when unknown, as with chunked encoding) and
// returns what it asks for. It does no I/O, and allocates in proportion to
// the query and headers given. Unknown parameters are ignored, as Hadoop's
// servlet ignores them; every known one is checked, and given twice is an
// error. The error is a refusal whose text names what was wrong; it matches
// ErrBadRequest.
func ParseRequest(method, rawQuery string, h http.Header, contentLength int64) (Request, error) {
	var r Request
	if method != http.MethodGet && method != http.MethodPut {
		return r, &requestError{status: http.StatusMethodNotAllowed, err: ErrBadRequest,
			msg: fmt.Sprintf("method %s not allowed: the image servlet answers GET and PUT", clip(method))}
	}
	if len(rawQuery) > MaxQueryLen {
		return r, badRequest(illegal+"query string of %d bytes, the limit is %d", len(rawQuery), MaxQueryLen)
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return r, badRequest(illegal+"malformed query string: %v", err)
	}
	for k, v := range q {
		if len(v) > 1 && known(k) {
			return r, badRequest(illegal+"parameter %s given %d times", k, len(v))
		}
	}
	one := func(k string) (string, bool) {
		v, ok := q[k]
		if !ok {
			return "", false
		}
		return v[0], true
	}
	if v, ok := one(ParamStorageInfo); ok {
		si, why := parseStorageInfo(v)
		if why != "" {
			return r, badRequest(illegal+"%s", why)
		}
		r.StorageInfo = &si
	}
	if v, ok := one(ParamImageFile); ok {
		switch v {
		case ImageFileImage:
		case imageFileRollbk:
			return r, badRequest(illegal+"%s=%s: rollback images are not supported", ParamImageFile, v)
		default:
			return r, badRequest(illegal+"%s=%q is not an image kind (want %s)", ParamImageFile, clip(v), ImageFileImage)
		}
	}
	if method == http.MethodPut {
		return r, parsePut(&r, q, one, h, contentLength)
	}

	_, img := q[ParamGetImage]
	_, edit := q[ParamGetEdit]
	_, alias := q[ParamGetAliasMap]
	switch {
	case img && !edit && !alias:
		r.Op = OpGetImage
		v, ok := one(ParamTxID)
		if !ok {
			return r, badRequest(illegal+"%s needs %s (a transaction id or %q)", ParamGetImage, ParamTxID, LatestTxID)
		}
		if v == LatestTxID {
			r.Latest = true
		} else if r.TxID, err = parseTxID(ParamTxID, v, 0); err != nil {
			return r, err
		}
		if v, ok := one(ParamBootstrapStandby); ok {
			switch strings.ToLower(v) {
			case "true":
				r.BootstrapStandby = true
			case "false":
			default:
				return r, badRequest(illegal+"%s=%q is neither true nor false", ParamBootstrapStandby, clip(v))
			}
		}
	case edit && !img && !alias:
		r.Op = OpGetEdits
		a, ok1 := one(ParamStartTxID)
		b, ok2 := one(ParamEndTxID)
		if !ok1 || !ok2 {
			return r, badRequest(illegal+"%s needs %s and %s", ParamGetEdit, ParamStartTxID, ParamEndTxID)
		}
		if r.StartTxID, err = parseTxID(ParamStartTxID, a, 1); err != nil {
			return r, err
		}
		if r.EndTxID, err = parseTxID(ParamEndTxID, b, 1); err != nil {
			return r, err
		}
		if r.EndTxID < r.StartTxID {
			return r, badRequest(illegal+"%s %d is below %s %d", ParamEndTxID, r.EndTxID, ParamStartTxID, r.StartTxID)
		}
	case alias && !img && !edit:
		return r, badRequest(illegal+"%s: the provided-storage alias map is not supported", ParamGetAliasMap)
	default:
		return r, badRequest(illegal+"a GET needs exactly one of %s and %s", ParamGetImage, ParamGetEdit)
	}
	return r, nil
}

func parsePut(r *Request, q url.Values, one func(string) (string, bool), h http.Header, contentLength int64) error {
	r.Op = OpPutImage
	for _, k := range []string{ParamGetImage, ParamGetEdit, ParamGetAliasMap} {
		if _, ok := q[k]; ok {
			return badRequest(illegal+"%s is a GET parameter; a PUT uploads an image", k)
		}
	}
	v, ok := one(ParamTxID)
	if !ok {
		return badRequest(illegal+"PUT needs %s", ParamTxID)
	}
	var err error
	if r.TxID, err = parseTxID(ParamTxID, v, 0); err != nil {
		return err
	}
	if r.StorageInfo == nil {
		return badRequest(illegal+"PUT needs %s", ParamStorageInfo)
	}
	v, ok = one(ParamFileLength)
	if !ok {
		return badRequest(illegal+"PUT needs %s", ParamFileLength)
	}
	if r.FileLength, err = parseTxID(ParamFileLength, v, 1); err != nil {
		return err
	}
	if contentLength >= 0 && contentLength != r.FileLength {
		return badRequest(illegal+"Content-Length %d differs from %s %d", contentLength, ParamFileLength, r.FileLength)
	}
	vals := h.Values(HeaderMD5)
	switch len(vals) {
	case 0:
		return badRequest(illegal+"PUT needs the %s header", HeaderMD5)
	case 1:
	default:
		return badRequest(illegal+"%s header given %d times", HeaderMD5, len(vals))
	}
	sum, err := parseMD5(vals[0])
	if err != nil {
		return badRequest(illegal+"%v", err)
	}
	r.MD5, r.HasMD5 = sum, true
	return nil
}

// known reports whether k is a parameter this package reads.
func known(k string) bool {
	switch k {
	case ParamGetImage, ParamGetEdit, ParamGetAliasMap, ParamTxID, ParamStartTxID, ParamEndTxID,
		ParamStorageInfo, ParamImageFile, ParamBootstrapStandby, ParamFileLength:
		return true
	}
	return false
}

// parseTxID parses a decimal, non-negative number of at most 19 digits
// that is at least min. name is the parameter, for the error.
func parseTxID(name, v string, min int64) (int64, error) {
	if v == "" || len(v) > 19 {
		return 0, badRequest(illegal+"%s=%q is not a decimal number", name, clip(v))
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, badRequest(illegal+"%s=%q is not a decimal number", name, clip(v))
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, badRequest(illegal+"%s=%s is out of range", name, v)
	}
	if n < min {
		return 0, badRequest(illegal+"%s=%d is below %d", name, n, min)
	}
	return n, nil
}

// parseMD5 parses an X-MD5-Digest value: 32 hex digits.
func parseMD5(v string) ([16]byte, error) {
	var sum [16]byte
	if len(v) != 32 {
		return sum, fmt.Errorf("%s %q is not 32 hex digits", HeaderMD5, clip(v))
	}
	if _, err := hex.Decode(sum[:], []byte(v)); err != nil {
		return sum, fmt.Errorf("%s %q is not 32 hex digits", HeaderMD5, clip(v))
	}
	return sum, nil
}

// imageQuery is the query of a GET of image txid (txid < 0: the newest).
func imageQuery(txid int64, si *StorageInfo, bootstrap bool) string {
	q := url.Values{ParamGetImage: {"1"}}
	if txid < 0 {
		q.Set(ParamTxID, LatestTxID)
	} else {
		q.Set(ParamTxID, strconv.FormatInt(txid, 10))
	}
	if si != nil {
		q.Set(ParamStorageInfo, si.String())
	}
	if bootstrap {
		q.Set(ParamBootstrapStandby, "true")
	}
	return q.Encode()
}

// editsQuery is the query of a GET of segment first..last.
func editsQuery(first, last int64, si *StorageInfo) string {
	q := url.Values{
		ParamGetEdit:   {"1"},
		ParamStartTxID: {strconv.FormatInt(first, 10)},
		ParamEndTxID:   {strconv.FormatInt(last, 10)},
	}
	if si != nil {
		q.Set(ParamStorageInfo, si.String())
	}
	return q.Encode()
}

// putQuery is the query of a PUT of image txid of size bytes.
func putQuery(txid int64, si StorageInfo, size int64) string {
	q := url.Values{
		ParamTxID:        {strconv.FormatInt(txid, 10)},
		ParamStorageInfo: {si.String()},
		ParamFileLength:  {strconv.FormatInt(size, 10)},
		ParamImageFile:   {ImageFileImage},
	}
	return q.Encode()
}
