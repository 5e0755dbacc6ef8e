package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// TmpSuffix is appended to a file's name while AtomicWriteFile writes it. A file
// with this suffix that survives a crash is a leftover (see Dir.Analyze).
const TmpSuffix = ".tmp"

// AtomicWriteFile replaces path with data so that after a crash path holds
// either its old contents or all of data: it writes path+".tmp", syncs it,
// renames it over path and syncs the directory.
func AtomicWriteFile(fsys vfs.FS, path string, data []byte) (err error) {
	tmp := path + TmpSuffix
	f, err := fsys.Create(tmp)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	defer func() {
		if err != nil {
			_ = fsys.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("storage: write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("storage: sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("storage: close %s: %w", tmp, err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return fmt.Errorf("storage: rename %s to %s: %w", tmp, path, err)
	}
	if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("storage: sync dir of %s: %w", path, err)
	}
	return nil
}

// MaxSmallFile is the largest file ReadFile accepts: it is meant for VERSION,
// seen_txid, md5 and epoch files, never for images or segments.
const MaxSmallFile = 1 << 20

// ReadFile returns the contents of a small metadata file (at most MaxSmallFile
// bytes; a larger file yields ErrTooLarge).
func ReadFile(fsys vfs.FS, path string) ([]byte, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSmallFile+1))
	if err != nil {
		return nil, fmt.Errorf("storage: read %s: %w", path, err)
	}
	if len(data) > MaxSmallFile {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrTooLarge, path, MaxSmallFile)
	}
	return data, nil
}

// isNotExist reports whether err says a file does not exist, through any wrapping.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist)
}
