package imagetransfer

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

const (
	testSI  = "-1001:4711:0:CID-a1b2c3"
	testMD5 = "0123456789abcdef0123456789ABCDEF"
)

func md5Header(v ...string) http.Header {
	h := http.Header{}
	for _, s := range v {
		h.Add(HeaderMD5, s)
	}
	return h
}

func TestParseRequest(t *testing.T) {
	si := StorageInfo{LayoutVersion: -1001, NamespaceID: 4711, ClusterID: "CID-a1b2c3"}
	sum, _ := parseMD5(testMD5)
	ok := []struct {
		name   string
		method string
		query  string
		h      http.Header
		clen   int64
		want   Request
	}{
		{"image by txid", "GET", "getimage=1&txid=42", nil, -1,
			Request{Op: OpGetImage, TxID: 42}},
		{"image txid 0 (the formatted image)", "GET", "getimage=1&txid=0", nil, -1,
			Request{Op: OpGetImage}},
		{"latest image", "GET", "getimage=1&txid=latest", nil, -1,
			Request{Op: OpGetImage, Latest: true}},
		{"Hadoop's bootstrap query", "GET", "getimage=1&txid=42&storageInfo=" + testSI + "&bootstrapstandby=true", nil, -1,
			Request{Op: OpGetImage, TxID: 42, StorageInfo: &si, BootstrapStandby: true}},
		{"imageFile IMAGE, bootstrapstandby False", "GET", "getimage=1&txid=7&imageFile=IMAGE&bootstrapstandby=False", nil, -1,
			Request{Op: OpGetImage, TxID: 7}},
		{"getimage value is not looked at", "GET", "getimage=&txid=7", nil, -1,
			Request{Op: OpGetImage, TxID: 7}},
		{"unknown parameters are ignored", "GET", "getimage=1&txid=7&user.name=hdfs&user.name=x", nil, -1,
			Request{Op: OpGetImage, TxID: 7}},
		{"edits", "GET", "getedit=1&startTxId=1&endTxId=100&storageInfo=" + testSI, nil, -1,
			Request{Op: OpGetEdits, StartTxID: 1, EndTxID: 100, StorageInfo: &si}},
		{"one-transaction segment", "GET", "getedit=1&startTxId=5&endTxId=5", nil, -1,
			Request{Op: OpGetEdits, StartTxID: 5, EndTxID: 5}},
		{"put, chunked", "PUT", "txid=9&storageInfo=" + testSI + "&File-Length=1000&imageFile=IMAGE", md5Header(testMD5), -1,
			Request{Op: OpPutImage, TxID: 9, StorageInfo: &si, FileLength: 1000, MD5: sum, HasMD5: true}},
		{"put with Content-Length", "PUT", "txid=9&storageInfo=" + testSI + "&File-Length=1000", md5Header(testMD5), 1000,
			Request{Op: OpPutImage, TxID: 9, StorageInfo: &si, FileLength: 1000, MD5: sum, HasMD5: true}},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseRequest(c.method, c.query, c.h, c.clen)
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			if !sameRequest(got, c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}

	put := "txid=9&storageInfo=" + testSI + "&File-Length=1000"
	bad := []struct {
		name   string
		method string
		query  string
		h      http.Header
		clen   int64
		status int
		want   string // in the message
	}{
		{"POST", "POST", "getimage=1&txid=1", nil, -1, 405, "method POST not allowed"},
		{"neither get", "GET", "txid=1", nil, -1, 400, "exactly one of getimage and getedit"},
		{"both gets", "GET", "getimage=1&getedit=1&txid=1&startTxId=1&endTxId=2", nil, -1, 400, "exactly one of getimage and getedit"},
		{"alias map", "GET", "getaliasmap=1", nil, -1, 400, "alias map is not supported"},
		{"no txid", "GET", "getimage=1", nil, -1, 400, "getimage needs txid"},
		{"negative txid", "GET", "getimage=1&txid=-1", nil, -1, 400, `txid="-1" is not a decimal number`},
		{"plus sign", "GET", "getimage=1&txid=%2B5", nil, -1, 400, `txid="+5" is not a decimal number`},
		{"word txid", "GET", "getimage=1&txid=newest", nil, -1, 400, `txid="newest"`},
		{"txid out of range", "GET", "getimage=1&txid=9999999999999999999", nil, -1, 400, "txid=9999999999999999999 is out of range"},
		{"20 digits", "GET", "getimage=1&txid=00000000000000000001", nil, -1, 400, "is not a decimal number"},
		{"txid twice", "GET", "getimage=1&txid=1&txid=2", nil, -1, 400, "parameter txid given 2 times"},
		{"rollback image", "GET", "getimage=1&txid=1&imageFile=IMAGE_ROLLBACK", nil, -1, 400, "rollback images are not supported"},
		{"unknown image kind", "GET", "getimage=1&txid=1&imageFile=EDITS", nil, -1, 400, `imageFile="EDITS" is not an image kind`},
		{"bootstrapstandby yes", "GET", "getimage=1&txid=1&bootstrapstandby=yes", nil, -1, 400, `bootstrapstandby="yes" is neither true nor false`},
		{"edits without end", "GET", "getedit=1&startTxId=1", nil, -1, 400, "getedit needs startTxId and endTxId"},
		{"edits from 0", "GET", "getedit=1&startTxId=0&endTxId=3", nil, -1, 400, "startTxId=0 is below 1"},
		{"edits backwards", "GET", "getedit=1&startTxId=9&endTxId=3", nil, -1, 400, "endTxId 3 is below startTxId 9"},
		{"storage info three fields", "GET", "getimage=1&txid=1&storageInfo=-1001:4711:0", nil, -1, 400, "is not layoutVersion:namespaceID:cTime:clusterID"},
		{"storage info five fields", "GET", "getimage=1&txid=1&storageInfo=-1001:4711:0:CID:x", nil, -1, 400, "is not layoutVersion:namespaceID:cTime:clusterID"},
		{"storage info bad layout", "GET", "getimage=1&txid=1&storageInfo=x:4711:0:CID", nil, -1, 400, `layoutVersion "x"`},
		{"storage info namespace too big", "GET", "getimage=1&txid=1&storageInfo=-1:4294967296:0:CID", nil, -1, 400, "namespaceID"},
		{"storage info bad ctime", "GET", "getimage=1&txid=1&storageInfo=-1:1:t:CID", nil, -1, 400, `cTime "t"`},
		{"storage info empty cluster", "GET", "getimage=1&txid=1&storageInfo=-1:1:0:", nil, -1, 400, "clusterID must be 1 to 256 bytes"},
		{"storage info cluster with space", "GET", "getimage=1&txid=1&storageInfo=-1:1:0:a%20b", nil, -1, 400, "holds byte 0x20"},
		{"malformed escape", "GET", "getimage=1&txid=%zz", nil, -1, 400, "malformed query string"},
		{"long query", "GET", "getimage=1&txid=1&x=" + strings.Repeat("a", MaxQueryLen), nil, -1, 400, "the limit is 4096"},
		{"put without txid", "PUT", "storageInfo=" + testSI + "&File-Length=1", md5Header(testMD5), -1, 400, "PUT needs txid"},
		{"put latest", "PUT", "txid=latest&storageInfo=" + testSI + "&File-Length=1", md5Header(testMD5), -1, 400, `txid="latest" is not a decimal number`},
		{"put without storage info", "PUT", "txid=1&File-Length=1", md5Header(testMD5), -1, 400, "PUT needs storageInfo"},
		{"put without length", "PUT", "txid=1&storageInfo=" + testSI, md5Header(testMD5), -1, 400, "PUT needs File-Length"},
		{"put of nothing", "PUT", "txid=1&storageInfo=" + testSI + "&File-Length=0", md5Header(testMD5), -1, 400, "File-Length=0 is below 1"},
		{"put length mismatch", "PUT", put, md5Header(testMD5), 999, 400, "Content-Length 999 differs from File-Length 1000"},
		{"put without md5", "PUT", put, nil, -1, 400, "PUT needs the X-MD5-Digest header"},
		{"put md5 twice", "PUT", put, md5Header(testMD5, testMD5), -1, 400, "X-MD5-Digest header given 2 times"},
		{"put md5 short", "PUT", put, md5Header("abc"), -1, 400, `X-MD5-Digest "abc" is not 32 hex digits`},
		{"put md5 not hex", "PUT", put, md5Header(strings.Repeat("g", 32)), -1, 400, "is not 32 hex digits"},
		{"put with getimage", "PUT", "getimage=1&" + put, md5Header(testMD5), -1, 400, "getimage is a GET parameter"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseRequest(c.method, c.query, c.h, c.clen)
			var re *requestError
			if !errors.As(err, &re) || !errors.Is(err, ErrBadRequest) {
				t.Fatalf("err = %v, want a refusal matching ErrBadRequest", err)
			}
			if re.status != c.status || !strings.Contains(re.msg, c.want) {
				t.Fatalf("refusal %d %q, want %d containing %q", re.status, re.msg, c.status, c.want)
			}
		})
	}
}

