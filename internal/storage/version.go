package storage

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// Storage types, the value of the VERSION file's storageType key (Hadoop's
// HdfsServerConstants.NodeType names). A block-pool VERSION file has none.
const (
	StorageTypeNameNode    = "NAME_NODE"
	StorageTypeJournalNode = "JOURNAL_NODE"
	StorageTypeDataNode    = "DATA_NODE"
	StorageTypeBlockPool   = "" // current/BP-…/current/VERSION of a DataNode volume
)

// DataNode layout versions (Hadoop's numbers and meanings, its
// DataNodeLayoutVersion features). Part of the on-disk format. A DataNode
// reads only DataNodeLayoutVersion and upgrades a block pool from any
// older one listed here; see the package doc.
const (
	// DataNodeLayoutFirst (-55) is the first DataNode-only layout: the
	// finalized replicas of a block pool sit anywhere in a tree of
	// subdir<N> directories under finalized/ (Hadoop filled each with at
	// most dfs.datanode.numblocks entries).
	DataNodeLayoutFirst int32 = -55
	// DataNodeLayoutBlockID (-56): a finalized replica's directory follows
	// from its block id, finalized/subdir<(id>>16)&0xFF>/subdir<(id>>8)&0xFF>.
	DataNodeLayoutBlockID int32 = -56
	// DataNodeLayoutBlockID32 (-57): the same with 32×32 directories,
	// finalized/subdir<(id>>16)&0x1F>/subdir<(id>>8)&0x1F>. Hadoop 3.x's.
	DataNodeLayoutBlockID32 int32 = -57

	// DataNodeLayoutVersion is the layout this DataNode writes and reads,
	// Hadoop 3.x's: DataNode volumes are HDFS's own format. A new layout
	// takes the next lower number (-58) and an upgrade from every older one.
	DataNodeLayoutVersion = DataNodeLayoutBlockID32
	// OldestDataNodeLayoutVersion is the oldest layout a DataNode upgrades
	// from; anything older needs an older release first.
	OldestDataNodeLayoutVersion = DataNodeLayoutFirst
	// NameNodeLayoutVersion is the version of our own NameNode image and edit
	// formats, deliberately outside Hadoop's range so neither side mistakes the
	// other's directory for its own. Also used for JournalNode directories,
	// which hold our edit segments. A new format version takes the next lower
	// number (-1002, …).
	NameNodeLayoutVersion int32 = -1001
)

// Property is one key=value pair of a VERSION file.
type Property struct {
	Key, Value string
}

// Version is the contents of a VERSION file. Which fields are meaningful
// depends on StorageType (see the package doc); keys this package does not know
// are kept in Extra, in file order, and written back unchanged.
type Version struct {
	LayoutVersion int32
	NamespaceID   int32
	ClusterID     string
	CTime         int64
	StorageType   string // StorageTypeNameNode, …; "" for a block pool
	BlockPoolID   string
	StorageID     string // DataNode volume
	DatanodeUUID  string // DataNode volume
	Extra         []Property
}

// Version file keys (Hadoop's names). Part of the on-disk format.
const (
	keyLayoutVersion = "layoutVersion"
	keyNamespaceID   = "namespaceID"
	keyClusterID     = "clusterID"
	keyCTime         = "cTime"
	keyStorageType   = "storageType"
	keyBlockPoolID   = "blockpoolID"
	keyStorageID     = "storageID"
	keyDatanodeUUID  = "datanodeUuid"
)

// keysFor returns the keys a VERSION file of the given storage type carries, in
// the order they are written.
func keysFor(storageType string) ([]string, error) {
	switch storageType {
	case StorageTypeNameNode:
		return []string{keyNamespaceID, keyClusterID, keyCTime, keyStorageType, keyBlockPoolID, keyLayoutVersion}, nil
	case StorageTypeJournalNode:
		return []string{keyNamespaceID, keyClusterID, keyCTime, keyStorageType, keyLayoutVersion}, nil
	case StorageTypeDataNode:
		return []string{keyStorageID, keyClusterID, keyCTime, keyDatanodeUUID, keyStorageType, keyLayoutVersion}, nil
	case StorageTypeBlockPool:
		return []string{keyNamespaceID, keyCTime, keyBlockPoolID, keyLayoutVersion}, nil
	}
	return nil, fmt.Errorf("unknown storage type %q", storageType)
}

// javaDateLayout is java.util.Date.toString's format, used for the comment line.
const javaDateLayout = "Mon Jan 02 15:04:05 MST 2006"

