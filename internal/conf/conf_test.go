package conf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// site renders a <configuration> document from name/value pairs; a name
// ending in "!" is written final.
func site(kv ...string) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<!-- test -->\n<configuration>\n")
	for i := 0; i+1 < len(kv); i += 2 {
		name, final := strings.CutSuffix(kv[i], "!")
		b.WriteString("<property><name>" + name + "</name><value>" + kv[i+1] + "</value>")
		if final {
			b.WriteString("<final>true</final>")
		}
		b.WriteString("<description>d</description></property>\n")
	}
	b.WriteString("</configuration>\n")
	return b.String()
}

func writeDir(t *testing.T, core, hdfs string) string {
	t.Helper()
	dir := t.TempDir()
	if core != "" {
		if err := os.WriteFile(filepath.Join(dir, CoreSiteFile), []byte(core), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if hdfs != "" {
		if err := os.WriteFile(filepath.Join(dir, HDFSSiteFile), []byte(hdfs), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func noEnv(string) string { return "" }

func mustLoad(t *testing.T, o Options) *Conf {
	t.Helper()
	if o.Env == nil {
		o.Env = noEnv
	}
	c, err := Load(o)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

func TestDefaultsTypedValues(t *testing.T) {
	c := newDefaults(func(k string) string {
		if k == "USER" {
			return "alice"
		}
		return ""
	})
	ints := map[string]int64{
		DFSReplication:                   3,
		DFSReplicationMax:                512,
		DFSNameNodeReplicationMin:        1,
		DFSBytesPerChecksum:              512,
		DFSClientWritePacketSize:         65536,
		DFSNameNodeHandlerCount:          10,
		DFSNameNodeMaxComponentLength:    255,
		DFSNameNodeMaxDirectoryItems:     1048576,
		DFSNameNodeMaxBlocksPerFile:      10000,
		DFSNameNodeMaxXAttrsPerInode:     32,
		DFSNameNodeMaxXAttrSize:          16384,
		DFSListLimit:                     1000,
		DFSNameNodeCheckpointTxns:        1000000,
		DFSDataNodeMaxTransferThreads:    4096,
		IPCServerHandlerQueueSize:        100,
		IPCServerListenQueueSize:         256,
		IPCServerMaxConnections:          16384,
		IPCClientIdleThreshold:           4000,
		IPCClientKillMax:                 10,
		HadoopHTTPMaxThreads:             -1,
		HadoopHTTPMaxRequestHeaderSize:   65536,
		IPCClientConnectMaxRetries:       10,
		IOFileBufferSize:                 4096,
		DFSNameNodeSafeModeMinDataNodes:  0,
		DFSNameNodeReplicationMaxStreams: 2,
		DFSNameNodeCheckpointMaxRetries:  3,
	}
	for k, want := range ints {
		got, err := c.Int(k)
		if err != nil || got != want {
			t.Errorf("Int(%s) = %d, %v; want %d", k, got, err, want)
		}
	}
	sizes := map[string]int64{
		DFSBlockSize:            128 << 20,
		IPCMaximumDataLength:    128 << 20,
		DFSNameNodeMinBlockSize: 1 << 20,
		DFSDataNodeDuReserved:   0,
	}
	for k, want := range sizes {
		got, err := c.Size(k)
		if err != nil || got != want {
			t.Errorf("Size(%s) = %d, %v; want %d", k, got, err, want)
		}
	}
	durations := map[string]time.Duration{
		DFSHeartbeatInterval:                    3 * time.Second,
		DFSNameNodeHeartbeatRecheckInterval:     5 * time.Minute,
		DFSNameNodeStaleDataNodeInterval:        30 * time.Second,
		DFSNameNodeCheckpointPeriod:             time.Hour,
		DFSNameNodeSafeModeExtension:            30 * time.Second,
		DFSBlockReportInterval:                  6 * time.Hour,
		DFSBlockReportInitialDelay:              0,
		DFSNameNodeAccessTimePrecision:          time.Hour,
		DFSNameNodeLeaseRecheckInterval:         2 * time.Second,
		DFSNameNodeLeaseHardLimit:               20 * time.Minute,
		DFSNameNodeRetryCacheExpiryTime:         10 * time.Minute,
		DFSNameNodeRedundancyInterval:           3 * time.Second,
		DFSNameNodeReconstructionPendingTimeout: 5 * time.Minute,
		DFSImageTransferTimeout:                 time.Minute,
		IPCClientConnectTimeout:                 20 * time.Second,
		IPCClientConnectRetryInterval:           time.Second,
		IPCClientConnectionMaxIdleTime:          10 * time.Second,
		IPCClientConnectionIdleScanInterval:     10 * time.Second,
		IPCServerPurgeInterval:                  15 * time.Minute,
		HadoopHTTPIdleTimeout:                   time.Minute,
		FSTrashInterval:                         0,
	}
	for k, want := range durations {
		got, err := c.Duration(k)
		if err != nil || got != want {
			t.Errorf("Duration(%s) = %v, %v; want %v", k, got, err, want)
		}
	}
	floats := map[string]float64{
		DFSNameNodeSafeModeThresholdPct:      0.999,
		DFSNameNodeRetryCacheHeapPercent:     0.03,
		DFSNameNodeInvalidateWorkPct:         0.32,
		DFSNameNodeEditLogAutoRollMultiplier: 0.5,
	}
	for k, want := range floats {
		got, err := c.Float(k)
		if err != nil || got != want {
			t.Errorf("Float(%s) = %v, %v; want %v", k, got, err, want)
		}
	}
	bools := map[string]bool{
		DFSPermissionsEnabled:                       true,
		DFSNameNodeEnableRetryCache:                 true,
		DFSClientReplaceDataNodeOnFailureEnable:     true,
		DFSClientReplaceDataNodeOnFailureBestEffort: false,
		DFSHAAutomaticFailoverEnabled:               false,
		DFSNameNodeSupportAllowFormat:               true,
		DFSNameNodeAvoidReadStaleDataNode:           false,
		DFSClientUseDataNodeHostname:                false,
	}
	for k, want := range bools {
		got, err := c.Bool(k)
		if err != nil || got != want {
			t.Errorf("Bool(%s) = %v, %v; want %v", k, got, err, want)
		}
	}
	strs := map[string]string{
		FSDefaultFS:                             "file:///",
		HadoopTmpDir:                            "/tmp/hadoop-alice",
		DFSNameNodeNameDir:                      "file:///tmp/hadoop-alice/dfs/name",
		DFSNameNodeEditsDir:                     "file:///tmp/hadoop-alice/dfs/name",
		DFSDataNodeDataDir:                      "file:///tmp/hadoop-alice/dfs/data",
		DFSNameNodeHTTPAddress:                  "0.0.0.0:9870",
		DFSDataNodeAddress:                      "0.0.0.0:9866",
		DFSDataNodeHTTPAddress:                  "0.0.0.0:9864",
		DFSDataNodeIPCAddress:                   "0.0.0.0:9867",
		DFSJournalNodeRPCAddress:                "0.0.0.0:8485",
		DFSJournalNodeHTTPAddress:               "0.0.0.0:8480",
		DFSChecksumType:                         "CRC32C",
		DFSPermissionsSuperUserGroup:            "supergroup",
		HadoopSecurityAuthentication:            "simple",
		FSPermissionsUmaskMode:                  "022",
		DFSClientReplaceDataNodeOnFailurePolicy: "DEFAULT",
		DFSNameNodeRPCAddress:                   "",
	}
	for k, want := range strs {
		if got := c.String(k); got != want {
			t.Errorf("String(%s) = %q; want %q", k, got, want)
		}
		if got := c.Source(k); got != SourceDefault {
			t.Errorf("Source(%s) = %q; want default", k, got)
		}
	}
	if v, ok := c.Get(DFSNameNodeRPCAddress); !ok || v != "" {
		t.Errorf("Get(rpc-address) = %q, %v; want empty and set", v, ok)
	}
	if _, ok := c.Get("no.such.key"); ok {
		t.Errorf("Get(no.such.key) reported set")
	}
}

func TestDefaultTableWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range defaultTable() {
		if seen[d.key] {
			t.Errorf("duplicate default for %s", d.key)
		}
		seen[d.key] = true
		if d.unit != 0 && d.def != "" {
			if _, ok := parseDuration(d.def, d.unit); !ok {
				t.Errorf("%s: default %q is not a duration", d.key, d.def)
			}
		}
	}
}

func TestGetters(t *testing.T) {
	c := Defaults().With(
		KeyValue{"i", " 42 "}, KeyValue{"ineg", "-7"}, KeyValue{"ihex", "0x1F"}, KeyValue{"ibad", "4x"},
		KeyValue{"ibig", "9223372036854775808"}, KeyValue{"i32big", "2147483648"}, KeyValue{"i32min", "-2147483648"},
		KeyValue{"b1", " TRUE "}, KeyValue{"b2", "False"}, KeyValue{"bbad", "yes"},
		KeyValue{"f1", "0.999f"}, KeyValue{"f2", "1e3"}, KeyValue{"f3", "2.5D"}, KeyValue{"fbad", "abc"},
		KeyValue{"empty", ""}, KeyValue{"blank", "   "},
	)
	intCases := []struct {
		key  string
		want int64
		err  error
	}{
		{"i", 42, nil},
		{"ineg", -7, nil},
		{"ihex", 31, nil},
		{"ibad", 0, ErrInvalidInt},
		{"ibig", 0, ErrInvalidInt},
		{"i32big", 2147483648, nil},
		{"empty", 0, ErrNotSet},
		{"blank", 0, ErrNotSet},
		{"missing", 0, ErrNotSet},
	}
	for _, tc := range intCases {
		got, err := c.Int(tc.key)
		if !errors.Is(err, tc.err) || (tc.err == nil && got != tc.want) {
			t.Errorf("Int(%s) = %d, %v; want %d, %v", tc.key, got, err, tc.want, tc.err)
		}
	}
	int32Cases := []struct {
		key  string
		want int32
		err  error
	}{
		{"i", 42, nil},
		{"i32big", 0, ErrInvalidInt},
		{"i32min", -2147483648, nil},
		{"ihex", 31, nil},
	}
	for _, tc := range int32Cases {
		got, err := c.Int32(tc.key)
		if !errors.Is(err, tc.err) || (tc.err == nil && got != tc.want) {
			t.Errorf("Int32(%s) = %d, %v; want %d, %v", tc.key, got, err, tc.want, tc.err)
		}
	}
	boolCases := []struct {
		key  string
		want bool
		err  error
	}{
		{"b1", true, nil}, {"b2", false, nil}, {"bbad", false, ErrInvalidBool}, {"missing", false, ErrNotSet},
	}
	for _, tc := range boolCases {
		got, err := c.Bool(tc.key)
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("Bool(%s) = %v, %v; want %v, %v", tc.key, got, err, tc.want, tc.err)
		}
	}
	floatCases := []struct {
		key  string
		want float64
		err  error
	}{
		{"f1", 0.999, nil}, {"f2", 1000, nil}, {"f3", 2.5, nil}, {"fbad", 0, ErrInvalidFloat}, {"i", 42, nil},
	}
	for _, tc := range floatCases {
		got, err := c.Float(tc.key)
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("Float(%s) = %v, %v; want %v, %v", tc.key, got, err, tc.want, tc.err)
		}
	}
}

func TestDurationSuffixes(t *testing.T) {
	cases := []struct {
		value string
		unit  time.Duration
		want  time.Duration
		ok    bool
	}{
		{"60s", time.Millisecond, time.Minute, true},
		{"5m", time.Millisecond, 5 * time.Minute, true},
		{"1h", time.Millisecond, time.Hour, true},
		{"2d", time.Millisecond, 48 * time.Hour, true},
		{"500ms", time.Second, 500 * time.Millisecond, true},
		{"10us", time.Second, 10 * time.Microsecond, true},
		{"7ns", time.Second, 7, true},
		{"3S", time.Millisecond, 3 * time.Second, true},
		{"4MS", time.Second, 4 * time.Millisecond, true},
		{"30", time.Second, 30 * time.Second, true},
		{"30", time.Millisecond, 30 * time.Millisecond, true},
		{"-1", time.Second, -time.Second, true},
		{"3 s", time.Second, 0, false},
		{"1.5s", time.Second, 0, false},
		{"s", time.Second, 0, false},
		{"5x", time.Second, 0, false},
		{"0x10", time.Second, 0, false},
		{"9223372036854775807d", time.Second, 0, false},
		{"", time.Second, 0, false},
	}
	for _, tc := range cases {
		got, ok := parseDuration(tc.value, tc.unit)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseDuration(%q, %v) = %v, %v; want %v, %v", tc.value, tc.unit, got, ok, tc.want, tc.ok)
		}
	}
	// Through the getter: a bare number uses the key's table unit.
	c := Defaults().With(KeyValue{DFSHeartbeatInterval, "10"}, KeyValue{DFSNameNodeStaleDataNodeInterval, "10"},
		KeyValue{FSTrashInterval, "1440"}, KeyValue{"unknown.duration", "10"})
	for key, want := range map[string]time.Duration{
		DFSHeartbeatInterval:             10 * time.Second,
		DFSNameNodeStaleDataNodeInterval: 10 * time.Millisecond,
		FSTrashInterval:                  24 * time.Hour,
		"unknown.duration":               10 * time.Millisecond,
	} {
		got, err := c.Duration(key)
		if err != nil || got != want {
			t.Errorf("Duration(%s) = %v, %v; want %v", key, got, err, want)
		}
	}
	if _, err := c.With(KeyValue{DFSHeartbeatInterval, "3 sec"}).Duration(DFSHeartbeatInterval); !errors.Is(err, ErrInvalidDuration) {
		t.Errorf("Duration(3 sec) err = %v; want ErrInvalidDuration", err)
	}
}

func TestSizeSuffixes(t *testing.T) {
	cases := []struct {
		value string
		want  int64
		ok    bool
	}{
		{"0", 0, true},
		{"512", 512, true},
		{"1k", 1 << 10, true},
		{"128m", 128 << 20, true},
		{"128M", 128 << 20, true},
		{"1g", 1 << 30, true},
		{"2T", 2 << 40, true},
		{"3p", 3 << 50, true},
		{"7e", 7 << 60, true},
		{"8e", 0, false},
		{"-1k", -1024, true},
		{"12x", 0, false},
		{"m", 0, false},
		{"1.5g", 0, false},
		{"1kb", 0, false},
		{"0x10", 0, false},
		{"", 0, false},
	}
	for _, tc := range cases {
		got, ok := parseSize(tc.value)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, %v", tc.value, got, ok, tc.want, tc.ok)
		}
	}
}

func TestStrings(t *testing.T) {
	cases := []struct {
		value string
		want  []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{" a , b ,,c,", []string{"a", "b", "c"}},
		{"a\n  b,\n c", []string{"a", "b", "c"}},
		{" , ,", nil},
	}
	for _, tc := range cases {
		c := Defaults().With(KeyValue{"k", tc.value})
		if got := c.Strings("k"); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Strings(%q) = %q; want %q", tc.value, got, tc.want)
		}
	}
	if got := Defaults().Strings("missing"); got != nil {
		t.Errorf("Strings(missing) = %q; want nil", got)
	}
}

