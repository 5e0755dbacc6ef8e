// Package xmltext escapes strings for the XML the offline viewers write
// (hdfs oev, hdfs oiv) so that any byte string survives a round trip, as
// Hadoop's XMLUtils mangles strings: a backslash, a control character or a
// character XML cannot carry is written \XXXX; with its code point in hex
// (at least four digits), and a byte that is not UTF-8 is written \xHH;.
// The XML metacharacters &, < and > become entities. Pure; safe for
// concurrent use.
package xmltext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape returns s as XML text (see the package doc).
func Escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x;`, s[i])
		case r == '\\' || r < 0x20 || r == 0x7f || (r >= 0xD800 && r <= 0xDFFF) || r == 0xFFFE || r == 0xFFFF:
			fmt.Fprintf(&b, `\%04x;`, r)
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Unescape reverses Escape on text whose XML entities are already
// decoded; a malformed escape is an error.
func Unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		end := strings.IndexByte(s[i:], ';')
		if end < 0 {
			return "", fmt.Errorf("unterminated escape in %q", s)
		}
		esc := s[i+1 : i+end]
		if strings.HasPrefix(esc, "x") {
			v, err := strconv.ParseUint(esc[1:], 16, 8)
			if err != nil || len(esc) != 3 {
				return "", fmt.Errorf("bad byte escape \\%s; in %q", esc, s)
			}
			b.WriteByte(byte(v))
		} else {
			v, err := strconv.ParseUint(esc, 16, 32)
			if err != nil || len(esc) < 4 || !utf8.ValidRune(rune(v)) {
				return "", fmt.Errorf("bad escape \\%s; in %q", esc, s)
			}
			b.WriteRune(rune(v))
		}
		i += end
	}
	return b.String(), nil
}
