package webhdfs

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// FileStatus is one entry of GETFILESTATUS and LISTSTATUS, with Hadoop's
// JSON field names. Permission is octal text ("755", "1777").
type FileStatus struct {
	AccessTime       int64  `json:"accessTime"`
	BlockSize        int64  `json:"blockSize"`
	ChildrenNum      int64  `json:"childrenNum"`
	FileID           uint64 `json:"fileId"`
	Group            string `json:"group"`
	Length           int64  `json:"length"`
	ModificationTime int64  `json:"modificationTime"`
	Owner            string `json:"owner"`
	PathSuffix       string `json:"pathSuffix"`
	Permission       string `json:"permission"`
	Replication      int64  `json:"replication"`
	StoragePolicy    int64  `json:"storagePolicy"`
	Type             string `json:"type"` // FILE, DIRECTORY or SYMLINK
}

// Mode is Permission as a number (0 when it is not octal).
func (s FileStatus) Mode() uint32 {
	n, _ := strconv.ParseUint(s.Permission, 8, 32)
	return uint32(n)
}

// Perm is the JSON text of a permission: octal without leading zeros.
func Perm(mode uint32) string { return strconv.FormatUint(uint64(mode&0o1777), 8) }

// FileStatusBody is the GETFILESTATUS answer.
type FileStatusBody struct {
	FileStatus FileStatus `json:"FileStatus"`
}

// FileStatuses is the LISTSTATUS answer's inner object.
type FileStatuses struct {
	FileStatus []FileStatus `json:"FileStatus"`
}

// ListStatusBody is the LISTSTATUS answer.
type ListStatusBody struct {
	FileStatuses FileStatuses `json:"FileStatuses"`
}

// DirectoryListingBody is the LISTSTATUS_BATCH answer.
type DirectoryListingBody struct {
	DirectoryListing struct {
		PartialListing struct {
			FileStatuses FileStatuses `json:"FileStatuses"`
		} `json:"partialListing"`
		RemainingEntries int64 `json:"remainingEntries"`
	} `json:"DirectoryListing"`
}

// ContentSummary is the GETCONTENTSUMMARY answer's inner object.
type ContentSummary struct {
	DirectoryCount int64          `json:"directoryCount"`
	ECPolicy       string         `json:"ecPolicy"`
	FileCount      int64          `json:"fileCount"`
	Length         int64          `json:"length"`
	Quota          int64          `json:"quota"`
	SpaceConsumed  int64          `json:"spaceConsumed"`
	SpaceQuota     int64          `json:"spaceQuota"`
	TypeQuota      map[string]any `json:"typeQuota"`
}

// QuotaUsage is the GETQUOTAUSAGE answer's inner object.
type QuotaUsage struct {
	FileAndDirectoryCount int64          `json:"fileAndDirectoryCount"`
	Quota                 int64          `json:"quota"`
	SpaceConsumed         int64          `json:"spaceConsumed"`
	SpaceQuota            int64          `json:"spaceQuota"`
	TypeQuota             map[string]any `json:"typeQuota"`
}

// FileChecksum is the GETFILECHECKSUM answer's inner object: Bytes is the
// checksum's serialized form in hex.
type FileChecksum struct {
	Algorithm string `json:"algorithm"`
	Bytes     string `json:"bytes"`
	Length    int    `json:"length"`
}

// ServerDefaults is the GETSERVERDEFAULTS answer's inner object.
type ServerDefaults struct {
	BlockSize              int64  `json:"blockSize"`
	BytesPerChecksum       int64  `json:"bytesPerChecksum"`
	WritePacketSize        int64  `json:"writePacketSize"`
	Replication            int64  `json:"replication"`
	FileBufferSize         int64  `json:"fileBufferSize"`
	EncryptDataTransfer    bool   `json:"encryptDataTransfer"`
	TrashInterval          int64  `json:"trashInterval"`
	ChecksumType           string `json:"checksumType"`
	KeyProviderURI         string `json:"keyProviderUri"`
	DefaultStoragePolicyID int64  `json:"defaultStoragePolicyId"`
}

// RemoteException is the error body's inner object.
type RemoteException struct {
	Exception     string `json:"exception"`
	JavaClassName string `json:"javaClassName"`
	Message       string `json:"message"`
}

