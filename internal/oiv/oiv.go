// Package oiv is the offline image viewer behind `hdfs oiv`: it reads an
// image with package fsimage's Reader (never changing its format) and
// writes it as Hadoop's oiv processors do — XML, Delimited text and the
// FileDistribution table — turns such XML back into an image (ReverseXML)
// that the NameNode loads, and serves a loaded image read-only over
// WebHDFS (Image, the Web processor). Pure: readers, writers and an
// http.Handler; no files, no listening; safe for concurrent use.
//
// The XML is shaped as Hadoop's PBImageXmlWriter output, with the sections
// and elements our image has:
//
//	<?xml version="1.0"?>
//	<fsimage><version><layoutVersion>L</layoutVersion><onDiskVersion>1</onDiskVersion><oivRevision>…</oivRevision></version>
//	<NameSection><namespaceId>…</namespaceId><genstampV2>…</genstampV2><lastAllocatedBlockId>…</lastAllocatedBlockId><txid>…</txid></NameSection>
//	<INodeSection><lastInodeId>…</lastInodeId><numInodes>…</numInodes><inode><id>16385</id><type>DIRECTORY</type><name></name><mtime>…</mtime><permission>u:g:0755</permission><nsquota>-1</nsquota><dsquota>-1</dsquota></inode>
//	<inode><id>16386</id><type>FILE</type><name>f</name><replication>3</replication><mtime>…</mtime><atime>…</atime><preferredBlockSize>…</preferredBlockSize><permission>u:g:0644</permission><blocks><block><id>…</id><genstamp>…</genstamp><numBytes>…</numBytes></block>
//	</blocks>
//	</inode>
//	</INodeSection>
//	<INodeDirectorySection><directory><parent>16385</parent><child>16386</child></directory>
//	</INodeDirectorySection>
//	<FileUnderConstructionSection><inode><id>…</id><path>/f</path></inode>
//	</FileUnderConstructionSection>
//	</fsimage>
//
// Inodes come in the image's order (parents first). A directory's atime is
// written only when it is not 0, and quotas of a file only when set, so
// that ReverseXML rebuilds the image byte for byte. Names and strings are
// escaped by package xmltext.
package oiv

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/version"
	"github.com/hdfsgo/hdfsgo/internal/xmltext"
)

// walk reads every inode of the image in r and calls fn with it and its
// full path (the inode is reused by the Reader: fn must copy what it
// keeps). Only directories' paths are kept, so memory grows with the
// number of directories, not files.
func walk(r io.Reader, fn func(h fsimage.Header, in *fsimage.Inode, path string) error) (fsimage.Header, error) {
	ir, h, err := fsimage.NewReader(r)
	if err != nil {
		return h, err
	}
	dirs := map[uint64]string{}
	for {
		in, err := ir.Next()
		if err == io.EOF {
			return h, nil
		}
		if err != nil {
			return h, err
		}
		var p string
		if in.ParentID == 0 {
			p = "/"
		} else {
			parent, ok := dirs[in.ParentID]
			if !ok {
				return h, fmt.Errorf("oiv: inode %d names parent %d, which is not a directory before it", in.ID, in.ParentID)
			}
			if parent == "/" {
				p = "/" + string(in.Name)
			} else {
				p = parent + "/" + string(in.Name)
			}
		}
		if in.IsDir {
			dirs[in.ID] = p
		}
		if err := fn(h, in, p); err != nil {
			return h, err
		}
	}
}

// permString is Hadoop's "user:group:0755"; a colon inside a name is
// escaped so that the three parts split back.
func permString(u, g string, mode uint16) string {
	esc := func(s string) string { return strings.ReplaceAll(xmltext.Escape(s), ":", `\003a;`) }
	return esc(u) + ":" + esc(g) + ":" + fmt.Sprintf("%04o", mode)
}

type xw struct{ *bufio.Writer }

