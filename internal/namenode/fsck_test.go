package namenode

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// Percentages and averages print as Java's Float.toString prints them.
func TestJavaFloat(t *testing.T) {
	for _, c := range []struct {
		f    float32
		want string
	}{
		{0, "0.0"}, {100, "100.0"}, {50, "50.0"}, {2, "2.0"}, {1.5, "1.5"},
		{float32(100) / 3, "33.333332"}, {float32(200) / 3, "66.666664"},
		{0.0001, "1.0E-4"}, {1e7, "1.0E7"}, {12345678, "1.2345678E7"},
	} {
		if got := javaFloat(c.f); got != c.want {
			t.Errorf("javaFloat(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}

// The /fsck query is outside input: any query parses to options or a
// clear error, and a parsed path is absolute.
func FuzzFsckOptions(f *testing.F) {
	f.Add("ugi=u&path=%2F&files=1&blocks=1&locations=1")
	f.Add("ugi=u&path=/x&listcorruptfileblocks=1&startblockafter=500")
	f.Add("ugi=u&blockId=blk_1+blk_2_3+")
	f.Add("path=relative&startblockafter=-1")
	f.Fuzz(func(t *testing.T, q string) {
		r := httptest.NewRequest("GET", "/fsck?"+url.PathEscape(""), nil)
		r.URL.RawQuery = q
		o, err := parseFsckOptions(r)
		if err != nil {
			if !strings.Contains(err.Error(), "path") && !strings.Contains(err.Error(), "startblockafter") {
				t.Fatalf("error names no parameter: %v", err)
			}
			return
		}
		if !strings.HasPrefix(o.path, "/") || o.startAfter < 0 {
			t.Fatalf("accepted %+v from %q", o, q)
		}
	})
}
