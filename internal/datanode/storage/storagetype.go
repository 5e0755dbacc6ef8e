package storage

import (
	"fmt"
	"strings"
)

// StorageType is the medium of a volume, as tagged in dfs.datanode.data.dir
// ([DISK]/path, [SSD]/path, ...). The values are Hadoop's StorageTypeProto
// numbers, which storage reports carry; AnyStorage (0) is "no preference"
// when choosing a volume and never names a volume.
type StorageType int

// Storage types.
const (
	AnyStorage StorageType = 0
	Disk       StorageType = 1
	SSD        StorageType = 2
	Archive    StorageType = 3
	RAMDisk    StorageType = 4
)

func (t StorageType) String() string {
	switch t {
	case AnyStorage:
		return "ANY"
	case Disk:
		return "DISK"
	case SSD:
		return "SSD"
	case Archive:
		return "ARCHIVE"
	case RAMDisk:
		return "RAM_DISK"
	}
	return fmt.Sprintf("StorageType(%d)", int(t))
}

// ParseStorageType parses a data dir tag (case-insensitive): DISK, SSD,
// ARCHIVE or RAM_DISK.
func ParseStorageType(s string) (StorageType, error) {
	for _, t := range []StorageType{Disk, SSD, Archive, RAMDisk} {
		if strings.EqualFold(s, t.String()) {
			return t, nil
		}
	}
	return AnyStorage, fmt.Errorf("%w: storage type %q (want DISK, SSD, ARCHIVE or RAM_DISK)", ErrBadVolume, s)
}
