package protocol

import (
	"errors"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

func TestParseURI(t *testing.T) {
	for _, tc := range []struct {
		uri   string
		addrs string
		jid   string
		bad   bool
	}{
		{uri: "qjournal://jn1:8485;jn2:8486;jn3/ns1", addrs: "jn1:8485,jn2:8486,jn3:8485", jid: "ns1"},
		{uri: "qjournal://127.0.0.1:1/j", addrs: "127.0.0.1:1", jid: "j"},
		{uri: "qjournal://[::1]:8485;127.0.0.2:9/mycluster", addrs: "[::1]:8485,127.0.0.2:9", jid: "mycluster"},
		{uri: "file:///x", bad: true},
		{uri: "qjournal://jn1:8485", bad: true},
		{uri: "qjournal://jn1:8485/", bad: true},
		{uri: "qjournal://jn1:8485/.hidden", bad: true},
		{uri: "qjournal://jn1:8485/a/b", bad: true},
		{uri: "qjournal://jn1:8485;;jn2/a", bad: true},
		{uri: "qjournal://jn1:99999/a", bad: true},
	} {
		addrs, jid, err := ParseURI(tc.uri)
		if tc.bad {
			if !errors.Is(err, ErrBadURI) {
				t.Errorf("%s: err %v, want ErrBadURI", tc.uri, err)
			}
			continue
		}
		if err != nil || strings.Join(addrs, ",") != tc.addrs || jid != tc.jid {
			t.Errorf("%s: %v %q %v, want %s %q", tc.uri, addrs, jid, err, tc.addrs, tc.jid)
		}
	}
}

func TestGetJournalQuery(t *testing.T) {
	u := GetJournalURL("http://jn1:8480/", "ns 1", 101, "-1002:42:0:CID-x")
	if want := "http://jn1:8480/getJournal?jid=ns+1&segmentTxId=101&storageInfo=-1002%3A42%3A0%3ACID-x"; u != want {
		t.Fatalf("URL %s, want %s", u, want)
	}
	_, raw, _ := strings.Cut(u, "?")
	q, err := ParseGetJournal(raw)
	if err != nil || q != (GetJournalQuery{JournalID: "ns 1", SegmentTxID: 101, StorageInfo: "-1002:42:0:CID-x"}) {
		t.Fatalf("parsed %+v, %v", q, err)
	}
	for _, bad := range []string{
		"", "jid=ns1", "segmentTxId=5", "jid=ns1&segmentTxId=0", "jid=ns1&segmentTxId=x",
		"jid=ns1&segmentTxId=5&segmentTxId=6", "jid=.x&segmentTxId=5", "jid=a%2Fb&segmentTxId=5",
		"jid=ns1&segmentTxId=5&other=1", "jid=ns1&segmentTxId=5&storageInfo=", "jid=%zz&segmentTxId=1",
		"jid=ns1&segmentTxId=5&x=" + strings.Repeat("a", MaxQueryLen),
	} {
		if _, err := ParseGetJournal(bad); !errors.Is(err, ErrBadQuery) {
			t.Errorf("%q: err %v, want ErrBadQuery", bad, err)
		}
	}
}

// FuzzParseGetJournal: any query either parses into a valid request that
// round-trips through GetJournalURL, or is refused with ErrBadQuery;
// parsing allocates in proportion to the query.
func FuzzParseGetJournal(f *testing.F) {
	f.Add("jid=ns1&segmentTxId=101&storageInfo=-1002%3A42%3A0%3ACID-x")
	f.Add("jid=ns1&segmentTxId=1")
	f.Add("jid=%2e&segmentTxId=1")
	f.Add("jid=a;b&segmentTxId=9223372036854775807")
	f.Fuzz(func(t *testing.T, raw string) {
		var q GetJournalQuery
		var err error
		testtool.AllocBound(t, len(raw), 16, 64<<10, func() { q, err = ParseGetJournal(raw) })
		if err != nil {
			if !errors.Is(err, ErrBadQuery) {
				t.Fatalf("error %v does not wrap ErrBadQuery", err)
			}
			return
		}
		if CheckJournalID(q.JournalID) != nil || q.SegmentTxID < 1 {
			t.Fatalf("accepted an invalid query %+v", q)
		}
		_, again, _ := strings.Cut(GetJournalURL("http://h:1", q.JournalID, q.SegmentTxID, q.StorageInfo), "?")
		q2, err := ParseGetJournal(again)
		if err != nil || q2 != q {
			t.Fatalf("round trip of %+v gave %+v, %v", q, q2, err)
		}
	})
}