// ErrorBody is the body of every error answer.
type ErrorBody struct {
	RemoteException RemoteException `json:"RemoteException"`
}

// StatusOf is the HTTP status Hadoop's WebHDFS answers an exception of
// class with.
func StatusOf(class string) int {
	switch class {
	case remoteerr.ClassFileNotFound:
		return http.StatusNotFound
	case "java.lang.SecurityException":
		return http.StatusUnauthorized
	case remoteerr.ClassIllegalArgument, remoteerr.ClassHadoopIllegalArg, remoteerr.ClassUnsupported,
		"java.lang.NumberFormatException":
		return http.StatusBadRequest
	case remoteerr.ClassIllegalState, remoteerr.ClassAssertion, "java.lang.NullPointerException":
		return http.StatusInternalServerError
	}
	// Every other class the servers raise is an IOException.
	return http.StatusForbidden
}

// ErrorOf is the error body of err: its class and message as
// remoteerr.ClassOf finds them.
func ErrorOf(err error) ErrorBody {
	class, msg := remoteerr.ClassOf(err)
	short := class
	if i := strings.LastIndexAny(short, ".$"); i >= 0 {
		short = short[i+1:] // Java's simple name: InvalidToken for SecretManager$InvalidToken
	}
	return ErrorBody{RemoteException{Exception: short, JavaClassName: class, Message: msg}}
}

// WriteError answers err as a RemoteException with its status.
func WriteError(w http.ResponseWriter, err error) {
	body := ErrorOf(err)
	WriteJSON(w, StatusOf(body.RemoteException.JavaClassName), body)
}

// marshal is v as JSON followed by a newline, with <, > and & written as
// themselves (as Hadoop's answers have them), not escaped.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// XAttrNamesText is names as the JSON array LISTXATTRS's answer holds in a
// string.
func XAttrNamesText(names []string) string {
	if names == nil {
		names = []string{}
	}
	b, err := marshal(names)
	if err != nil {
		return "[]"
	}
	return strings.TrimSuffix(string(b), "\n")
}

// WriteJSON answers v as JSON with code.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	b, err := marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"RemoteException":{"exception":"IOException","javaClassName":"java.io.IOException","message":"webhdfs: cannot encode the answer"}}`+"\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	w.Write(b)
}

// Boolean answers {"boolean":v}.
func Boolean(w http.ResponseWriter, v bool) {
	WriteJSON(w, http.StatusOK, map[string]bool{"boolean": v})
}

// Empty answers 200 with no body (SETOWNER, SETPERMISSION, SETTIMES,
// CONCAT, APPEND).
func Empty(w http.ResponseWriter) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

// DecodeError reads an error answer's body: the RemoteException as a Go
// error (remoteerr.FromRemote, so errors.Is finds fs.ErrNotExist and the
// like), or a plain error naming the status when the body is not one.
func DecodeError(status int, body []byte) error {
	var e ErrorBody
	if json.Unmarshal(body, &e) == nil && e.RemoteException.JavaClassName != "" {
		return remoteerr.FromRemote(e.RemoteException.JavaClassName, e.RemoteException.Message)
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	return errors.New("webhdfs: HTTP " + strconv.Itoa(status) + " " + http.StatusText(status) + ": " + text)
}

// StoragePolicy is a BlockStoragePolicy in WebHDFS's JSON form.
type StoragePolicy struct {
	ID                   int      `json:"id"`
	Name                 string   `json:"name"`
	StorageTypes         []string `json:"storageTypes"`
	CreationFallbacks    []string `json:"creationFallbacks"`
	ReplicationFallbacks []string `json:"replicationFallbacks"`
	CopyOnCreateFile     bool     `json:"copyOnCreateFile"`
}

// StoragePolicyBody is GETSTORAGEPOLICY's answer.
type StoragePolicyBody struct {
	BlockStoragePolicy StoragePolicy `json:"BlockStoragePolicy"`
}

// StoragePoliciesBody is GETALLSTORAGEPOLICY's answer.
type StoragePoliciesBody struct {
	BlockStoragePolicies struct {
		BlockStoragePolicy []StoragePolicy `json:"BlockStoragePolicy"`
	} `json:"BlockStoragePolicies"`
}
