package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
)

// CorruptError says a replica's data does not match its stored checksums,
// or its files cannot hold its length: the replica is corrupt.
type CorruptError struct {
	Block  Block
	Offset int64 // block offset of the first bad chunk (-1: the files themselves)
	Err    error
}

func (e *CorruptError) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("datanode/storage: replica %s is corrupt: %v", e.Block, e.Err)
	}
	return fmt.Sprintf("datanode/storage: replica %s is corrupt at offset %d: %v", e.Block, e.Offset, e.Err)
}

func (e *CorruptError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// verifyStep is how much a verification reads between two calls of its
// pace function.
const verifyStep = 256 << 10

// Verify reads the FINALIZED replica of block id on volume v whole and
// checks every chunk against its stored checksum, as the block scanner
// does. pace is called with the bytes about to be read before each read (the
// scanner's throttle); its error ends the verification. Pages read are
// dropped from the page cache afterwards, so a scan does not push out what
// readers use.
//
// It returns the replica verified and the bytes read. A replica that is not
// on v, is not finalized or went away during the read is ErrReplicaNotFound
// or ErrWrongState (not a failure: it was deleted, appended to or moved); a
// mismatch or a file too short for the replica's length is a *CorruptError;
// anything else is an I/O error of the volume.
func (bp *BlockPool) Verify(v *Volume, id int64, pace func(n int64) error) (Replica, int64, error) {
	r, ok := bp.replicas.Get(id)
	switch {
	case !ok:
		return Replica{}, 0, fmt.Errorf("%w: verify blk_%d", ErrReplicaNotFound, id)
	case r.VolumeDir != v.Dir():
		return r, 0, fmt.Errorf("%w: verify %s: the replica is on %s, not %s", ErrReplicaNotFound, r.Block, r.VolumeDir, v.Dir())
	case r.State != Finalized:
		return r, 0, fmt.Errorf("%w: verify %s in state %s", ErrWrongState, r.Block, r.State)
	}
	rr, err := bp.OpenReader(r.Block)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, still := bp.replicas.Get(id); still {
				return r, 0, &CorruptError{Block: r.Block, Offset: -1, Err: err}
			}
			return r, 0, fmt.Errorf("%w: verify %s: %v", ErrReplicaNotFound, r.Block, err)
		}
		if errors.Is(err, ErrBadMeta) {
			return r, 0, &CorruptError{Block: r.Block, Offset: -1, Err: err}
		}
		return r, 0, err
	}
	defer rr.Close()
	rep := rr.Replica()
	if rep.State != Finalized || rep.GenStamp != r.GenStamp {
		return rep, 0, fmt.Errorf("%w: verify %s: the replica changed to %s in state %s", ErrWrongState, r.Block, rep.Block, rep.State)
	}
	c := rr.Checksum()
	length := rr.Length()
	if fi, err := rr.DataFile().Stat(); err == nil && fi.Size() < length {
		return rep, 0, &CorruptError{Block: rep.Block, Offset: fi.Size(), Err: fmt.Errorf("block file holds %d of %d bytes", fi.Size(), length)}
	}
	bpc := int64(c.BytesPerChecksum)
	step := max(verifyStep/bpc, 1) * bpc
	var data, sums []byte
	var read int64
	fd := int(rr.DataFile().Fd())
	for off := int64(0); off < length; {
		n := min(step, length-off)
		if pace != nil {
			if err := pace(n); err != nil {
				return rep, read, err
			}
		}
		data, sums, err = rr.ReadChunks(off, int(n), data, sums)
		if err != nil {
			if errors.Is(err, ErrBadMeta) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return rep, read, &CorruptError{Block: rep.Block, Offset: off, Err: err}
			}
			return rep, read, err
		}
		read += int64(len(data))
		if c.Size() > 0 {
			if err := c.Verify(data, sums); err != nil {
				bad := off
				var ce *datatransfer.ChecksumError
				if errors.As(err, &ce) {
					bad += ce.Offset
				}
				return rep, read, &CorruptError{Block: rep.Block, Offset: bad, Err: err}
			}
		}
		_ = unix.Fadvise(fd, off, int64(len(data)), unix.FADV_DONTNEED)
		if len(data) == 0 {
			return rep, read, &CorruptError{Block: rep.Block, Offset: off, Err: io.ErrUnexpectedEOF}
		}
		off += int64(len(data))
		data, sums = data[:0], sums[:0]
	}
	return rep, read, nil
}