func TestPrecedence(t *testing.T) {
	dir := writeDir(t,
		site("a", "core", "b", "core", "c", "core", "d", "core"),
		site("b", "hdfs", "c", "hdfs", DFSReplication, "2"))
	c := mustLoad(t, Options{Dir: dir, Overrides: []KeyValue{{"c", "cli1"}, {"c", "cli2"}, {"e", "cli"}}})
	core := filepath.Join(dir, CoreSiteFile)
	hdfs := filepath.Join(dir, HDFSSiteFile)
	cases := []struct{ key, value, source string }{
		{"a", "core", core},
		{"b", "hdfs", hdfs},
		{"c", "cli2", SourceOverride},
		{"d", "core", core},
		{"e", "cli", SourceOverride},
		{DFSReplication, "2", hdfs},
		{DFSBlockSize, "134217728", SourceDefault},
		{"unset", "", ""},
	}
	for _, tc := range cases {
		if got := c.String(tc.key); got != tc.value {
			t.Errorf("String(%s) = %q; want %q", tc.key, got, tc.value)
		}
		if got := c.Source(tc.key); got != tc.source {
			t.Errorf("Source(%s) = %q; want %q", tc.key, got, tc.source)
		}
	}
	keys := c.Keys()
	for i := 1; i < len(keys); i++ {
		if keys[i-1] >= keys[i] {
			t.Fatalf("Keys not sorted: %q before %q", keys[i-1], keys[i])
		}
	}
	if len(keys) != len(defaultTable())+5 {
		t.Errorf("len(Keys) = %d; want %d", len(keys), len(defaultTable())+5)
	}
}