// Validate checks that v has every field its storage type requires. name is
// used in the error (usually the file's path).
func (v *Version) Validate(name string) error {
	keys, err := keysFor(v.StorageType)
	if err != nil {
		return fmt.Errorf("%w %s: field %s: %v", ErrInvalidVersion, name, keyStorageType, err)
	}
	bad := func(key, why string) error {
		return fmt.Errorf("%w %s: field %s: %s", ErrInvalidVersion, name, key, why)
	}
	for _, k := range keys {
		switch k {
		case keyLayoutVersion:
			if v.LayoutVersion >= 0 {
				return bad(k, fmt.Sprintf("layout version %d is not negative", v.LayoutVersion))
			}
		case keyNamespaceID:
			if v.NamespaceID == 0 {
				return bad(k, "namespace id is 0")
			}
		case keyClusterID:
			if v.ClusterID == "" {
				return bad(k, "empty")
			}
		case keyBlockPoolID:
			if v.BlockPoolID == "" {
				return bad(k, "empty")
			}
		case keyStorageID:
			if v.StorageID == "" {
				return bad(k, "empty")
			}
		case keyDatanodeUUID:
			if v.DatanodeUUID == "" {
				return bad(k, "empty")
			}
		}
	}
	own := map[string]bool{keyStorageType: true}
	for _, k := range keys {
		own[k] = true
	}
	for _, p := range v.Extra {
		if own[p.Key] {
			return bad(p.Key, "repeated in Extra")
		}
		if p.Key == "" {
			return bad(p.Key, "empty key in Extra")
		}
	}
	return nil
}

// CheckType returns an error naming file name unless v is of storage type
// want: a reader of a NameNode directory must not accept, say, a block-pool
// VERSION file (which parses fine on its own).
func (v *Version) CheckType(name, want string) error {
	if v.StorageType != want {
		return fmt.Errorf("%w %s: field %s: %q, want %q", ErrInvalidVersion, name, keyStorageType, v.StorageType, want)
	}
	return nil
}

// Marshal returns the file text for v, with a comment line dated now.
func (v *Version) Marshal(now time.Time) ([]byte, error) {
	if err := v.Validate("VERSION"); err != nil {
		return nil, err
	}
	keys, _ := keysFor(v.StorageType)
	var b bytes.Buffer
	b.WriteString("#")
	b.WriteString(now.Format(javaDateLayout))
	b.WriteString("\n")
	put := func(k, val string) {
		writeEscaped(&b, k, true)
		b.WriteByte('=')
		writeEscaped(&b, val, false)
		b.WriteByte('\n')
	}
	for _, k := range keys {
		var val string
		switch k {
		case keyLayoutVersion:
			val = strconv.FormatInt(int64(v.LayoutVersion), 10)
		case keyNamespaceID:
			val = strconv.FormatInt(int64(v.NamespaceID), 10)
		case keyClusterID:
			val = v.ClusterID
		case keyCTime:
			val = strconv.FormatInt(v.CTime, 10)
		case keyStorageType:
			val = v.StorageType
		case keyBlockPoolID:
			val = v.BlockPoolID
		case keyStorageID:
			val = v.StorageID
		case keyDatanodeUUID:
			val = v.DatanodeUUID
		}
		put(k, val)
	}
	for _, p := range v.Extra {
		put(p.Key, p.Value)
	}
	return b.Bytes(), nil
}

// ParseVersion parses VERSION file text; name is used in errors. The storage
// type decides which fields must be present; a field of another storage type
// that happens to be present is kept in Extra.
func ParseVersion(name string, data []byte) (*Version, error) {
	props, err := parseProperties(data)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrInvalidVersion, name, err)
	}
	m := make(map[string]string, len(props))
	for _, p := range props {
		m[p.Key] = p.Value // the last occurrence wins, as in java.util.Properties
	}
	v := &Version{StorageType: m[keyStorageType]}
	keys, err := keysFor(v.StorageType)
	if err != nil {
		return nil, fmt.Errorf("%w %s: field %s: %v", ErrInvalidVersion, name, keyStorageType, err)
	}
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
		val, ok := m[k]
		if !ok {
			return nil, fmt.Errorf("%w %s: field %s: missing", ErrInvalidVersion, name, k)
		}
		bad := func(err error) error {
			return fmt.Errorf("%w %s: field %s: %q: %v", ErrInvalidVersion, name, k, val, err)
		}
		switch k {
		case keyLayoutVersion:
			n, err := strconv.ParseInt(val, 10, 32)
			if err != nil {
				return nil, bad(err)
			}
			v.LayoutVersion = int32(n)
		case keyNamespaceID:
			n, err := strconv.ParseInt(val, 10, 32)
			if err != nil {
				return nil, bad(err)
			}
			v.NamespaceID = int32(n)
		case keyCTime:
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return nil, bad(err)
			}
			v.CTime = n
		case keyClusterID:
			v.ClusterID = val
		case keyBlockPoolID:
			v.BlockPoolID = val
		case keyStorageID:
			v.StorageID = val
		case keyDatanodeUUID:
			v.DatanodeUUID = val
		}
	}
	seen := make(map[string]bool, len(props))
	for _, p := range props {
		if want[p.Key] || p.Key == keyStorageType || seen[p.Key] {
			continue
		}
		seen[p.Key] = true
		v.Extra = append(v.Extra, Property{Key: p.Key, Value: m[p.Key]})
	}
	if err := v.Validate(name); err != nil {
		return nil, err
	}
	return v, nil
}

