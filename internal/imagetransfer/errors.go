package imagetransfer

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/fsimage"
)

// Errors of this package. The client returns them wrapped with the URL and
// detail; a refusal from the server arrives as an *HTTPError that matches
// (errors.Is) the sentinel of its status code.
var (
	// ErrBadRequest: a parameter, header or body length is missing or invalid
	// (400). The text names what was wrong.
	ErrBadRequest = errors.New("imagetransfer: bad request")
	// ErrNotFound: the server holds no such image or finalized segment (404).
	ErrNotFound = errors.New("imagetransfer: no such file")
	// ErrStorageMismatch: the storage info (layout version, namespace id,
	// cTime, cluster id) of the two nodes differ (403): they are not of the
	// same namespace.
	ErrStorageMismatch = errors.New("imagetransfer: storage info mismatch")
	// ErrOlderImage: the uploaded image is not newer than the newest image the
	// server already has (409); for a checkpointer this means its work is
	// already done.
	ErrOlderImage = errors.New("imagetransfer: server already has an image at least as new")
	// ErrConflict: another upload of this txid or a newer one is in progress
	// on the server, or the server is saving that image itself (409).
	ErrConflict = errors.New("imagetransfer: another checkpoint upload is in progress")
	// ErrNotAccepting: the server is not in a state that accepts uploads,
	// such as a standby NameNode (417). Try another NameNode.
	ErrNotAccepting = errors.New("imagetransfer: server does not accept image uploads in its current state")
	// ErrTooLarge: the declared upload is larger than the server accepts (413).
	ErrTooLarge = errors.New("imagetransfer: image too large")
	// ErrDigestMismatch: the bytes received do not hash to the MD5 the sender
	// declared; nothing was stored.
	ErrDigestMismatch = errors.New("imagetransfer: md5 digest mismatch")
	// ErrLength: a body was shorter or longer than its declared length;
	// nothing was stored.
	ErrLength = errors.New("imagetransfer: body length differs from the declared length")
	// ErrBadResponse: the server's answer lacks a header this package needs
	// or carries an invalid one.
	ErrBadResponse = errors.New("imagetransfer: bad response")
	// ErrBadSegment: a downloaded edit segment does not hold exactly the
	// records first..last; it was not kept.
	ErrBadSegment = errors.New("imagetransfer: downloaded segment is not the one asked for")
	// ErrTimeout: no byte moved for Config.Timeout (dfs.image.transfer.timeout).
	ErrTimeout = errors.New("imagetransfer: no progress within " + "dfs.image.transfer.timeout")
	// ErrHTTPSNotSupported: an https:// address was given; image transfer
	// over TLS is not implemented.
	ErrHTTPSNotSupported = errors.New("imagetransfer: https is not supported")
	// ErrBadURL: the base address is not an http://host:port URL.
	ErrBadURL = errors.New("imagetransfer: bad server address")
	// ErrServer: the server failed for a reason of its own (5xx, or a status
	// this package does not know).
	ErrServer = errors.New("imagetransfer: server error")
)

// inProgressPhrase is common to Hadoop's two texts for an upload refused
// because another is in progress; the client tells ErrConflict from
// ErrOlderImage by it.
const inProgressPhrase = "in the process of uploading"

// HTTPError is a non-200 answer of the image servlet.
type HTTPError struct {
	Method  string
	URL     string // without the query's storage info
	Status  int
	Message string // the server's text (the start of the body)
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("imagetransfer: %s %s: %d %s: %s", e.Method, e.URL, e.Status, http.StatusText(e.Status), e.Message)
}

// Unwrap returns the sentinels the status code (and, where Hadoop uses one
// code for several refusals, the text) stands for.
func (e *HTTPError) Unwrap() []error {
	switch e.Status {
	case http.StatusBadRequest:
		if strings.Contains(e.Message, fsimage.ErrMD5Mismatch.Error()) {
			return []error{ErrBadRequest, ErrDigestMismatch}
		}
		return []error{ErrBadRequest}
	case http.StatusNotFound:
		return []error{ErrNotFound}
	case http.StatusForbidden:
		return []error{ErrStorageMismatch}
	case http.StatusConflict:
		// Hadoop answers 409 both for an image that is already there and for
		// an upload already in progress; only the text tells them apart.
		if strings.Contains(e.Message, inProgressPhrase) {
			return []error{ErrConflict}
		}
		return []error{ErrOlderImage}
	case http.StatusExpectationFailed:
		return []error{ErrNotAccepting}
	case http.StatusRequestEntityTooLarge:
		return []error{ErrTooLarge}
	case http.StatusRequestTimeout:
		return []error{ErrTimeout}
	}
	return []error{ErrServer}
}