func TestLoadDirs(t *testing.T) {
	// No directory: defaults only.
	c := mustLoad(t, Options{})
	if c.Source(DFSBlockSize) != SourceDefault {
		t.Errorf("no dir: Source = %q", c.Source(DFSBlockSize))
	}
	// Empty directory: fine.
	mustLoad(t, Options{Dir: t.TempDir()})
	// Only one of the files.
	dir := writeDir(t, "", site(DFSReplication, "1"))
	if got := mustLoad(t, Options{Dir: dir}).String(DFSReplication); got != "1" {
		t.Errorf("hdfs-site only: replication = %q", got)
	}
	// Missing directory.
	_, err := Load(Options{Dir: filepath.Join(t.TempDir(), "nope")})
	if !errors.Is(err, ErrNoConfDir) {
		t.Errorf("missing dir: err = %v; want ErrNoConfDir", err)
	}
	// A file instead of a directory.
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := Load(Options{Dir: f}); !errors.Is(err, ErrNoConfDir) {
		t.Errorf("file as dir: err = %v; want ErrNoConfDir", err)
	}
}

func TestFinal(t *testing.T) {
	dir := writeDir(t,
		site("k!", "core", "same!", "v", "late", "core"),
		site("k", "hdfs", "same", "v", "late!", "hdfs", "late", "hdfs-again"))
	c := mustLoad(t, Options{Dir: dir, Overrides: []KeyValue{{"k", "cli"}, {"late", "cli"}, {"free", "cli"}}})
	core := filepath.Join(dir, CoreSiteFile)
	hdfs := filepath.Join(dir, HDFSSiteFile)
	for _, tc := range []struct{ key, value, source string }{
		{"k", "cli", SourceOverride}, // -D wins over final, as in Hadoop
		{"same", "v", core},
		{"late", "cli", SourceOverride},
		{"free", "cli", SourceOverride},
	} {
		if got := c.String(tc.key); got != tc.value {
			t.Errorf("String(%s) = %q; want %q", tc.key, got, tc.value)
		}
		if got := c.Source(tc.key); got != tc.source {
			t.Errorf("Source(%s) = %q; want %q", tc.key, got, tc.source)
		}
	}
	w := c.Warnings()
	// k from hdfs-site, late again in hdfs-site; "same" has an identical
	// value and is not reported, -D is not an attempt to override.
	if len(w) != 2 {
		t.Fatalf("Warnings = %q; want 2", w)
	}
	for _, s := range w {
		if !strings.Contains(s, "final") || strings.Contains(s, "same") {
			t.Errorf("unexpected warning %q", s)
		}
	}
	if !strings.Contains(w[0], hdfs) || !strings.Contains(w[0], " k ") || !strings.Contains(w[0], core) {
		t.Errorf("warning %q should name the file, the key and where it was final", w[0])
	}
	// With sets like -D, without touching c.
	c2 := c.With(KeyValue{"k", "with"})
	if c2.String("k") != "with" || c.String("k") != "cli" || len(c2.Warnings()) != 2 {
		t.Errorf("With: %q (c: %q), %d warnings", c2.String("k"), c.String("k"), len(c2.Warnings()))
	}
	// Without -D the final value from core-site stays.
	c3 := mustLoad(t, Options{Dir: dir})
	if c3.String("k") != "core" || c3.Source("k") != core {
		t.Errorf("without -D: k = %q from %s; want the final core-site value", c3.String("k"), c3.Source("k"))
	}
	// WriteXML keeps final.
	var buf bytes.Buffer
	if err := c.WriteXML(&buf, "k"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "<final>true</final>") {
		t.Errorf("WriteXML lost final: %s", buf.String())
	}
}