func sameRequest(a, b Request) bool {
	if (a.StorageInfo == nil) != (b.StorageInfo == nil) || (a.StorageInfo != nil && *a.StorageInfo != *b.StorageInfo) {
		return false
	}
	a.StorageInfo, b.StorageInfo = nil, nil
	return a == b
}

// TestQueriesParse checks that what the client sends is what the server reads.
func TestQueriesParse(t *testing.T) {
	si := StorageInfo{LayoutVersion: -1001, NamespaceID: -5, CTime: 1764622225000, ClusterID: "CID-x"}
	got, err := ParseRequest("GET", imageQuery(Latest, nil, false), nil, -1)
	if err != nil || !sameRequest(got, Request{Op: OpGetImage, Latest: true}) {
		t.Fatalf("latest: %+v, %v", got, err)
	}
	got, err = ParseRequest("GET", imageQuery(12, &si, true), nil, -1)
	if err != nil || !sameRequest(got, Request{Op: OpGetImage, TxID: 12, StorageInfo: &si, BootstrapStandby: true}) {
		t.Fatalf("image: %+v, %v", got, err)
	}
	got, err = ParseRequest("GET", editsQuery(3, 9, &si), nil, -1)
	if err != nil || !sameRequest(got, Request{Op: OpGetEdits, StartTxID: 3, EndTxID: 9, StorageInfo: &si}) {
		t.Fatalf("edits: %+v, %v", got, err)
	}
	sum, _ := parseMD5(testMD5)
	got, err = ParseRequest("PUT", putQuery(12, si, 777), md5Header(testMD5), 777)
	if err != nil || !sameRequest(got, Request{Op: OpPutImage, TxID: 12, StorageInfo: &si, FileLength: 777, MD5: sum, HasMD5: true}) {
		t.Fatalf("put: %+v, %v", got, err)
	}
}

