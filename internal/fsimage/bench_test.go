package fsimage

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

const (
	benchDirs  = 1000
	benchFiles = 1000 // per directory: 1,000,000 files in all
)

// exportFlat feeds the root, then benchDirs directories each followed by its
// benchFiles empty files, reusing one Inode as a namespace walk would.
func exportFlat(fn func(*Inode) error) error {
	in := Inode{ID: rootID, IsDir: true, NsQuota: -1, DsQuota: -1,
		Perm: op.Perm{User: "hdfs", Group: "supergroup", Mode: 0o755}, Mtime: 1764622225000}
	if err := fn(&in); err != nil {
		return err
	}
	id := uint64(rootID)
	name := make([]byte, 0, 32)
	for d := 0; d < benchDirs; d++ {
		id++
		dirID := id
		in = Inode{ID: dirID, ParentID: rootID, IsDir: true, NsQuota: -1, DsQuota: -1,
			Perm: op.Perm{User: "alice", Group: "supergroup", Mode: 0o755}, Mtime: 1764622225000 + int64(d)}
		in.Name = fmt.Appendf(name[:0], "dir%04d", d)
		if err := fn(&in); err != nil {
			return err
		}
		for f := 0; f < benchFiles; f++ {
			id++
			in = Inode{ID: id, ParentID: dirID, NsQuota: -1, DsQuota: -1,
				Perm: op.Perm{User: "alice", Group: "supergroup", Mode: 0o644}, Replication: 3, BlockSize: 128 << 20,
				Mtime: 1764622225000 + int64(f), Atime: 1764622225000 + int64(f)}
			in.Name = fmt.Appendf(name[:0], "part-%05d", f)
			if err := fn(&in); err != nil {
				return err
			}
		}
	}
	return nil
}

const benchInodes = 1 + benchDirs + benchDirs*benchFiles

func benchImage(b *testing.B) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, header(1, benchInodes))
	if err != nil {
		b.Fatal(err)
	}
	if err := exportFlat(w.Write); err != nil {
		b.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkWrite encodes 1,000,001 inodes (and their MD5) to io.Discard.
func BenchmarkWrite(b *testing.B) {
	size := len(benchImage(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, err := NewWriter(io.Discard, header(1, benchInodes))
		if err != nil {
			b.Fatal(err)
		}
		if err := exportFlat(w.Write); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchInodes)*float64(b.N)/b.Elapsed().Seconds(), "inodes/s")
	b.ReportMetric(float64(size)/benchInodes, "bytes/inode")
	b.SetBytes(int64(size))
}

// BenchmarkRead decodes the same image from memory (CRCs checked; MD5 is
// Load's business and is measured by BenchmarkLoad).
func BenchmarkRead(b *testing.B) {
	data := benchImage(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, _, err := NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != benchInodes {
			b.Fatalf("read %d inodes", n)
		}
	}
	b.ReportMetric(float64(benchInodes)*float64(b.N)/b.Elapsed().Seconds(), "inodes/s")
	b.ReportMetric(float64(len(data))/benchInodes, "bytes/inode")
	b.SetBytes(int64(len(data)))
}

// BenchmarkSaveLoad saves the image to two in-memory name dirs and loads it
// back with the MD5 check, as a NameNode restart would (minus the tree).
func BenchmarkSaveLoad(b *testing.B) {
	m := vfs.NewMem()
	dirs := []string{"/nn1", "/nn2"}
	for _, d := range dirs {
		if err := m.MkdirAll(d+"/current", 0o700); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Save", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := Save(m, dirs, header(1, benchInodes), exportFlat); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(benchInodes)*float64(b.N)/b.Elapsed().Seconds(), "inodes/s")
	})
	b.Run("Load", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_, err := Load(m, dirs, func(h Header, r *Reader) error {
				for {
					if _, err := r.Next(); err != nil {
						if err == io.EOF {
							return nil
						}
						return err
					}
				}
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(benchInodes)*float64(b.N)/b.Elapsed().Seconds(), "inodes/s")
	})
}