func TestWith(t *testing.T) {
	base := Defaults()
	c := base.With(KeyValue{DFSReplication, "1"}, KeyValue{"x", "y"})
	if base.String(DFSReplication) != "3" || base.Source("x") != "" {
		t.Errorf("With changed its receiver")
	}
	if c.String(DFSReplication) != "1" || c.Source(DFSReplication) != SourceOverride || c.String("x") != "y" {
		t.Errorf("With: replication %q from %q, x %q", c.String(DFSReplication), c.Source(DFSReplication), c.String("x"))
	}
}

func TestParseKeyValue(t *testing.T) {
	cases := []struct {
		in   string
		want KeyValue
		err  bool
	}{
		{"a=b", KeyValue{"a", "b"}, false},
		{" a =b=c", KeyValue{"a", "b=c"}, false},
		{"a=", KeyValue{"a", ""}, false},
		{"a", KeyValue{}, true},
		{"=b", KeyValue{}, true},
		{"", KeyValue{}, true},
	}
	for _, tc := range cases {
		got, err := ParseKeyValue(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseKeyValue(%q) = %+v, %v; want %+v, err %v", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && !errors.Is(err, ErrBadOverride) {
			t.Errorf("ParseKeyValue(%q) err = %v; want ErrBadOverride", tc.in, err)
		}
	}
}