func (w xw) o(name string, v any) {
	w.WriteString("<" + name + ">")
	switch v := v.(type) {
	case string:
		w.WriteString(v)
	case int64:
		w.WriteString(strconv.FormatInt(v, 10))
	case uint64:
		w.WriteString(strconv.FormatUint(v, 10))
	case int:
		w.WriteString(strconv.Itoa(v))
	}
	w.WriteString("</" + name + ">")
}

// XML writes the image read from r as XML (see the package doc).
func XML(r io.Reader, out io.Writer) error {
	w := xw{bufio.NewWriterSize(out, 256<<10)}
	type ucEntry struct {
		id   uint64
		path string
	}
	var ucs []ucEntry
	var snapshottable []uint64
	// children of each directory with any, in the order directories came.
	var order []uint64
	kids := map[uint64][]uint64{}
	started := false
	var snapState []byte
	_, err := walk(r, func(h fsimage.Header, in *fsimage.Inode, path string) error {
		if !started {
			started = true
			snapState = h.Snapshots
			w.WriteString("<?xml version=\"1.0\"?>\n<fsimage><version>")
			w.o("layoutVersion", int64(h.LayoutVersion))
			w.o("onDiskVersion", uint64(fsimage.FormatVersion))
			w.o("oivRevision", xmltext.Escape(version.String()))
			w.WriteString("</version>\n<NameSection>")
			w.o("namespaceId", int64(h.NamespaceID))
			w.o("genstampV2", h.GenStamp)
			w.o("lastAllocatedBlockId", h.LastBlockID)
			w.o("txid", h.TxID)
			w.WriteString("</NameSection>\n<INodeSection>")
			w.o("lastInodeId", h.LastInodeID)
			w.o("numInodes", h.NumInodes)
			w.WriteString("\n")
		}
		if in.ParentID != 0 {
			if _, ok := kids[in.ParentID]; !ok {
				order = append(order, in.ParentID)
			}
			kids[in.ParentID] = append(kids[in.ParentID], in.ID)
		}
		w.WriteString("<inode>")
		w.o("id", in.ID)
		if in.IsDir {
			w.o("type", "DIRECTORY")
		} else {
			w.o("type", "FILE")
		}
		w.o("name", xmltext.Escape(string(in.Name)))
		if in.IsDir {
			w.o("mtime", in.Mtime)
			if in.Atime != 0 {
				w.o("atime", in.Atime)
			}
			w.o("permission", permString(in.Perm.User, in.Perm.Group, in.Perm.Mode))
			w.o("nsquota", in.NsQuota)
			w.o("dsquota", in.DsQuota)
			w.writeFeatures(in)
			w.WriteString("</inode>\n")
			if in.Snapshottable {
				snapshottable = append(snapshottable, in.ID)
			}
			return nil
		}
		w.o("replication", int64(in.Replication))
		w.o("mtime", in.Mtime)
		w.o("atime", in.Atime)
		w.o("preferredBlockSize", in.BlockSize)
		w.o("permission", permString(in.Perm.User, in.Perm.Group, in.Perm.Mode))
		if in.NsQuota != -1 || in.DsQuota != -1 {
			w.o("nsquota", in.NsQuota)
			w.o("dsquota", in.DsQuota)
		}
		if len(in.Blocks) > 0 {
			w.WriteString("<blocks>")
			for _, b := range in.Blocks {
				w.WriteString("<block>")
				w.o("id", b.ID)
				w.o("genstamp", b.GenStamp)
				w.o("numBytes", b.NumBytes)
				w.WriteString("</block>\n")
			}
			w.WriteString("</blocks>\n")
		}
		if in.UC != nil {
			w.WriteString("<file-under-construction>")
			w.o("clientName", xmltext.Escape(in.UC.ClientName))
			w.o("clientMachine", xmltext.Escape(in.UC.ClientMachine))
			w.WriteString("</file-under-construction>\n")
			ucs = append(ucs, ucEntry{in.ID, path})
		}
		w.writeFeatures(in)
		w.WriteString("</inode>\n")
		return nil
	})
	if err != nil {
		w.Flush()
		return err
	}
	w.WriteString("</INodeSection>\n")
	counter, snaps, err := namespace.ImageSnapshots(snapState)
	if err != nil {
		w.Flush()
		return err
	}
	if len(snapshottable) > 0 || counter > 0 {
		w.WriteString("<SnapshotSection>")
		w.o("snapshotCounter", int64(counter))
		w.o("numSnapshots", len(snaps))
		w.WriteString("<snapshottableDir>")
		for _, id := range snapshottable {
			w.o("dir", id)
		}
		w.WriteString("</snapshottableDir>")
		for _, s := range snaps {
			w.WriteString("<snapshot>")
			w.o("id", int64(s.ID))
			w.WriteString("<root>")
			w.o("id", s.DirID)
			w.o("type", "DIRECTORY")
			w.o("name", xmltext.Escape(s.Name))
			w.o("mtime", s.Ctime)
			w.WriteString("</root></snapshot>")
		}
		w.WriteString("</SnapshotSection>\n")
	}
	w.WriteString("<INodeDirectorySection>")
	for _, p := range order {
		w.WriteString("<directory>")
		w.o("parent", p)
		for _, c := range kids[p] {
			w.o("child", c)
		}
		w.WriteString("</directory>\n")
	}
	w.WriteString("</INodeDirectorySection>\n<FileUnderConstructionSection>")
	for _, u := range ucs {
		w.WriteString("<inode>")
		w.o("id", u.id)
		w.o("path", xmltext.Escape(u.path))
		w.WriteString("</inode>\n")
	}
	w.WriteString("</FileUnderConstructionSection>\n</fsimage>\n")
	return w.Flush()
}

