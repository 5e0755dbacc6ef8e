package conf

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Site file names read from the configuration directory, in load order.
const (
	CoreSiteFile = "core-site.xml"
	HDFSSiteFile = "hdfs-site.xml"
)

// Source names for values that do not come from a file.
const (
	SourceDefault  = "default"
	SourceOverride = "-D"
)

// KeyValue is one key=value pair, typically from -D.
type KeyValue struct{ Key, Value string }

// Options says where Load reads from.
type Options struct {
	// Dir holds core-site.xml and hdfs-site.xml; "" means defaults only.
	// Missing site files are fine; a Dir that does not exist is an error.
	Dir string
	// Overrides are applied after the files, in order, with source "-D".
	Overrides []KeyValue
	// Env looks up ${env.NAME}; nil means os.Getenv.
	Env func(string) string
}

// entry is one set key.
type entry struct {
	value  string // raw, unexpanded
	source string
	final  bool
}

// Conf is a loaded configuration. It is immutable after Load, Defaults or
// With returns it and safe for concurrent use.
type Conf struct {
	props    map[string]entry
	units    map[string]time.Duration // shared, read-only
	env      func(string) string
	warnings []string
	dir      string // Options.Dir of Load
}

// Defaults returns the built-in defaults only, expanding ${env.*} with
// os.Getenv.
func Defaults() *Conf {
	return newDefaults(os.Getenv)
}

func newDefaults(env func(string) string) *Conf {
	table := defaultTable()
	c := &Conf{
		props: make(map[string]entry, len(table)),
		units: make(map[string]time.Duration),
		env:   env,
	}
	for _, d := range table {
		c.props[d.key] = entry{value: d.def, source: SourceDefault}
		if d.unit != 0 {
			c.units[d.key] = d.unit
		}
	}
	return c
}

// Load builds a configuration: defaults, then Dir/core-site.xml, then
// Dir/hdfs-site.xml, then the overrides. A key marked final in a file keeps
// its value against the files after it (the attempt is recorded in
// Warnings); the overrides (-D) replace any value, final or not, as
// Hadoop's Configuration.set does. Load fails on
// a malformed file and on a value whose ${var} expansion does not finish.
func Load(o Options) (*Conf, error) {
	env := o.Env
	if env == nil {
		env = os.Getenv
	}
	c := newDefaults(env)
	c.dir = o.Dir
	if o.Dir != "" {
		st, err := os.Stat(o.Dir)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNoConfDir, o.Dir, err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("%w: %s is not a directory", ErrNoConfDir, o.Dir)
		}
		for _, name := range []string{CoreSiteFile, HDFSSiteFile} {
			path := filepath.Join(o.Dir, name)
			if err := c.loadFile(path); err != nil {
				return nil, err
			}
		}
	}
	for _, kv := range o.Overrides {
		c.override(kv.Key, kv.Value)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return c, nil
}

// loadFile applies one site file; a missing file is skipped.
func (c *Conf) loadFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("conf: %w", err)
	}
	defer f.Close()
	props, warnings, err := parseXML(f, path)
	if err != nil {
		return err
	}
	c.warnings = append(c.warnings, warnings...)
	for _, p := range props {
		c.set(p.name, p.value, path, p.final)
	}
	return nil
}

// set sets key during construction, before the Conf is shared. A final key keeps its value; a differing new value is recorded as a
// warning.
func (c *Conf) set(key, value, source string, final bool) {
	key = strings.TrimSpace(key)
	if old, ok := c.props[key]; ok && old.final {
		if old.value != value {
			c.warnings = append(c.warnings, fmt.Sprintf(
				"%s: attempt to override final parameter %s (set in %s); ignoring", source, key, old.source))
		}
		return
	}
	c.props[key] = entry{value: value, source: source, final: final}
}

// override sets key from the command line or from With: the value replaces
// whatever is there, even a final one, which stays marked final.
func (c *Conf) override(key, value string) {
	key = strings.TrimSpace(key)
	old := c.props[key]
	c.props[key] = entry{value: value, source: SourceOverride, final: old.final}
}

// check expands every key and reports the first expansion that does not
// finish.
func (c *Conf) check() error {
	for _, k := range c.Keys() {
		if _, err := c.expand(k, c.props[k].value); err != nil {
			return err
		}
	}
	return nil
}