func TestExpansion(t *testing.T) {
	env := map[string]string{"HOME": "/home/bob", "USER": "bob", "EMPTY": ""}
	c := Defaults().With(
		KeyValue{"base", "/data"},
		KeyValue{"dir", "${base}/dn"},
		KeyValue{"nested", "${dir}/current"},
		KeyValue{"twice", "${base}:${base}"},
		KeyValue{"env", "${env.HOME}/x"},
		KeyValue{"envfb", "${env.MISSING:-/fallback}"},
		KeyValue{"envfb2", "${env.MISSING-/fb2}"},
		KeyValue{"envset", "${env.HOME:-/unused}"},
		KeyValue{"envmissing", "${env.MISSING}/x"},
		KeyValue{"unresolved", "${nope}/x/${base}"},
		KeyValue{"self", "a${self}b"},
		KeyValue{"notref", "$ {base} ${} ${a b} $base"},
		KeyValue{"indirect", "${env.HOME}"},
		KeyValue{"name", "n-${user.name}"},
		KeyValue{"selfref", "${self}/x"},
		KeyValue{"cyc.a", "${cyc.b}"},
		KeyValue{"cyc.b", "${cyc.a}"},
	)
	c.env = func(k string) string { return env[k] }
	cases := []struct{ key, want string }{
		{"dir", "/data/dn"},
		{"nested", "/data/dn/current"},
		{"twice", "/data:/data"},
		{"env", "/home/bob/x"},
		{"envfb", "/fallback"},
		{"envfb2", "/fb2"},
		{"envset", "/home/bob"},
		{"envmissing", "${env.MISSING}/x"},
		{"unresolved", "${nope}/x//data"},
		{"self", "a${self}b"},
		{"selfref", "${self}/x"},
		{"notref", "$ {base} ${} ${a b} $base"},
		{"name", "n-bob"},
		{HadoopTmpDir, "/tmp/hadoop-bob"},
		{DFSNameNodeEditsDir, "file:///tmp/hadoop-bob/dfs/name"},
	}
	for _, tc := range cases {
		if got := c.String(tc.key); got != tc.want {
			t.Errorf("String(%s) = %q; want %q", tc.key, got, tc.want)
		}
	}
	// A cycle fails with an error naming the key.
	_, err := c.With(KeyValue{"n", "${cyc.a}"}).Int("n")
	if !errors.Is(err, ErrExpansionDepth) || !strings.Contains(err.Error(), "n") {
		t.Errorf("cycle: err = %v; want ErrExpansionDepth naming n", err)
	}
	// A long expansion hits the length cap (17 references to 1 MiB, within
	// the step limit).
	big := Defaults().With(KeyValue{"mib", strings.Repeat("x", 1<<20)},
		KeyValue{"big", strings.Repeat("${mib}", 17)})
	if _, err := big.Size("big"); !errors.Is(err, ErrExpansionDepth) || !strings.Contains(err.Error(), "longer") {
		t.Errorf("huge expansion: err = %v; want length error", err)
	}
	// Exactly MaxSubstitutions steps is fine, one more is not.
	chain := Defaults()
	var kvs []KeyValue
	for i := 0; i < MaxSubstitutions; i++ {
		kvs = append(kvs, KeyValue{"c" + string(rune('a'+i)), "${c" + string(rune('a'+i+1)) + "}"})
	}
	kvs = append(kvs, KeyValue{"c" + string(rune('a'+MaxSubstitutions)), "end"})
	chain = chain.With(kvs...)
	if got := chain.String("ca"); got != "end" {
		t.Errorf("chain of %d = %q; want end", MaxSubstitutions, got)
	}
	longer := chain.With(KeyValue{"start", "${ca}"})
	if _, err := longer.expand("start", "${ca}"); !errors.Is(err, ErrExpansionDepth) {
		t.Errorf("chain of %d: err = %v; want ErrExpansionDepth", MaxSubstitutions+1, err)
	}
}

