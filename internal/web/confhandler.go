package web

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// sensitiveKeysKey lists the regular expressions of keys whose values
// /conf hides.
const sensitiveKeysKey = "hadoop.security.sensitive-config-keys"

// defaultSensitiveKeys is Hadoop's default for sensitiveKeysKey
// (CommonConfigurationKeysPublic, Hadoop 3.4), comma separated. A key is
// sensitive when any expression matches somewhere in it.
const defaultSensitiveKeys = "secret$," +
	"password$," +
	"username$," +
	"ssl.keystore.pass$," +
	"fs.s3.*[Ss]ecret.?[Kk]ey," +
	"fs.s3a.*.server-side-encryption.key," +
	"fs.s3a.encryption.algorithm," +
	"fs.s3a.encryption.key," +
	`fs.azure\.account.key.*,` +
	"credential$," +
	"oauth.*secret," +
	"oauth.*password," +
	"oauth.*token," +
	sensitiveKeysKey

// redactedValue replaces the value of a sensitive key.
const redactedValue = "******"

// redactor decides which keys' values /conf hides.
type redactor []*regexp.Regexp

// newRedactor compiles c's sensitiveKeysKey list, or Hadoop's default when
// the key is unset. An expression Go cannot compile is matched as literal
// text instead, so a key it was meant to hide is still likely hidden.
func newRedactor(c *conf.Conf, logger *slog.Logger) redactor {
	exprs := strings.Split(defaultSensitiveKeys, ",")
	if c != nil {
		if _, ok := c.Get(sensitiveKeysKey); ok {
			exprs = c.Strings(sensitiveKeysKey)
		}
	}
	var r redactor
	for _, e := range exprs {
		re, err := regexp.Compile(e)
		if err != nil {
			logger.Warn("web: sensitive key expression does not compile; matching it literally",
				slog.String("key", sensitiveKeysKey), slog.String("expression", e), slog.Any("error", err))
			re = regexp.MustCompile(regexp.QuoteMeta(e))
		}
		r = append(r, re)
	}
	return r
}

func (r redactor) sensitive(key string) bool {
	for _, re := range r {
		if re.MatchString(key) {
			return true
		}
	}
	return false
}

// confProperty is one row of /conf.
type confProperty struct {
	key, value, source string
	final              bool
}

// serveConf answers GET /conf in Hadoop's ConfServlet formats: XML unless
// ?format=json (or, without format, an Accept header naming json); ?name=
// selects one key.
func (s *Server) serveConf(w http.ResponseWriter, r *http.Request) {
	if s.conf == nil {
		http.Error(w, fmt.Sprintf("web: /conf is not available: this %s serves no configuration", s.role),
			http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	format := "xml"
	if q.Has("format") {
		format = q.Get("format")
	} else if strings.Contains(r.Header.Get("Accept"), "json") {
		format = "json"
	}
	if format != "xml" && format != "json" {
		http.Error(w, fmt.Sprintf("%v: format=%q (want xml or json)", errBadQuery, format), http.StatusBadRequest)
		return
	}
	keys := s.conf.Keys()
	single := q.Has("name")
	if single {
		name := q.Get("name")
		if _, ok := s.conf.Get(name); !ok {
			http.Error(w, fmt.Sprintf("%v: property %q is not set", errNotFound, name), http.StatusNotFound)
			return
		}
		keys = []string{name}
	}
	finals := s.finalKeys(keys)
	props := make([]confProperty, 0, len(keys))
	for _, k := range keys {
		v, _ := s.conf.Get(k)
		if s.redact.sensitive(k) {
			v = redactedValue
		}
		props = append(props, confProperty{key: k, value: v, source: s.conf.Source(k), final: finals[k]})
	}
	var buf bytes.Buffer
	if format == "json" {
		writeConfJSON(&buf, props, single)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	} else {
		writeConfXML(&buf, props)
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	}
	w.Write(buf.Bytes())
}

// finalKeys tells which of keys are final. conf exports the flag only
// through WriteXML, so this reads it back from there; on failure every key
// is reported as not final.
func (s *Server) finalKeys(keys []string) map[string]bool {
	var buf bytes.Buffer
	if err := s.conf.WriteXML(&buf, keys...); err != nil {
		s.logger.Warn("web: /conf cannot read final flags", slog.Any("error", err))
		return nil
	}
	var doc struct {
		Props []struct {
			Name  string `xml:"name"`
			Final string `xml:"final"`
		} `xml:"property"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		s.logger.Warn("web: /conf cannot read final flags", slog.Any("error", err))
		return nil
	}
	finals := make(map[string]bool)
	for _, p := range doc.Props {
		if strings.TrimSpace(p.Final) == "true" {
			finals[p.Name] = true
		}
	}
	return finals
}

// writeConfXML writes Hadoop's Configuration.writeXml document.
func writeConfXML(buf *bytes.Buffer, props []confProperty) {
	buf.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="no"?><configuration>`)
	for _, p := range props {
		buf.WriteString("<property><name>")
		xml.EscapeText(buf, []byte(p.key))
		buf.WriteString("</name><value>")
		xml.EscapeText(buf, []byte(p.value))
		fmt.Fprintf(buf, "</value><final>%t</final><source>", p.final)
		xml.EscapeText(buf, []byte(p.source))
		buf.WriteString("</source></property>")
	}
	buf.WriteString("</configuration>")
}

// writeConfJSON writes Hadoop's Configuration.dumpConfiguration object:
// {"properties":[...]} or, for one named key, {"property":{...}}.
func writeConfJSON(buf *bytes.Buffer, props []confProperty, single bool) {
	one := func(p confProperty) {
		buf.WriteByte('{')
		writeKey(buf, "key")
		writeString(buf, p.key)
		buf.WriteByte(',')
		writeKey(buf, "value")
		writeString(buf, p.value)
		fmt.Fprintf(buf, `,"isFinal":%t,`, p.final)
		writeKey(buf, "resource")
		writeString(buf, p.source)
		buf.WriteByte('}')
	}
	if single && len(props) == 1 {
		buf.WriteString(`{"property":`)
		one(props[0])
		buf.WriteString("}\n")
		return
	}
	buf.WriteString(`{"properties":[`)
	for i, p := range props {
		if i > 0 {
			buf.WriteByte(',')
		}
		one(p)
	}
	buf.WriteString("]}\n")
}
