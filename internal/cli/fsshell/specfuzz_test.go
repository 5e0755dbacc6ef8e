package fsshell

import (
	"strings"
	"testing"
)

// FuzzParseACLSpec: any spec either fails or parses into entries whose
// text reads back to the same entries.
func FuzzParseACLSpec(f *testing.F) {
	for _, s := range []string{"user:bob:rwx", "default:group::r-x,mask::rw-", "user::", "other::---,user:a", ":::", "default:", ""} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, spec string, withPerm bool) {
		es, err := parseACLSpec(spec, withPerm)
		if err != nil || !withPerm {
			return
		}
		var parts []string
		for _, e := range es {
			parts = append(parts, e.String())
		}
		again, err := parseACLSpec(strings.Join(parts, ","), true)
		if err != nil || len(again) != len(es) {
			t.Fatalf("%q -> %q -> %v %v", spec, parts, again, err)
		}
		for i := range es {
			if again[i] != es[i] {
				t.Fatalf("%q: entry %d %+v became %+v", spec, i, es[i], again[i])
			}
		}
	})
}

// FuzzDecodeXAttrValue: a value shown in hex or base64 decodes back to the
// same bytes.
func FuzzDecodeXAttrValue(f *testing.F) {
	for _, s := range []string{`"quoted"`, "0x00ff", "0sAQI=", "plain", "0x", "0sZZ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := decodeXAttrValue(s)
		if err != nil {
			return
		}
		for _, enc := range []xattrEncoding{encHex, encBase64} {
			back, err := decodeXAttrValue(encodeXAttrValue(v, enc))
			if err != nil || string(back) != string(v) {
				t.Fatalf("%q: %x -> %v %x", s, v, err, back)
			}
		}
	})
}
