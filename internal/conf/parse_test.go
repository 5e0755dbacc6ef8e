package conf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseXML(t *testing.T) {
	cases := []struct {
		name     string
		in       string
		want     []property // line ignored
		warnings int
		err      error
		errText  string
	}{
		{
			name: "plain",
			in:   site("a", "1", "b!", " 2 "),
			want: []property{{name: "a", value: "1"}, {name: "b", value: " 2 ", final: true}},
		},
		{
			name: "attributes and whitespace",
			in: `<configuration>
  <property name=" x " value="1" final="TRUE"/>
  <property><name>
     y
  </name><value></value></property>
</configuration>`,
			want: []property{{name: "x", value: "1", final: true}, {name: "y", value: ""}},
		},
		{
			name: "stylesheet, comments, cdata, entities",
			in: `<?xml version="1.0" encoding="UTF-8"?>
<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>
<!-- licence -->
<configuration>
  <!-- a comment -->
  <property><name>a</name><value><![CDATA[<raw>]]>&amp;&lt;</value><description>x<b>y</b></description></property>
</configuration>`,
			want: []property{{name: "a", value: "<raw>&<"}},
		},
		{
			name: "latin1",
			in:   "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><configuration><property><name>a</name><value>caf\xe9</value></property></configuration>",
			want: []property{{name: "a", value: "café"}},
		},
		{
			name:     "unknown elements and incomplete properties",
			in:       `<configuration><foo/><property><value>v</value></property><property><name>n</name></property><property><name>ok</name><value>v</value><source>x</source></property></configuration>`,
			want:     []property{{name: "ok", value: "v"}},
			warnings: 3,
		},
		{
			name: "empty configuration",
			in:   `<configuration/>`,
		},
		{
			name:    "xinclude",
			in:      `<configuration xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="other.xml"/></configuration>`,
			err:     ErrInclude,
			errText: "test.xml:1",
		},
		{
			name: "xinclude undeclared prefix",
			in:   `<configuration><xi:include href="other.xml"/></configuration>`,
			err:  ErrInclude,
		},
		{
			name:    "unclosed",
			in:      "<configuration>\n<property>\n<name>a</name>\n",
			err:     ErrMalformed,
			errText: "test.xml:",
		},
		{
			name:    "mismatched",
			in:      "<configuration>\n<property>\n<name>a</value>\n</property></configuration>",
			err:     ErrMalformed,
			errText: "test.xml:3",
		},
		{
			name:    "wrong root",
			in:      `<conf><property><name>a</name><value>1</value></property></conf>`,
			err:     ErrMalformed,
			errText: "want <configuration>",
		},
		{
			name: "two roots",
			in:   `<configuration/><configuration/>`,
			err:  ErrMalformed,
		},
		{
			name: "empty file",
			in:   ``,
			err:  ErrMalformed,
		},
		{
			name: "text only",
			in:   `hello`,
			err:  ErrMalformed,
		},
		{
			name: "undefined entity",
			in:   `<configuration><property><name>a</name><value>&foo;</value></property></configuration>`,
			err:  ErrMalformed,
		},
		{
			name: "unsupported encoding",
			in:   `<?xml version="1.0" encoding="EBCDIC"?><configuration/>`,
			err:  ErrMalformed,
		},
		{
			name: "too deep",
			in:   "<configuration>" + strings.Repeat("<a>", maxElementDepth+1) + strings.Repeat("</a>", maxElementDepth+1) + "</configuration>",
			err:  ErrMalformed,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			props, warnings, err := parseXML(strings.NewReader(tc.in), "test.xml")
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v; want %v", err, tc.err)
				}
				if !strings.Contains(err.Error(), "test.xml") || !strings.Contains(err.Error(), tc.errText) {
					t.Errorf("err %q should name the file (and %q)", err, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			for i := range props {
				props[i].line = 0
			}
			if len(props) != len(tc.want) {
				t.Fatalf("props = %+v; want %+v", props, tc.want)
			}
			for i := range props {
				if props[i] != tc.want[i] {
					t.Errorf("prop %d = %+v; want %+v", i, props[i], tc.want[i])
				}
			}
			if len(warnings) != tc.warnings {
				t.Errorf("warnings = %q; want %d", warnings, tc.warnings)
			}
		})
	}
}

func TestParseXMLTooLarge(t *testing.T) {
	big := bytes.Repeat([]byte(" "), MaxFileSize+1)
	_, _, err := parseXML(bytes.NewReader(big), "big.xml")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "big.xml") {
		t.Errorf("err = %v; want ErrTooLarge naming big.xml", err)
	}
}

func TestLoadMalformedNamesFile(t *testing.T) {
	dir := writeDir(t, site("a", "1"), "<configuration>\n<property>\n<name>x</nam>\n")
	_, err := Load(Options{Dir: dir, Env: noEnv})
	want := filepath.Join(dir, HDFSSiteFile) + ":3"
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v; want ErrMalformed naming %s", err, want)
	}
	dir = writeDir(t, `<configuration><xi:include href="x"/></configuration>`, "")
	_, err = Load(Options{Dir: dir, Env: noEnv})
	if !errors.Is(err, ErrInclude) || !strings.Contains(err.Error(), filepath.Join(dir, CoreSiteFile)) {
		t.Errorf("err = %v; want ErrInclude naming core-site.xml", err)
	}
}

func TestLoadUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	// A directory where a site file should be cannot be read.
	if err := os.Mkdir(filepath.Join(dir, CoreSiteFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(Options{Dir: dir, Env: noEnv}); err == nil {
		t.Errorf("Load with a directory as core-site.xml succeeded")
	}
}

func FuzzLoadXML(f *testing.F) {
	f.Add([]byte(site("a", "1", "b!", "${a}", "c", "${env.X:-y}")))
	f.Add([]byte(`<configuration><property name="a" value="1"/></configuration>`))
	f.Add([]byte(`<?xml version="1.0" encoding="ISO-8859-1"?><configuration><property><name>a</name><value>` + "\xe9" + `</value></property></configuration>`))
	f.Add([]byte(`<configuration xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="x"/></configuration>`))
	f.Add([]byte(`<configuration><property><name>x</name><value>${x}${y}</value></property><property><name>y</name><value>${x}</value></property></configuration>`))
	f.Add([]byte("<configuration>\n<property>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		props, _, err := parseXML(bytes.NewReader(data), "fuzz.xml")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.xml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		c := newDefaults(noEnv)
		for _, p := range props {
			if p.name == "" {
				t.Fatalf("property without a name: %+v", p)
			}
			c.set(p.name, p.value, "fuzz.xml", p.final)
		}
		for _, k := range c.Keys() {
			c.String(k)
			c.Int(k)
			c.Duration(k)
			c.Size(k)
			c.Float(k)
			c.Bool(k)
			c.Strings(k)
		}
		var buf bytes.Buffer
		if err := c.WriteXML(&buf); err != nil {
			t.Fatalf("WriteXML: %v", err)
		}
		if _, _, err := parseXML(&buf, "rewritten.xml"); err != nil {
			t.Fatalf("rewritten file does not parse: %v", err)
		}
	})
}
