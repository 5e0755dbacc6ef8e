package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// LockFileName is the name of the lock file in a storage directory's root.
const LockFileName = "in_use.lock"

// Lock takes the exclusive lock of the storage directory dir (its
// in_use.lock) and writes the holder's identity, "pid@hostname" as Hadoop
// does, into the file. If another holder has it, the error wraps ErrLocked and
// reads "storage: directory <dir> is already locked by <contents>". Close the
// returned Closer to release the lock; the file itself stays (removing it
// would let two processes lock two different files of the same name).
func Lock(fsys vfs.FS, dir string) (io.Closer, error) {
	host, _ := os.Hostname()
	return LockAs(fsys, dir, fmt.Sprintf("%d@%s", os.Getpid(), host))
}

// LockAs is Lock with the holder identity given (tests, and processes that
// run several roles).
func LockAs(fsys vfs.FS, dir, holder string) (io.Closer, error) {
	path := filepath.Join(dir, LockFileName)
	lk, err := fsys.Lock(path)
	if err != nil && !errors.Is(err, vfs.ErrLocked) {
		return nil, fmt.Errorf("storage: lock %s: %w", dir, err)
	}
	if err != nil {
		owner := "another process"
		if data, rerr := ReadFile(fsys, path); rerr == nil {
			if s := string(bytes.TrimSpace(data)); s != "" {
				owner = s
			}
		}
		return nil, &LockedError{Dir: dir, Holder: owner, Err: err}
	}
	// Write the holder through a second handle: the lock belongs to the
	// handle vfs.Lock opened, which stays open until Close.
	f, err := fsys.OpenReadWrite(path)
	if err == nil {
		err = f.Truncate(0)
		if err == nil {
			_, err = f.Write([]byte(holder))
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		_ = lk.Close()
		return nil, fmt.Errorf("storage: write holder into %s: %w", path, err)
	}
	return lk, nil
}

// LockedError says who holds a storage directory. It matches ErrLocked with
// errors.Is.
type LockedError struct {
	Dir    string
	Holder string // the lock file's contents, or "another process"
	Err    error  // what the file system said
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("storage: directory %s is already locked by %s", e.Dir, e.Holder)
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Unwrap returns the file system's error.
func (e *LockedError) Unwrap() error { return e.Err }
