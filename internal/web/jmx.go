package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Attr is one bean attribute, in output order. Value must be JSON-encodable:
// string, bool, integer and float types, or nested []any / map[string]any /
// []Attr (an object with ordered keys).
type Attr struct {
	Name  string
	Value any
}

// Bean is one MBean as Hadoop's /jmx prints it.
type Bean struct {
	// Name is the object name, e.g. "Hadoop:service=NameNode,name=FSNamesystem".
	Name string
	// ModelerType is printed as the "modelerType" attribute (first, after "name").
	ModelerType string
	// Attrs is called on every request that selects the bean; it must be safe
	// for concurrent use.
	Attrs func() []Attr
}

// registered is a bean with its parsed name.
type registered struct {
	Bean
	name objectName
}

// jmxContentType is what Hadoop's JMX servlet sends (note "utf8").
const jmxContentType = "application/json; charset=utf8"

// modelerType is the attribute name printed for Bean.ModelerType.
const modelerType = "modelerType"

// serveJMX answers GET /jmx. Like Hadoop's servlet it allows cross-origin
// reads, so dashboards on other hosts can poll it.
func (s *Server) serveJMX(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Methods", "GET")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	q := r.URL.Query()
	if cb := q.Get("callback"); q.Has("callback") {
		if !jsIdent.MatchString(cb) {
			writeJMXError(w, http.StatusBadRequest, fmt.Errorf("%w: callback=%q is not a JavaScript identifier", errBadQuery, cb))
			return
		}
		jw := &jsonpWriter{ResponseWriter: w, callback: cb}
		defer jw.finish()
		w = jw
	}
	beans := s.beans()
	if get := q.Get("get"); q.Has("get") {
		s.serveJMXGet(w, beans, get)
		return
	}
	qry := q.Get("qry")
	if qry == "" {
		qry = "*:*"
	}
	pat, err := parseObjectName(qry, true)
	if err != nil {
		writeJMXError(w, http.StatusBadRequest, err)
		return
	}
	var sel []*registered
	for _, b := range beans {
		if pat.matches(b.name) {
			sel = append(sel, b)
		}
	}
	s.writeBeans(w, sel, "")
}

// serveJMXGet answers /jmx?get=BEAN::ATTR. BEAN may be a pattern, as in
// Hadoop; every bean it selects must have ATTR.
func (s *Server) serveJMXGet(w http.ResponseWriter, beans []*registered, get string) {
	parts := strings.Split(get, "::")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		writeJMXError(w, http.StatusBadRequest,
			fmt.Errorf("%w: get=%q is not of the form BEANNAME::ATTRIBUTE", errBadQuery, get))
		return
	}
	pat, err := parseObjectName(parts[0], true)
	if err != nil {
		writeJMXError(w, http.StatusBadRequest, err)
		return
	}
	attr := parts[1]
	var sel []*registered
	for _, b := range beans {
		if pat.matches(b.name) {
			sel = append(sel, b)
		}
	}
	if len(sel) == 0 {
		writeJMXError(w, http.StatusNotFound, fmt.Errorf("%w: no bean named %q", errNotFound, parts[0]))
		return
	}
	s.writeBeans(w, sel, attr)
}

// writeBeans writes {"beans":[...]} for sel. With only set, each bean
// carries just that attribute (besides name and modelerType) and a bean
// without it is a 404.
func (s *Server) writeBeans(w http.ResponseWriter, sel []*registered, only string) {
	var buf bytes.Buffer
	buf.WriteString(`{"beans":[`)
	for i, b := range sel {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteByte('{')
		writeKey(&buf, "name")
		writeString(&buf, b.Bean.Name)
		buf.WriteByte(',')
		writeKey(&buf, modelerType)
		writeString(&buf, b.ModelerType)
		var attrs []Attr
		if b.Attrs != nil {
			attrs = b.Attrs()
		}
		found := only == "" || only == modelerType
		for _, a := range attrs {
			if only != "" && (a.Name != only || found) {
				continue
			}
			mark := buf.Len()
			buf.WriteByte(',')
			writeKey(&buf, a.Name)
			if err := encodeValue(&buf, a.Value, 0); err != nil {
				buf.Truncate(mark)
				s.logger.Warn("web: /jmx attribute cannot be encoded; left out",
					slog.String("bean", b.Bean.Name), slog.String("attribute", a.Name), slog.Any("error", err))
				continue
			}
			found = true
		}
		if !found {
			writeJMXError(w, http.StatusNotFound,
				fmt.Errorf("%w: bean %q has no attribute %q", errNotFound, b.Bean.Name, only))
			return
		}
		buf.WriteByte('}')
	}
	buf.WriteString("]}")
	writeJSON(w, http.StatusOK, jmxContentType, buf.Bytes())
}