func TestStorageInfoString(t *testing.T) {
	si := StorageInfo{LayoutVersion: -1001, NamespaceID: 1190184012, CTime: 0, ClusterID: "CID-5b0fb6c4-bd0f-4c8e-8f5e-4fd1bd0e5f60"}
	const want = "-1001:1190184012:0:CID-5b0fb6c4-bd0f-4c8e-8f5e-4fd1bd0e5f60"
	if s := si.String(); s != want {
		t.Fatalf("String() = %q, want %q", s, want)
	}
	back, err := ParseStorageInfo(want)
	if err != nil || back != si {
		t.Fatalf("ParseStorageInfo = %+v, %v", back, err)
	}
	if _, err := ParseStorageInfo("1:2:3"); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("ParseStorageInfo(1:2:3) = %v, want ErrBadRequest", err)
	}
	other := si
	other.ClusterID, other.CTime = "CID-other", 5
	if d := strings.Join(si.differences(other), ","); d != "cTime,clusterID" {
		t.Fatalf("differences = %s", d)
	}
}

// FuzzParseRequest feeds the parser outside input: it must never panic, must
// allocate in proportion to what it was given, and a request it accepts must
// survive being sent again the way the client sends it.
func FuzzParseRequest(f *testing.F) {
	f.Add(uint8(0), "getimage=1&txid=42&storageInfo="+testSI+"&bootstrapstandby=true", "", int64(-1))
	f.Add(uint8(0), "getimage=1&txid=latest", "", int64(-1))
	f.Add(uint8(0), "getedit=1&startTxId=1&endTxId=100", "", int64(-1))
	f.Add(uint8(1), "txid=9&storageInfo="+testSI+"&File-Length=1000&imageFile=IMAGE", testMD5, int64(1000))
	f.Add(uint8(1), "txid=9&storageInfo="+testSI+"&File-Length=1000", testMD5, int64(-1))
	f.Add(uint8(2), "a=1", "", int64(0))
	f.Add(uint8(0), strings.Repeat("a&", 2000), "", int64(-1))
	f.Add(uint8(0), strings.Repeat("%41", 1300), "", int64(-1))
	f.Fuzz(func(t *testing.T, m uint8, query, md5 string, clen int64) {
		method := [...]string{"GET", "PUT", "POST", "DELETE"}[m%4]
		h := http.Header{}
		if md5 != "" {
			h.Set(HeaderMD5, md5)
		}
		var req Request
		var err error
		testtool.AllocBound(t, len(query)+len(md5), 256, 64<<10, func() {
			req, err = ParseRequest(method, query, h, clen)
		})
		if err != nil {
			var re *requestError
			if !errors.As(err, &re) || re.status < 400 || re.status > 499 || re.msg == "" {
				t.Fatalf("error %v is not a 4xx refusal with a text", err)
			}
			return
		}
		var again string
		switch req.Op {
		case OpGetImage:
			txid := req.TxID
			if req.Latest {
				txid = Latest
			}
			again = imageQuery(txid, req.StorageInfo, req.BootstrapStandby)
		case OpGetEdits:
			if req.EndTxID < req.StartTxID || req.StartTxID < 1 {
				t.Fatalf("accepted segment %d-%d", req.StartTxID, req.EndTxID)
			}
			again = editsQuery(req.StartTxID, req.EndTxID, req.StorageInfo)
		case OpPutImage:
			if req.StorageInfo == nil || !req.HasMD5 || req.FileLength < 1 {
				t.Fatalf("accepted an incomplete upload: %+v", req)
			}
			again = putQuery(req.TxID, *req.StorageInfo, req.FileLength)
		default:
			t.Fatalf("accepted with op %v", req.Op)
		}
		got, err := ParseRequest(method, again, h, clen)
		if err != nil || !sameRequest(got, req) {
			t.Fatalf("re-sent %q: %+v, %v; first parse %+v", again, got, err, req)
		}
	})
}