// With returns a copy of c with kv applied as -D overrides. Final keys keep
// their values; the attempts are recorded in the copy's Warnings.
func (c *Conf) With(kv ...KeyValue) *Conf {
	n := &Conf{
		props:    make(map[string]entry, len(c.props)+len(kv)),
		units:    c.units,
		env:      c.env,
		warnings: append([]string(nil), c.warnings...),
		dir:      c.dir,
	}
	for k, e := range c.props {
		n.props[k] = e
	}
	for _, p := range kv {
		n.override(p.Key, p.Value)
	}
	return n
}

// ParseKeyValue parses a -D argument "key=value". The key is trimmed and
// must not be empty; the value is kept as given and may be empty.
func ParseKeyValue(s string) (KeyValue, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return KeyValue{}, fmt.Errorf("%w: %q", ErrBadOverride, s)
	}
	return KeyValue{Key: k, Value: v}, nil
}

// Get returns the expanded value of key and whether it is set. A key set to
// the empty string is set.
func (c *Conf) Get(key string) (string, bool) {
	e, ok := c.props[key]
	if !ok {
		return "", false
	}
	v, _ := c.expand(key, e.value)
	return v, true
}

// String returns the expanded value of key, "" when unset.
func (c *Conf) String(key string) string {
	v, _ := c.Get(key)
	return v
}

// Source returns where key's value came from: a file path, "-D" or
// "default"; "" when unset.
func (c *Conf) Source(key string) string {
	return c.props[key].source
}

// Keys returns every set key, sorted, defaults included.
func (c *Conf) Keys() []string {
	keys := make([]string, 0, len(c.props))
	for k := range c.props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Warnings returns the warnings recorded while loading: ignored elements
// and properties, and attempts to override final keys.
func (c *Conf) Warnings() []string {
	return append([]string(nil), c.warnings...)
}

// Strings returns key's value split at commas and newlines, each part
// trimmed, empty parts dropped (Hadoop getTrimmedStrings). Nil when unset.
func (c *Conf) Strings(key string) []string {
	return splitTrimmed(c.String(key))
}

func splitTrimmed(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' }) {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// typed returns key's trimmed expanded value for a typed getter.
func (c *Conf) typed(key string) (string, *ValueError) {
	e, ok := c.props[key]
	if !ok {
		return "", &ValueError{Key: key, Err: ErrNotSet}
	}
	v, err := c.expand(key, e.value)
	if err != nil {
		return "", &ValueError{Key: key, Value: e.value, Source: e.source, Err: err}
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return "", &ValueError{Key: key, Value: v, Source: e.source, Err: ErrNotSet}
	}
	return v, nil
}

func (c *Conf) valueError(key, value string, err error) error {
	return &ValueError{Key: key, Value: value, Source: c.props[key].source, Err: err}
}

// Int returns key as an int64. Decimal and 0x-prefixed hex are accepted,
// with an optional sign (Hadoop getLong).
func (c *Conf) Int(key string) (int64, error) {
	v, verr := c.typed(key)
	if verr != nil {
		return 0, verr
	}
	n, ok := parseInt(v, 64)
	if !ok {
		return 0, c.valueError(key, v, ErrInvalidInt)
	}
	return n, nil
}

// Int32 returns key as an int32 (Hadoop getInt).
func (c *Conf) Int32(key string) (int32, error) {
	v, verr := c.typed(key)
	if verr != nil {
		return 0, verr
	}
	n, ok := parseInt(v, 32)
	if !ok {
		return 0, c.valueError(key, v, ErrInvalidInt)
	}
	return int32(n), nil
}

func parseInt(v string, bits int) (int64, bool) {
	neg := false
	s := v
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	} else if strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	base := 10
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		base, s = 16, s[2:]
	}
	if s == "" || s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	u, err := strconv.ParseUint(s, base, bits)
	if err != nil {
		return 0, false
	}
	limit := uint64(1) << (bits - 1)
	if neg {
		if u > limit {
			return 0, false
		}
		return -int64(u), true
	}
	if u >= limit {
		return 0, false
	}
	return int64(u), true
}

// Bool returns key as a bool: "true" or "false", any case, trimmed.
func (c *Conf) Bool(key string) (bool, error) {
	v, verr := c.typed(key)
	if verr != nil {
		return false, verr
	}
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, c.valueError(key, v, ErrInvalidBool)
}