// writeJMXError writes Hadoop's {"result":"ERROR","message":...} object.
func writeJMXError(w http.ResponseWriter, code int, err error) {
	var buf bytes.Buffer
	buf.WriteString(`{"result":"ERROR","message":`)
	writeString(&buf, err.Error())
	buf.WriteByte('}')
	writeJSON(w, code, jmxContentType, buf.Bytes())
}

// writeJSON indents compact (valid JSON built by this package) with two
// spaces and writes it.
func writeJSON(w http.ResponseWriter, code int, contentType string, compact []byte) {
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		// compact is built from encoding/json output only; an error here is
		// a bug in this package.
		http.Error(w, "web: internal error encoding JSON", http.StatusInternalServerError)
		return
	}
	out.WriteByte('\n')
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	w.Write(out.Bytes())
}

func writeKey(buf *bytes.Buffer, k string) {
	writeString(buf, k)
	buf.WriteByte(':')
}

// writeString appends s as a JSON string, as encoding/json writes it with
// HTML escaping off: invalid UTF-8 becomes U+FFFD, and U+2028 and U+2029
// are escaped so the output is also valid JavaScript.
func writeString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf.WriteString(s[start:i])
			switch c {
			case '"', '\\':
				buf.WriteByte('\\')
				buf.WriteByte(c)
			case '\n':
				buf.WriteString(`\n`)
			case '\r':
				buf.WriteString(`\r`)
			case '\t':
				buf.WriteString(`\t`)
			case '\b':
				buf.WriteString(`\b`)
			case '\f':
				buf.WriteString(`\f`)
			default:
				buf.WriteString(`\u00`)
				buf.WriteByte(hex[c>>4])
				buf.WriteByte(hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf.WriteString(s[start:i])
			buf.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			buf.WriteString(s[start:i])
			buf.WriteString(`\u202`)
			buf.WriteByte(hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}

// maxDepth bounds the nesting of attribute values, so that a cyclic
// []any or map cannot recurse forever.
const maxDepth = 64

// encodeValue appends v as compact JSON. []Attr becomes an object with its
// keys in order, map[string]any an object with sorted keys, []any an array;
// non-finite floats become the strings "NaN", "Infinity" and "-Infinity"
// (as Hadoop's JSON writer prints them); anything else goes through
// encoding/json.
func encodeValue(buf *bytes.Buffer, v any, depth int) error {
	if depth > maxDepth {
		return errTooDeep
	}
	switch x := v.(type) {
	case []Attr:
		buf.WriteByte('{')
		for i, a := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeKey(buf, a.Name)
			if err := encodeValue(buf, a.Value, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeKey(buf, k)
			if err := encodeValue(buf, x[k], depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeValue(buf, e, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case string:
		writeString(buf, x)
	case bool:
		buf.Write(strconv.AppendBool(buf.AvailableBuffer(), x))
	case int:
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), int64(x), 10))
	case int32:
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), int64(x), 10))
	case int64:
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), x, 10))
	case uint32:
		buf.Write(strconv.AppendUint(buf.AvailableBuffer(), uint64(x), 10))
	case uint64:
		buf.Write(strconv.AppendUint(buf.AvailableBuffer(), x, 10))
	case float64:
		return encodeFloat(buf, x, 64)
	case float32:
		return encodeFloat(buf, float64(x), 32)
	default:
		return marshalTo(buf, v)
	}
	return nil
}

func encodeFloat(buf *bytes.Buffer, f float64, bits int) error {
	switch {
	case math.IsNaN(f):
		buf.WriteString(`"NaN"`)
	case math.IsInf(f, 1):
		buf.WriteString(`"Infinity"`)
	case math.IsInf(f, -1):
		buf.WriteString(`"-Infinity"`)
	case bits == 32:
		return marshalTo(buf, float32(f))
	default:
		return marshalTo(buf, f)
	}
	return nil
}

// marshalTo appends v encoded by encoding/json, without HTML escaping.
func marshalTo(buf *bytes.Buffer, v any) error {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
	return nil
}
