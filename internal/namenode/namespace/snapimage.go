package namespace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// The snapshot state in an image (fsimage.Header.Snapshots). uv is an
// unsigned varint, zz a zig-zag varint, str a uv length and its bytes.
//
//	format u8 (1) | counter uv
//	dirs uv × { dirID uv | snaps uv × { id uv | name str | ctime zz | maxInode uv } }
//	orphans uv × { inode }                      deleted inodes that versions keep
//	children uv × { dirID uv | ids uv × { id uv } }   an orphan directory's children
//	histories uv × { inodeID uv | orphan u8 | versions uv ×
//	                 { tag uv | inode | feats | created uv × id uv | deleted uv × id uv } }
//	exiles uv × { inodeID uv | snapshotID uv }
//
//	inode: id uv | dir u8 | name str | user str | group str | mode uv |
//	       mtime zz | atime zz | files: repl uv | blockSize zz |
//	       blocks uv × { id zz | numBytes zz | genStamp zz }
//
//	feats (format 2 on; absent in format 1, where versions kept none):
//	       xattrs uv × { ns u8 | name str | value uv (0: none, else
//	       length+1) and its bytes } |
//	       acl uv × { scope<<5 | type<<3 | perm u8 | name str }
//	       the extended attributes and the ACL entries beyond the
//	       permission bits that the version saw
//
// Ids name live inodes of the image or the orphans listed before them;
// a diff entry naming neither is an inode that no snapshot shows and is
// dropped. An empty state is encoded as nothing at all.

// errSnapImage: the snapshot state of an image does not decode or fit the tree.
var errSnapImage = errors.New("namespace: bad snapshot state in image")