// Float returns key as a float64. A trailing Java type suffix (f, F, d, D)
// as in "0.999f" is accepted.
func (c *Conf) Float(key string) (float64, error) {
	v, verr := c.typed(key)
	if verr != nil {
		return 0, verr
	}
	s := v
	if n := len(s); n > 1 && strings.ContainsRune("fFdD", rune(s[n-1])) {
		s = s[:n-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, c.valueError(key, v, ErrInvalidFloat)
	}
	return f, nil
}

// timeSuffixes lists the getTimeDuration units; the two-letter suffixes
// come first so "ms" is not read as "s".
func timeSuffixes() []struct {
	suffix string
	unit   time.Duration
} {
	return []struct {
		suffix string
		unit   time.Duration
	}{
		{"ns", time.Nanosecond},
		{"us", time.Microsecond},
		{"ms", time.Millisecond},
		{"s", time.Second},
		{"m", time.Minute},
		{"h", time.Hour},
		{"d", 24 * time.Hour},
	}
}

// DefaultUnit returns the unit Duration applies to a bare number for key:
// the unit recorded in the key table, else milliseconds.
func (c *Conf) DefaultUnit(key string) time.Duration {
	if u, ok := c.units[key]; ok {
		return u
	}
	return time.Millisecond
}

// Duration returns key as a time.Duration. The value is an integer with an
// optional unit suffix ns, us, ms, s, m, h or d (any case); a bare number is
// in the key's default unit (Hadoop getTimeDuration).
func (c *Conf) Duration(key string) (time.Duration, error) {
	v, verr := c.typed(key)
	if verr != nil {
		return 0, verr
	}
	d, ok := parseDuration(v, c.DefaultUnit(key))
	if !ok {
		return 0, c.valueError(key, v, ErrInvalidDuration)
	}
	return d, nil
}

func parseDuration(v string, def time.Duration) (time.Duration, bool) {
	s := strings.ToLower(v)
	unit := def
	for _, ts := range timeSuffixes() {
		if strings.HasSuffix(s, ts.suffix) {
			s, unit = s[:len(s)-len(ts.suffix)], ts.unit
			break
		}
	}
	n, ok := parseInt(s, 64)
	if !ok || strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "-0x") || strings.HasPrefix(s, "+0x") {
		return 0, false
	}
	if n > math.MaxInt64/int64(unit) || n < math.MinInt64/int64(unit) {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// Size returns key as a byte count. The value is an integer with an
// optional binary suffix k, m, g, t, p or e (any case): "128m", "1g"
// (Hadoop getLongBytes).
func (c *Conf) Size(key string) (int64, error) {
	v, verr := c.typed(key)
	if verr != nil {
		return 0, verr
	}
	n, ok := parseSize(v)
	if !ok {
		return 0, c.valueError(key, v, ErrInvalidSize)
	}
	return n, nil
}

func parseSize(v string) (int64, bool) {
	s := strings.ToLower(v)
	if s == "" {
		return 0, false
	}
	shift := 0
	switch s[len(s)-1] {
	case 'k':
		shift = 10
	case 'm':
		shift = 20
	case 'g':
		shift = 30
	case 't':
		shift = 40
	case 'p':
		shift = 50
	case 'e':
		shift = 60
	}
	if shift != 0 {
		s = s[:len(s)-1]
	}
	if s == "" || strings.Contains(s, "x") {
		return 0, false
	}
	n, ok := parseInt(s, 64)
	if !ok {
		return 0, false
	}
	mul := int64(1) << shift
	if n > math.MaxInt64/mul || n < math.MinInt64/mul {
		return 0, false
	}
	return n * mul, true
}

// ParseSize reads a size the way Size does for a configuration value: a byte
// count with an optional binary suffix (k, m, g, t, p, e), e.g. "128m".
func ParseSize(v string) (int64, error) {
	n, ok := parseSize(strings.TrimSpace(v))
	if !ok {
		return 0, fmt.Errorf("%w: %q", ErrInvalidSize, v)
	}
	return n, nil
}

// LocalDir turns a storage directory setting — a file:// URI ("file:///data/1",
// "file:/data/1") or an absolute path — into the local path, as Hadoop reads
// dfs.namenode.name.dir and dfs.datanode.data.dir entries.
func LocalDir(v string) (string, error) {
	if !strings.Contains(v, ":") {
		if !strings.HasPrefix(v, "/") {
			return "", fmt.Errorf("%q is not an absolute path", v)
		}
		return v, nil
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", fmt.Errorf("%q: %v", v, err)
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("%q: only file:// directories are supported", v)
	}
	if u.Path == "" || !strings.HasPrefix(u.Path, "/") {
		return "", fmt.Errorf("%q has no absolute path", v)
	}
	return u.Path, nil
}