// delimitedHeader names the Delimited output's columns, its first line.
var delimitedHeader = []string{"Path", "Replication", "ModificationTime", "AccessTime", "PreferredBlockSize",
	"BlocksCount", "FileSize", "NSQUOTA", "DSQUOTA", "Permission", "UserName", "GroupName"}

// modeString is FsPermission's rwx form, with the sticky bit as t or T.
func modeString(dir bool, mode uint16) string {
	b := []byte("-rwxrwxrwx")
	if dir {
		b[0] = 'd'
	}
	for i := 0; i < 9; i++ {
		if mode&(1<<(8-i)) == 0 {
			b[i+1] = '-'
		}
	}
	if mode&0o1000 != 0 {
		if b[9] == 'x' {
			b[9] = 't'
		} else {
			b[9] = 'T'
		}
	}
	return string(b)
}

// Delimited writes the image as Hadoop's Delimited processor does: the
// header line, then one line per inode with the columns of delimitedHeader
// separated by delim; times are "yyyy-MM-dd HH:mm" in loc.
func Delimited(r io.Reader, out io.Writer, delim string, loc *time.Location) error {
	w := bufio.NewWriterSize(out, 256<<10)
	w.WriteString(strings.Join(delimitedHeader, delim) + "\n")
	date := func(ms int64) string { return time.UnixMilli(ms).In(loc).Format("2006-01-02 15:04") }
	_, err := walk(r, func(_ fsimage.Header, in *fsimage.Inode, path string) error {
		var cols []string
		if in.IsDir {
			cols = []string{path, "0", date(in.Mtime), date(0), "0", "0", "0",
				strconv.FormatInt(in.NsQuota, 10), strconv.FormatInt(in.DsQuota, 10)}
		} else {
			var size int64
			for _, b := range in.Blocks {
				size += b.NumBytes
			}
			cols = []string{path, strconv.Itoa(int(in.Replication)), date(in.Mtime), date(in.Atime),
				strconv.FormatInt(in.BlockSize, 10), strconv.Itoa(len(in.Blocks)), strconv.FormatInt(size, 10), "0", "0"}
		}
		cols = append(cols, modeString(in.IsDir, in.Perm.Mode), in.Perm.User, in.Perm.Group)
		w.WriteString(strings.Join(cols, delim))
		return w.WriteByte('\n')
	})
	if err != nil {
		w.Flush()
		return err
	}
	return w.Flush()
}

