// Package fsimage owns the NameNode's image: the byte format of an image file
// (Writer, Reader), the image files of a name directory (Save, List, Load,
// CleanCheckpoints) and their retention (Purge). File names are HDFS's
// (fsimage_<txid:019d> with an fsimage_<txid:019d>.md5 beside it, written as
// fsimage.ckpt_<txid:019d> first); the encoding inside is our own.
//
// Callers: the NameNode at startup (CleanCheckpoints, Load) and when it saves
// the namespace (Save, Purge), the standby and checkpoint nodes after a merge,
// and the offline image viewer (Reader). A Writer or Reader is used by one
// goroutine at a time; the package functions are safe for concurrent use on
// different directories.
//
// # Image file
//
// All integers marked uv are unsigned LEB128 varints (encoding/binary
// Uvarint); zz are zig-zag signed varints (binary.Varint); fixed-width
// integers are big-endian.
//
//	+----------+------------+---------+---------+-----------+-----+-----------+---------+
//	| HDFSIMG1 | version u32| frame H | frame D | frame S … | frame I … | frame I … | frame T |  EOF
//	+----------+------------+---------+---------+-----------+-----+-----------+---------+
//	  8 bytes    4 bytes (4; 1 to 3 are still read)
//
//	frame:
//	+---------+-------------+-------------------+--------------+
//	| kind u8 | length uv   | payload [length]  | crc32c u32   |
//	+---------+-------------+-------------------+--------------+
//	  'H' 'D' 'S' 'I' or 'T'   ≤ MaxFrameSize     Castagnoli CRC of kind,
//	                                              length and payload
//
//	'H' header payload (exactly one, first):
//	  layoutVersion zz | namespaceID zz | txid zz | lastInodeID uv |
//	  genStamp zz | lastBlockID zz | numInodes uv
//
//	'D' delegation payload (exactly one, second; version 3 and later): the
//	  delegation-token secret manager's master keys and live tokens as
//	  package namespace encodes them (Header.Delegation), empty when none
//
//	'S' snapshot payload (one or more, after 'D'; version 4 and later):
//	  more u8 (1: another 'S' frame follows, 0: this is the last) | bytes:
//	  the concatenated bytes are the snapshot state as package namespace
//	  encodes it (Header.Snapshots; its own doc draws it), empty when none
//
//	'I' inode payload (any number, each about 64 KiB):
//	  count uv | inode record × count
//
//	'T' trailer payload (exactly one, last; nothing may follow it):
//	  numInodes uv | numInodeFrames uv | numStrings uv
//
// Readers take versions 1 to FormatVersion; the 'D' frame is there from
// version 3 on, the 'S' frames from version 4 on, quotas by storage type
// (bit7) from version 5 on, the truncate source of a file under construction
// from version 8 on; from version 9 on the snapshot state in the 'S' frames
// may be its format 2 (saved versions keep their xattrs and ACLs), which
// this package passes through unread.
//
// The numbers in the trailer must match what was read (and numInodes the
// header's), so a file cut at a frame boundary is caught as surely as a torn
// frame; the CRC of every frame catches corruption where it happens, with its
// offset, before the whole-file MD5 is compared.
//
// Inode record. Most fields are deltas against the same field of the
// previous record (of the previous file record for blockSize, of the previous
// block for block ids and generation stamps), all starting at 0; deltas wrap
// like two's-complement int64 arithmetic, so any value round-trips.
//
//	flags u8       bit0 directory, bit1 under construction (files only),
//	               bit2 quotas present, bit3 features present (version 2),
//	               bit4 snapshottable directory (version 2), bit7 quotas by
//	               storage type (version 5); other bits must be 0
//	id             zz delta
//	parentID       zz delta
//	name           uv length | bytes        (≤ MaxNameLen; empty only for the root)
//	user, group    string ref × 2
//	mode           uv                       (≤ 0xFFFF)
//	mtime, atime   zz delta × 2
//	if bit2:       nsQuota zz | dsQuota zz  (absent: both -1)
//	if bit7:       numTypeQuotas uv (1 to MaxTypeQuotas) | (storageType uv
//	               (≤ 255, StorageTypeProto number) | quota zz) × n
//	               (directories, version 5)
//	files only:
//	  replication  uv (≤ 0xFFFF)
//	  blockSize    zz delta
//	  numBlocks    uv (≤ MaxBlocksPerFile)
//	  block × n:   id zz delta | numBytes zz | genStamp zz delta
//	  if bit1:     clientName string ref | clientMachine string ref |
//	               truncateSource zz (version 8: the block a copy-on-truncate
//	               copies into the last block, 0 for none)
//
//	if bit3:       storagePolicy uv (≤ 255) | numXAttrs uv (≤ MaxXAttrs) |
//	               xattr × n: namespace uv (≤ 4) | name string ref |
//	                 hasValue u8 (0 or 1) | if 1: value uv length | bytes |
//	               numACL uv (≤ MaxACLEntries) |
//	               entry × n: u8 scope<<5 | type<<3 | perm | name string ref
//	               (the ACL entries the permission bits do not hold; at
//	               least one feature must be present)
//
//	string ref:    uv 0, then uv length | bytes: a new string (≤ MaxStringLen),
//	                 which takes the next index of the file's string table;
//	               uv n ≥ 1: the string at index n-1 of the table.
//
// User and group names repeat on nearly every inode; with interning and the
// deltas an empty file costs about 12 bytes plus its name (23 bytes an inode
// for a million files named part-NNNNN).
//
// The first record is the root: a directory with id 16385 (by convention),
// ParentID 0 and an empty name. Records come parent before child (a pre-order
// walk), so a loader can attach each one as it arrives.
//
// # MD5 file
//
// fsimage_<txid:019d>.md5 holds Hadoop's MD5 line, "<32 hex digits> *<image
// file name>\n". An image counts as complete only when both files exist under
// their final names.
//
// # Example
//
//	err := fsimage.Save(fsys, nameDirs, hdr, func(fn func(*fsimage.Inode) error) error {
//		return tree.Walk(fn) // under the namesystem read lock, or on a snapshot
//	})
//	…
//	txid, err := fsimage.Load(fsys, nameDirs, func(h fsimage.Header, r *fsimage.Reader) error {
//		t := namespace.NewTree(h) // fresh: discarded if this image proves bad
//		for {
//			in, err := r.Next()
//			if err == io.EOF {
//				return nil
//			}
//			if err != nil {
//				return err
//			}
//			t.Attach(in) // copies what it keeps
//		}
//	})
package fsimage
