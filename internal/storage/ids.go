package storage

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// NewUUID returns a random (version 4) UUID in its 36-character text form,
// reading 16 bytes from rnd (crypto/rand.Reader in production).
func NewUUID(rnd io.Reader) (string, error) {
	var u [16]byte
	if _, err := io.ReadFull(rnd, u[:]); err != nil {
		return "", fmt.Errorf("storage: read randomness: %w", err)
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]), nil
}

// NewClusterID returns a cluster id as Hadoop makes one: "CID-<uuid>".
func NewClusterID(rnd io.Reader) (string, error) {
	u, err := NewUUID(rnd)
	if err != nil {
		return "", err
	}
	return "CID-" + u, nil
}

// NewStorageID returns a DataNode storage (volume) id: "DS-<uuid>".
func NewStorageID(rnd io.Reader) (string, error) {
	u, err := NewUUID(rnd)
	if err != nil {
		return "", err
	}
	return "DS-" + u, nil
}

// NewDatanodeUUID returns a DataNode's datanodeUuid: a bare UUID.
func NewDatanodeUUID(rnd io.Reader) (string, error) { return NewUUID(rnd) }

// randPositiveInt31 returns a uniformly random value in [1, 2^31-1).
func randPositiveInt31(rnd io.Reader) (int32, error) {
	var b [4]byte
	for {
		if _, err := io.ReadFull(rnd, b[:]); err != nil {
			return 0, fmt.Errorf("storage: read randomness: %w", err)
		}
		n := int32(binary.BigEndian.Uint32(b[:]) & 0x7fffffff)
		if n != 0 && n != 0x7fffffff {
			return n, nil
		}
	}
}

// NewNamespaceID returns a random positive namespace id (never 0, which a
// VERSION file may not carry).
func NewNamespaceID(rnd io.Reader) (int32, error) { return randPositiveInt31(rnd) }

// NewBlockPoolID returns a block pool id as Hadoop makes one:
// "BP-<random positive int>-<ip>-<now in Unix milliseconds>".
func NewBlockPoolID(rnd io.Reader, ip string, now time.Time) (string, error) {
	n, err := randPositiveInt31(rnd)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("BP-%d-%s-%d", n, ip, now.UnixMilli()), nil
}
