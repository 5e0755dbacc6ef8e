package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// ErrVolumeFailed: a volume's check found it unusable.
var ErrVolumeFailed = errors.New("datanode/storage: volume failed its check")

// probeSize is the size of the file a volume check writes and reads back.
const probeSize = 4 << 10

// Check tells whether the volume can still hold replicas (the disk
// checker's probe, Hadoop's checkDirs with disk I/O): its current/ and,
// for each given block pool, the finalized/, rbw/ and tmp/ directories
// exist and can be listed, and a small file written into each pool's tmp/
// with fdatasync reads back the same. A failure wraps ErrVolumeFailed and
// names the directory.
func (v *Volume) Check(poolIDs []string) error {
	fail := func(what string, err error) error {
		return fmt.Errorf("%w: %s: %s: %v", ErrVolumeFailed, v.Dir(), what, err)
	}
	cur := filepath.Join(v.Dir(), CurrentDir)
	if err := isListableDir(cur); err != nil {
		return fail(cur, err)
	}
	for _, id := range poolIDs {
		l := newPoolLayout(v.Dir(), id)
		for _, d := range []string{l.finalized(), l.rbw(), l.tmp()} {
			if err := isListableDir(d); err != nil {
				return fail(d, err)
			}
		}
		if err := probe(filepath.Join(l.tmp(), ".diskcheck-"+strconv.FormatInt(v.nextSeq(), 10))); err != nil {
			return fail("probe file in "+l.tmp(), err)
		}
	}
	return nil
}

func isListableDir(d string) error {
	fi, err := os.Stat(d)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("not a directory")
	}
	f, err := os.Open(d)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// probe writes, syncs, reads back and removes a file.
func probe(path string) error {
	want := bytes.Repeat([]byte("hdfsgo-disk-check "), probeSize/18+1)[:probeSize]
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(path)
	if _, err := f.Write(want); err != nil {
		f.Close()
		return err
	}
	if err := fdatasync(f); err != nil {
		f.Close()
		return err
	}
	got := make([]byte, probeSize)
	if _, err := f.ReadAt(got, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return errors.New("read back other bytes than written")
	}
	return os.Remove(path)
}