func TestLoadRejectsCycle(t *testing.T) {
	dir := writeDir(t, site("x", "${y}", "y", "${x}"), "")
	_, err := Load(Options{Dir: dir, Env: noEnv})
	if !errors.Is(err, ErrExpansionDepth) || !strings.Contains(err.Error(), "x") {
		t.Errorf("Load cycle: err = %v; want ErrExpansionDepth naming x", err)
	}
}

func TestLoadUsesEnv(t *testing.T) {
	dir := writeDir(t, site(HadoopTmpDir, "${env.BASE}/tmp"), "")
	c := mustLoad(t, Options{Dir: dir, Env: func(k string) string {
		if k == "BASE" {
			return "/srv"
		}
		return ""
	}})
	if got := c.String(DFSDataNodeDataDir); got != "file:///srv/tmp/dfs/data" {
		t.Errorf("data dir = %q", got)
	}
}

func TestValueErrorMessages(t *testing.T) {
	dir := writeDir(t, "", site(DFSBlockSize, "12x", DFSReplication, "three", DFSPermissionsEnabled, "yes",
		DFSHeartbeatInterval, "3q", DFSNameNodeSafeModeThresholdPct, "most"))
	c := mustLoad(t, Options{Dir: dir, Overrides: []KeyValue{{DFSNameNodeHandlerCount, "many"}}})
	hdfs := filepath.Join(dir, HDFSSiteFile)
	_, errSize := c.Size(DFSBlockSize)
	_, errInt := c.Int(DFSReplication)
	_, errBool := c.Bool(DFSPermissionsEnabled)
	_, errDur := c.Duration(DFSHeartbeatInterval)
	_, errFloat := c.Float(DFSNameNodeSafeModeThresholdPct)
	_, errCLI := c.Int32(DFSNameNodeHandlerCount)
	_, errDefault := c.Int(FSDefaultFS)
	_, errUnset := c.Int("no.such.key")
	cases := []struct {
		err      error
		sentinel error
		want     string
	}{
		{errSize, ErrInvalidSize, `conf: dfs.blocksize="12x" (from ` + hdfs + `): invalid size`},
		{errInt, ErrInvalidInt, `conf: dfs.replication="three" (from ` + hdfs + `): invalid integer`},
		{errBool, ErrInvalidBool, `conf: dfs.permissions.enabled="yes" (from ` + hdfs + `): invalid boolean`},
		{errDur, ErrInvalidDuration, `conf: dfs.heartbeat.interval="3q" (from ` + hdfs + `): invalid duration`},
		{errFloat, ErrInvalidFloat, `conf: dfs.namenode.safemode.threshold-pct="most" (from ` + hdfs + `): invalid float`},
		{errCLI, ErrInvalidInt, `conf: dfs.namenode.handler.count="many" (from -D): invalid integer`},
		{errDefault, ErrInvalidInt, `conf: fs.defaultFS="file:///" (from default): invalid integer`},
		{errUnset, ErrNotSet, `conf: no.such.key: not set`},
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.sentinel) {
			t.Errorf("err %v is not %v", tc.err, tc.sentinel)
		}
		var ve *ValueError
		if !errors.As(tc.err, &ve) {
			t.Errorf("err %v is not a *ValueError", tc.err)
		}
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("err = %v\nwant  %s", tc.err, tc.want)
		}
	}
}