// snapImageFormat is the format this build writes; it reads 1 and 2.
// Format 2 (image FormatVersion 9) adds the versions' xattrs and ACLs.
const snapImageFormat = 2

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (t *Tree) appendInodeRec(b []byte, n *inode) []byte {
	b = binary.AppendUvarint(b, n.id)
	if n.isDir() {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = appendStr(b, n.name)
	b = appendStr(b, t.userOf(n))
	b = appendStr(b, t.groupOf(n))
	b = binary.AppendUvarint(b, uint64(n.mode))
	b = binary.AppendVarint(b, n.mtime)
	b = binary.AppendVarint(b, n.atime)
	if !n.isDir() {
		b = binary.AppendUvarint(b, uint64(n.repl()))
		b = binary.AppendVarint(b, n.pref())
		b = binary.AppendUvarint(b, uint64(len(n.blocks())))
		for _, x := range n.blocks() {
			b = binary.AppendVarint(b, x.ID)
			b = binary.AppendVarint(b, x.NumBytes)
			b = binary.AppendVarint(b, x.GenStamp)
		}
	}
	return b
}

func appendVersionFeats(b []byte, v *version) []byte {
	b = binary.AppendUvarint(b, uint64(len(v.xattrs)))
	for _, x := range v.xattrs {
		b = append(b, x.NS)
		b = appendStr(b, x.Name)
		if x.Value == nil {
			b = append(b, 0)
		} else {
			b = binary.AppendUvarint(b, uint64(len(x.Value))+1)
			b = append(b, x.Value...)
		}
	}
	var es []op.ACLEntry
	if v.acl != nil {
		es = v.acl.entries
	}
	b = binary.AppendUvarint(b, uint64(len(es)))
	for _, e := range es {
		b = append(b, e.Scope<<5|e.Type<<3|e.Perm)
		b = appendStr(b, e.Name)
	}
	return b
}

// readVersionFeats reads what appendVersionFeats wrote into v.
func (t *Tree) readVersionFeats(d *snapDecoder, v *version) {
	for range d.count(3) {
		ns := d.u8()
		name := d.str()
		var val []byte
		if n := d.uv(); n > 0 {
			if n-1 > uint64(len(d.b)) {
				d.fail("xattr value of %d bytes in %d", n-1, len(d.b))
				return
			}
			val = append([]byte{}, d.b[:n-1]...)
			d.b = d.b[n-1:]
		}
		if d.err != nil {
			return
		}
		if ns > op.XAttrRaw || name == "" {
			d.fail("bad xattr %d %q", ns, name)
			return
		}
		v.xattrs = append(v.xattrs, op.XAttr{NS: ns, Name: name, Value: val})
	}
	var es []op.ACLEntry
	for range d.count(2) {
		c := d.u8()
		name := d.str()
		if d.err != nil {
			return
		}
		if c>>5 > op.ACLDefault {
			d.fail("bad ACL entry %#x", c)
			return
		}
		es = append(es, op.ACLEntry{Scope: c >> 5, Type: c >> 3 & 3, Perm: c & 7, Name: name})
	}
	if len(es) > 0 {
		v.acl = t.internACL(es)
	}
}

// encodeSnapshots encodes the snapshot state, nil when there is none.
func (t *Tree) encodeSnapshots() []byte {
	ss := t.snap
	if ss == nil || (len(ss.ids) == 0 && len(ss.hist) == 0 && ss.counter == 0) {
		return nil
	}
	b := []byte{snapImageFormat}
	b = binary.AppendUvarint(b, uint64(ss.counter))
	dirs := make([]*inode, 0, len(ss.dirs))
	for d := range ss.dirs {
		dirs = append(dirs, d)
	}
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].id < dirs[j].id })
	b = binary.AppendUvarint(b, uint64(len(dirs)))
	for _, d := range dirs {
		sd := ss.dirs[d]
		b = binary.AppendUvarint(b, d.id)
		b = binary.AppendUvarint(b, uint64(len(sd.snaps)))
		for _, s := range sd.snaps {
			b = binary.AppendUvarint(b, uint64(s.id))
			b = appendStr(b, s.name)
			b = binary.AppendVarint(b, s.ctime)
			b = binary.AppendUvarint(b, s.maxInode)
		}
	}
	hs := make([]*inode, 0, len(ss.hist))
	for n := range ss.hist {
		hs = append(hs, n)
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].id < hs[j].id })
	var orphans []*inode
	for _, n := range hs {
		if ss.hist[n].orphan {
			orphans = append(orphans, n)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(orphans)))
	for _, n := range orphans {
		b = t.appendInodeRec(b, n)
	}
	kept := func(c *inode) bool {
		h := ss.hist[c]
		return h != nil && h.orphan
	}
	var odirs []*inode
	for _, n := range orphans {
		if n.isDir() {
			odirs = append(odirs, n)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(odirs)))
	for _, d := range odirs {
		var ids []uint64
		for c := range d.dir().children.all() {
			if kept(c) {
				ids = append(ids, c.id)
			}
		}
		b = binary.AppendUvarint(b, d.id)
		b = binary.AppendUvarint(b, uint64(len(ids)))
		for _, id := range ids {
			b = binary.AppendUvarint(b, id)
		}
	}
	// Every diff entry is written; the loader drops those that are neither
	// live nor a kept orphan.
	idsOf := func(m map[*inode]struct{}) []uint64 {
		var ids []uint64
		for c := range m {
			ids = append(ids, c.id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		return ids
	}
	b = binary.AppendUvarint(b, uint64(len(hs)))
	for _, n := range hs {
		h := ss.hist[n]
		b = binary.AppendUvarint(b, n.id)
		if h.orphan {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = binary.AppendUvarint(b, uint64(len(h.vs)))
		for _, v := range h.vs {
			b = binary.AppendUvarint(b, uint64(v.tag))
			b = t.appendInodeRec(b, &v.attrs)
			b = appendVersionFeats(b, v)
			for _, m := range []map[*inode]struct{}{v.created, v.deleted} {
				ids := idsOf(m)
				b = binary.AppendUvarint(b, uint64(len(ids)))
				for _, id := range ids {
					b = binary.AppendUvarint(b, id)
				}
			}
		}
	}
	ex := make([]*inode, 0, len(ss.exiles))
	for n := range ss.exiles {
		ex = append(ex, n)
	}
	sort.Slice(ex, func(i, j int) bool { return ex[i].id < ex[j].id })
	b = binary.AppendUvarint(b, uint64(len(ex)))
	for _, n := range ex {
		b = binary.AppendUvarint(b, n.id)
		b = binary.AppendUvarint(b, uint64(ss.exiles[n]))
	}
	return b
}

// snapDecoder reads the snapshot state; the first failure sticks.
type snapDecoder struct {
	b   []byte
	err error
}

func (d *snapDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{errSnapImage}, args...)...)
	}
	d.b = nil
}