// ReadVersion reads and validates the VERSION file at path.
func ReadVersion(fsys vfs.FS, path string) (*Version, error) {
	data, err := ReadFile(fsys, path)
	if err != nil {
		return nil, err
	}
	return ParseVersion(path, data)
}

// WriteVersion atomically replaces the VERSION file at path with v.
func WriteVersion(fsys vfs.FS, path string, v *Version, now time.Time) error {
	if err := v.Validate(path); err != nil {
		return err
	}
	data, err := v.Marshal(now)
	if err != nil {
		return err
	}
	return AtomicWriteFile(fsys, path, data)
}

// writeEscaped writes s the way java.util.Properties.store does: backslash
// escapes for \ = : # ! and control characters, every space in a key and a
// leading space in a value escaped, and non-ASCII as \uXXXX (UTF-16).
func writeEscaped(b *bytes.Buffer, s string, isKey bool) {
	for i, r := range s {
		switch {
		case r == ' ':
			if i == 0 || isKey {
				b.WriteByte('\\')
			}
			b.WriteByte(' ')
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\\', r == '=', r == ':', r == '#', r == '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(b, `\u%04X\u%04X`, r1, r2)
			} else {
				fmt.Fprintf(b, `\u%04X`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
}

// parseProperties parses java.util.Properties text: comment lines (# or !),
// blank lines, line continuations (an odd number of trailing backslashes), key
// terminated by an unescaped '=', ':' or white space, and backslash escapes.
func parseProperties(data []byte) ([]Property, error) {
	if !utf8.Valid(data) {
		// Properties files are ISO 8859-1; Hadoop writes pure ASCII. Accept
		// Latin-1 by widening each byte.
		var sb strings.Builder
		for _, c := range data {
			sb.WriteRune(rune(c))
		}
		data = []byte(sb.String())
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	var props []Property
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for endsWithContinuation(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		if endsWithContinuation(line) {
			line = line[:len(line)-1]
		}
		// Split the key off.
		k := 0
		for k < len(line) {
			c := line[k]
			if c == '\\' {
				k += 2
				continue
			}
			if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
				break
			}
			k++
		}
		if k > len(line) {
			k = len(line)
		}
		rawKey := line[:k]
		rest := strings.TrimLeft(line[k:], " \t\f")
		if rest != "" && (rest[0] == '=' || rest[0] == ':') {
			rest = strings.TrimLeft(rest[1:], " \t\f")
		}
		key, err := unescape(rawKey)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", lineNo, err)
		}
		val, err := unescape(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", lineNo, err)
		}
		props = append(props, Property{Key: key, Value: val})
	}
	return props, nil
}

func endsWithContinuation(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var u []uint16
	var sb strings.Builder
	flush := func() {
		if len(u) > 0 {
			sb.WriteString(string(utf16.Decode(u)))
			u = u[:0]
		}
	}
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			flush()
			r, n := utf8.DecodeRuneInString(s[i:])
			sb.WriteRune(r)
			i += n
			continue
		}
		if i+1 >= len(s) {
			i++
			continue
		}
		c := s[i+1]
		switch c {
		case 'u':
			if i+6 > len(s) {
				return "", fmt.Errorf("malformed \\u escape")
			}
			n, err := strconv.ParseUint(s[i+2:i+6], 16, 16)
			if err != nil {
				return "", fmt.Errorf("malformed \\u escape %q", s[i:i+6])
			}
			u = append(u, uint16(n))
			i += 6
			continue
		case 't':
			flush()
			sb.WriteByte('\t')
		case 'n':
			flush()
			sb.WriteByte('\n')
		case 'r':
			flush()
			sb.WriteByte('\r')
		case 'f':
			flush()
			sb.WriteByte('\f')
		default:
			flush()
			r, n := utf8.DecodeRuneInString(s[i+1:])
			sb.WriteRune(r)
			i += 1 + n
			continue
		}
		i += 2
	}
	flush()
	return sb.String(), nil
}