func TestWriteXMLRoundTrip(t *testing.T) {
	c := Defaults().With(KeyValue{FSDefaultFS, "hdfs://127.0.0.1:9000"}, KeyValue{"odd", "a<b & \"c\"\n"},
		KeyValue{"ref", "${odd}!"})
	var buf bytes.Buffer
	if err := c.WriteXML(&buf, FSDefaultFS, "odd", "ref", "not.set"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "not.set") {
		t.Errorf("WriteXML wrote an unset key")
	}
	dir := writeDir(t, buf.String(), "")
	back := mustLoad(t, Options{Dir: dir})
	for _, k := range []string{FSDefaultFS, "odd", "ref"} {
		if back.String(k) != c.String(k) {
			t.Errorf("round trip %s: %q; want %q", k, back.String(k), c.String(k))
		}
	}
	// With no keys, everything is written.
	buf.Reset()
	if err := c.WriteXML(&buf); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "<property>"); n != len(c.Keys()) {
		t.Errorf("WriteXML() wrote %d properties; want %d", n, len(c.Keys()))
	}
}

func TestConcurrentReads(t *testing.T) {
	c := Defaults().With(KeyValue{"a", "${b}"}, KeyValue{"b", "1"})
	done := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := 0; j < 200; j++ {
				if v, err := c.Int("a"); err != nil || v != 1 {
					t.Errorf("Int(a) = %d, %v", v, err)
					return
				}
				_ = c.With(KeyValue{"a", "2"})
			}
		}()
	}
	for i := 0; i < 4; i++ {
		<-done
	}
}