func (d *snapDecoder) uv() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *snapDecoder) zz() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *snapDecoder) u8() byte {
	if len(d.b) == 0 {
		d.fail("short")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// count reads a count of items of at least min bytes each, bounded by
// what is left.
func (d *snapDecoder) count(min int) int {
	n := d.uv()
	if n > uint64(len(d.b)/min) {
		d.fail("count %d cannot fit in %d bytes", n, len(d.b))
		return 0
	}
	return int(n)
}

func (d *snapDecoder) str() string {
	n := d.uv()
	if n > uint64(len(d.b)) {
		d.fail("string of %d bytes in %d", n, len(d.b))
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *snapDecoder) id32() int32 {
	v := d.uv()
	if v == 0 || v > maxSnapshotID {
		d.fail("bad snapshot id %d", v)
		return 0
	}
	return int32(v)
}

func (t *Tree) readInodeRec(d *snapDecoder, n *inode) {
	n.id = d.uv()
	isDir := d.u8()
	n.name = d.str()
	user, group := d.str(), d.str()
	mode := d.uv()
	n.mtime, n.atime = d.zz(), d.zz()
	if isDir > 1 || mode > 0o7777 || n.id == 0 {
		d.fail("bad inode record %d", n.id)
		return
	}
	n.mode = uint16(mode)
	n.owner = t.ownerID(user, group)
	if isDir == 1 {
		n.setDir(&dirData{})
		return
	}
	repl := d.uv()
	pref := d.zz()
	if repl > 0xffff || pref < 0 || pref > MaxBlockSize {
		d.fail("bad replication %d or block size %d", repl, pref)
		return
	}
	n.setRepl(uint16(repl))
	n.setPref(pref)
	nb := d.count(3)
	if nb > 0 {
		blocks := make([]op.Block, nb)
		for i := range blocks {
			blocks[i] = op.Block{ID: d.zz(), NumBytes: d.zz(), GenStamp: d.zz()}
		}
		n.setBlocks(blocks)
	}
}

// decodeSnapshots rebuilds the snapshot state of an image into t, whose
// live tree is complete.
func (t *Tree) decodeSnapshots(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	d := &snapDecoder{b: b}
	format := d.u8()
	if format != 1 && format != snapImageFormat {
		return fmt.Errorf("%w: unknown format %d", errSnapImage, format)
	}
	live := make(map[uint64]*inode)
	var index func(n *inode)
	index = func(n *inode) {
		live[n.id] = n
		if n.dir() != nil {
			for c := range n.dir().children.all() {
				index(c)
			}
		}
	}
	index(t.root)
	ss := t.snaps()
	counter := d.uv()
	if counter > maxSnapshotID {
		d.fail("bad counter %d", counter)
	}
	ss.counter = int32(counter)
	for range d.count(2) {
		dir := live[d.uv()]
		if d.err == nil && (dir == nil || !dir.isDir() || !t.isSnapshottable(dir) || ss.dirs[dir] != nil) {
			d.fail("snapshots of a directory that is missing or not snapshottable")
		}
		sd := &snapDir{}
		for range d.count(4) {
			s := &snapshot{id: d.id32(), name: d.str(), ctime: d.zz(), maxInode: d.uv(), root: dir}
			if d.err != nil {
				break
			}
			if s.id > ss.counter || ss.byID[s.id] != nil || s.name == "" || strings.Contains(s.name, "/") {
				d.fail("bad snapshot %d %q", s.id, s.name)
				break
			}
			if _, x := sd.byName(s.name); x != nil {
				d.fail("duplicate snapshot name %q", s.name)
				break
			}
			if k := len(sd.snaps); k > 0 && sd.snaps[k-1].id >= s.id {
				d.fail("snapshot ids out of order")
				break
			}
			sd.snaps = append(sd.snaps, s)
			ss.byID[s.id] = s
			ss.ids = append(ss.ids, s.id)
		}
		if d.err != nil {
			return d.err
		}
		if len(sd.snaps) > 0 {
			ss.dirs[dir] = sd
		}
	}
	sort.Slice(ss.ids, func(i, j int) bool { return ss.ids[i] < ss.ids[j] })
	byID := func(id uint64) *inode {
		if n := live[id]; n != nil {
			return n
		}
		return ss.orphans[id]
	}
	ss.orphans = make(map[uint64]*inode)
	for range d.count(8) {
		n := &inode{}
		t.readInodeRec(d, n)
		if d.err != nil {
			return d.err
		}
		if live[n.id] != nil || ss.orphans[n.id] != nil || n.id > t.lastInodeID {
			return fmt.Errorf("%w: orphan inode %d clashes or is out of range", errSnapImage, n.id)
		}
		ss.orphans[n.id] = n
	}
	// The orphans form a forest: each is listed under one directory at
	// most, and every one is reached from those listed under none.
	listed := make(map[*inode]bool)
	for range d.count(2) {
		dir := ss.orphans[d.uv()]
		if d.err == nil && (dir == nil || !dir.isDir() || dir.dir().children.len() > 0) {
			d.fail("children of an unknown orphan directory")
		}
		for range d.count(1) {
			c := ss.orphans[d.uv()]
			if d.err != nil {
				break
			}
			if c == nil {
				d.fail("unknown orphan child")
				break
			}
			if dir.dir().children.get(c.name) != nil || c == dir || listed[c] {
				d.fail("orphan child %q listed twice or under itself", c.name)
				break
			}
			listed[c] = true
			dir.dir().insert(c)
		}
		if d.err != nil {
			return d.err
		}
	}
	reached := 0
	var reach func(n *inode)
	reach = func(n *inode) {
		reached++
		if n.isDir() {
			for c := range n.dir().children.all() {
				reach(c)
			}
		}
	}
	for _, n := range ss.orphans {
		if !listed[n] {
			reach(n)
		}
	}
	if reached != len(ss.orphans) {
		return fmt.Errorf("%w: orphan directories below one another in a cycle", errSnapImage)
	}
	for range d.count(3) {
		n := byID(d.uv())
		orphan := d.u8()
		if d.err == nil && (n == nil || orphan > 1 || ss.hist[n] != nil || (orphan == 1) != (ss.orphans[n.id] != nil)) {
			d.fail("history of an unknown inode")
		}
		if d.err != nil {
			return d.err
		}
		h := &history{orphan: orphan == 1}
		var prev int32
		for range d.count(3) {
			v := &version{tag: int32(d.uv())}
			t.readInodeRec(d, &v.attrs)
			if format >= 2 {
				t.readVersionFeats(d, v)
			}
			if d.err == nil && (v.tag < prev || v.tag > ss.counter || v.attrs.id != n.id || (v.attrs.dir() != nil) != n.isDir()) {
				d.fail("bad version of inode %d", n.id)
			}
			prev = v.tag
			if n.isDir() {
				v.attrs.setDir(n.dir())
			}
			for k := range 2 {
				for range d.count(1) {
					c := byID(d.uv())
					if c == nil || d.err != nil {
						continue // an inode no snapshot shows
					}
					v.record(c, k == 0)
				}
			}
			if d.err != nil {
				return d.err
			}
			h.vs = append(h.vs, v)
		}
		if len(h.vs) > 0 {
			ss.hist[n] = h
			if n.isDir() {
				ss.histDirs[n] = struct{}{}
			}
		}
	}
	for range d.count(2) {
		n := byID(d.uv())
		e := d.id32()
		if d.err != nil {
			return d.err
		}
		if n == nil || ss.byID[e] == nil {
			return fmt.Errorf("%w: bad exile mark", errSnapImage)
		}
		ss.exiles[n] = e
	}
	if d.err != nil {
		return d.err
	}
	if len(d.b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", errSnapImage, len(d.b))
	}
	for _, n := range ss.orphans {
		if ss.hist[n] == nil {
			return fmt.Errorf("%w: orphan %d without history", errSnapImage, n.id)
		}
	}
	ss.orphans = nil
	t.setSnapParents()
	return nil
}

// ImageSnapshot is one snapshot as an image records it.
type ImageSnapshot struct {
	DirID uint64 // the snapshottable directory's inode id
	ID    int32
	Name  string
	Ctime int64
}

// ImageSnapshots reads the snapshot counter and the snapshots from the
// snapshot state of an image (fsimage.Header.Snapshots), for the offline
// image viewer; the rest of the state is not read.
func ImageSnapshots(b []byte) (counter int32, snaps []ImageSnapshot, err error) {
	if len(b) == 0 {
		return 0, nil, nil
	}
	d := &snapDecoder{b: b}
	if f := d.u8(); f != 1 && f != snapImageFormat {
		return 0, nil, fmt.Errorf("%w: unknown format %d", errSnapImage, f)
	}
	c := d.uv()
	if c > maxSnapshotID {
		d.fail("bad counter %d", c)
	}
	for range d.count(2) {
		dir := d.uv()
		for range d.count(4) {
			s := ImageSnapshot{DirID: dir, ID: d.id32(), Name: d.str(), Ctime: d.zz()}
			d.uv() // the last inode id then
			if d.err != nil {
				break
			}
			snaps = append(snaps, s)
		}
	}
	if d.err != nil {
		return 0, nil, d.err
	}
	return int32(c), snaps, nil
}