// Hadoop's FileDistribution defaults: -maxSize 128 GB, -step 2 MB.
const (
	DefaultMaxSize int64 = 128 << 30
	DefaultStep    int64 = 2 << 20
)

// FileDistribution writes Hadoop's file size distribution: a "Processed N
// inodes." line every 2^20 inodes, then "Size\tNumFiles" and a row for
// every non-empty bucket (files of size s fall in bucket ceil(s/step),
// those over maxSize in the last), then the totals. With format (-format)
// the rows are "Size Range" ones, "[0 B, 2 MB]" then "(2 MB, 4 MB]", the
// last one ending at the largest file.
func FileDistribution(r io.Reader, out io.Writer, maxSize, step int64, format bool) error {
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	if step <= 0 {
		step = DefaultStep
	}
	n := maxSize / step
	if n >= math.MaxInt32 || n >= 1<<26 {
		return fmt.Errorf("oiv: too many distribution intervals (maxSize/step = %d)", n)
	}
	dist := make([]int64, n+1)
	var files, dirs, blocks, space, maxFile int64
	w := bufio.NewWriterSize(out, 1<<16)
	i := int64(0)
	_, err := walk(r, func(_ fsimage.Header, in *fsimage.Inode, _ string) error {
		if i%(1<<20) == 0 {
			fmt.Fprintf(w, "Processed %d inodes.\n", i)
		}
		i++
		if in.IsDir {
			dirs++
			return nil
		}
		files++
		blocks += int64(len(in.Blocks))
		var size int64
		for _, b := range in.Blocks {
			size += b.NumBytes
		}
		maxFile = max(maxFile, size)
		space += size * int64(in.Replication)
		bucket := int64(len(dist) - 1)
		if size <= maxSize {
			bucket = (size + step - 1) / step
		}
		dist[bucket]++
		return nil
	})
	if err != nil {
		w.Flush()
		return err
	}
	if format {
		w.WriteString("Size Range\tNumFiles\n")
	} else {
		w.WriteString("Size\tNumFiles\n")
	}
	for b, c := range dist {
		switch {
		case c == 0:
		case format:
			open, lo, hi := "(", int64(max(b-1, 0))*step, int64(b)*step
			if b == 0 {
				open = "["
			}
			if b == len(dist)-1 {
				hi = maxFile
			}
			fmt.Fprintf(w, "%s%s, %s]\t%d\n", open, byteDesc(lo), byteDesc(hi), c)
		default:
			fmt.Fprintf(w, "%d\t%d\n", int64(b)*step, c)
		}
	}
	fmt.Fprintf(w, "totalFiles = %d\ntotalDirectories = %d\ntotalBlocks = %d\ntotalSpace = %d\nmaxFileSize = %d\n",
		files, dirs, blocks, space, maxFile)
	return w.Flush()
}

// byteDesc writes a byte count as Hadoop's StringUtils.byteDesc: under
// 1024 as "N B", else in the largest binary unit it reaches, exact ("2 MB")
// or with two decimals ("1.50 MB").
func byteDesc(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	units := []string{"K", "M", "G", "T", "P", "E"}
	i := 0
	for i+1 < len(units) && n >= int64(1)<<(10*(i+2)) {
		i++
	}
	shift := uint(10 * (i + 1))
	if n&(int64(1)<<shift-1) == 0 {
		return strconv.FormatInt(n>>shift, 10) + " " + units[i] + "B"
	}
	s := strconv.FormatFloat(float64(n)/float64(int64(1)<<shift), 'f', 2, 64)
	if strings.HasPrefix(s, "1024") && i+1 < len(units) {
		i++
		s = strconv.FormatFloat(float64(n)/float64(int64(1)<<(shift+10)), 'f', 2, 64)
	}
	return s + " " + units[i] + "B"
}
