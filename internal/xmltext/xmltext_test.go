package xmltext

import (
	"strings"
	"testing"
)

// entities decodes what an XML parser would before Unescape sees the text.
var entities = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">")

func TestRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "a&b<c>d", `back\slash`, "\x00\x01\t\n\r", "\xff\xfe", "é✓", "\uFFFE", "\x7f"} {
		got, err := Unescape(entities.Replace(Escape(s)))
		if err != nil || got != s {
			t.Errorf("%q -> %q -> %q, %v", s, Escape(s), got, err)
		}
	}
}

// Unescape takes any text: an error, or a string that escapes and
// unescapes to itself.
func FuzzUnescape(f *testing.F) {
	f.Add(`a\005c;b\xff;`)
	f.Add(`\zz;`)
	f.Fuzz(func(t *testing.T, s string) {
		u, err := Unescape(s)
		if err != nil {
			return
		}
		back, err := Unescape(entities.Replace(Escape(u)))
		if err != nil || back != u {
			t.Fatalf("%q: %q does not survive (%q, %v)", s, u, back, err)
		}
	})
}
