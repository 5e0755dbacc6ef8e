package conf

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxFileSize is the largest configuration file Load reads. Real site files
// are a few kilobytes; the cap bounds memory on hostile input.
const MaxFileSize = 16 << 20

// maxElementDepth bounds element nesting in a configuration file.
const maxElementDepth = 64

// xincludeNS is the XInclude namespace URI.
const xincludeNS = "http://www.w3.org/2001/XInclude"

// property is one <property> of a configuration file.
type property struct {
	name  string
	value string
	final bool
	line  int
}

// parseXML reads one configuration file from r. source names the file in
// errors and warnings. It returns the properties in file order; properties
// without a name or without a value are skipped with a warning, as Hadoop
// does.
func parseXML(r io.Reader, source string) ([]property, []string, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("conf: read %s: %w", source, err)
	}
	if len(data) > MaxFileSize {
		return nil, nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, source, MaxFileSize)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	d.CharsetReader = charsetReader

	var (
		props    []property
		warnings []string
		depth    int
		sawRoot  bool
		cur      *property
		hasValue bool
		field    string
		text     strings.Builder
	)
	fail := func(format string, args ...any) error {
		line, _ := d.InputPos()
		return fmt.Errorf("%w: %s:%d: %s", ErrMalformed, source, line, fmt.Sprintf(format, args...))
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, nil, fmt.Errorf("%w: %s:%d: %s", ErrMalformed, source, se.Line, se.Msg)
			}
			return nil, nil, fmt.Errorf("%w: %s: %v", ErrMalformed, source, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local == "include" && (t.Name.Space == xincludeNS || t.Name.Space == "xi") {
				line, _ := d.InputPos()
				return nil, nil, fmt.Errorf("%w: %s:%d", ErrInclude, source, line)
			}
			depth++
			if depth > maxElementDepth {
				return nil, nil, fail("elements nested deeper than %d", maxElementDepth)
			}
			switch depth {
			case 1:
				if sawRoot {
					return nil, nil, fail("more than one top-level element")
				}
				sawRoot = true
				if t.Name.Local != "configuration" {
					return nil, nil, fail("top-level element is <%s>, want <configuration>", t.Name.Local)
				}
			case 2:
				if t.Name.Local != "property" {
					line, _ := d.InputPos()
					warnings = append(warnings, fmt.Sprintf("%s:%d: ignoring element <%s> (not <property>)", source, line, t.Name.Local))
					continue
				}
				line, _ := d.InputPos()
				cur = &property{line: line}
				hasValue = false
				// Hadoop also accepts name/value/final as attributes.
				for _, a := range t.Attr {
					switch a.Name.Local {
					case "name":
						cur.name = strings.TrimSpace(a.Value)
					case "value":
						cur.value = a.Value
						hasValue = true
					case "final":
						cur.final = strings.EqualFold(strings.TrimSpace(a.Value), "true")
					}
				}
			case 3:
				if cur != nil {
					field = t.Name.Local
					text.Reset()
				}
			}
		case xml.CharData:
			if depth == 3 && cur != nil && field != "" {
				if text.Len()+len(t) > MaxFileSize {
					return nil, nil, fail("element text too long")
				}
				text.Write(t)
			}
		case xml.EndElement:
			switch depth {
			case 3:
				if cur != nil {
					switch field {
					case "name":
						cur.name = strings.TrimSpace(text.String())
					case "value":
						cur.value = text.String()
						hasValue = true
					case "final":
						cur.final = strings.EqualFold(strings.TrimSpace(text.String()), "true")
					}
					field = ""
				}
			case 2:
				if cur != nil {
					switch {
					case cur.name == "":
						warnings = append(warnings, fmt.Sprintf("%s:%d: ignoring property without a name", source, cur.line))
					case !hasValue:
						warnings = append(warnings, fmt.Sprintf("%s:%d: ignoring property %s without a value", source, cur.line, cur.name))
					default:
						props = append(props, *cur)
					}
					cur = nil
				}
			}
			depth--
		}
	}
	if !sawRoot {
		return nil, nil, fmt.Errorf("%w: %s: no <configuration> element", ErrMalformed, source)
	}
	return props, warnings, nil
}

// charsetReader accepts the single-byte encodings a hand-written site file
// might declare besides UTF-8.
func charsetReader(label string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "us-ascii", "ascii", "iso-8859-1", "latin1", "iso8859-1":
		return &latin1Reader{r: bufio.NewReader(input)}, nil
	}
	return nil, fmt.Errorf("unsupported encoding %q", label)
}

// latin1Reader converts ISO-8859-1 bytes to UTF-8.
type latin1Reader struct {
	r   *bufio.Reader
	buf []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(l.buf) > 0 {
			c := copy(p[n:], l.buf)
			l.buf = l.buf[c:]
			n += c
			continue
		}
		b, err := l.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		if b < utf8.RuneSelf {
			p[n] = b
			n++
			continue
		}
		l.buf = utf8.AppendRune(l.buf[:0], rune(b))
	}
	return n, nil
}

// WriteXML writes a <configuration> document holding keys (all set keys when
// none are given) with their expanded values, in the order given. Keys that
// are not set are skipped. Final keys are written with <final>true</final>.
func (c *Conf) WriteXML(w io.Writer, keys ...string) error {
	if len(keys) == 0 {
		keys = c.Keys()
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<configuration>\n")
	for _, k := range keys {
		e, ok := c.props[k]
		if !ok {
			continue
		}
		v, _ := c.expand(k, e.value)
		bw.WriteString("  <property>\n    <name>")
		if err := xml.EscapeText(bw, []byte(k)); err != nil {
			return err
		}
		bw.WriteString("</name>\n    <value>")
		if err := xml.EscapeText(bw, []byte(v)); err != nil {
			return err
		}
		bw.WriteString("</value>\n")
		if e.final {
			bw.WriteString("    <final>true</final>\n")
		}
		bw.WriteString("  </property>\n")
	}
	bw.WriteString("</configuration>\n")
	return bw.Flush()
}
