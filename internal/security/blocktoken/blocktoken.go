// Package blocktoken implements HDFS block access tokens
// (dfs.block.access.token.enable): the identifier in Hadoop's Writable
// encoding, its HMAC-SHA1 password, the NameNode's key manager that issues
// tokens and rolls keys, and the DataNode's verifier that checks the
// token of every DataTransferProtocol op. Pure: time comes from the
// caller.
package blocktoken

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/hdfsgo/hdfsgo/internal/security/writable"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// Kind is the token kind of block tokens.
const Kind = "HDFS_BLOCK_TOKEN"

// Mode is an access mode a token grants.
type Mode uint8

// The access modes, in Hadoop's order.
const (
	Read Mode = 1 << iota
	Write
	Copy
	Replace
)

var modeNames = []struct {
	m    Mode
	name string
}{{Read, "READ"}, {Write, "WRITE"}, {Copy, "COPY"}, {Replace, "REPLACE"}}

// String lists the modes as Hadoop prints an EnumSet: [READ, WRITE].
func (m Mode) String() string {
	var s []string
	for _, n := range modeNames {
		if m&n.m != 0 {
			s = append(s, n.name)
		}
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// Identifier is a block token's identifier (BlockTokenIdentifier).
type Identifier struct {
	ExpiryDate  int64 // ms since the epoch
	KeyID       int32
	UserID      string
	BlockPoolID string
	BlockID     int64
	Modes       Mode
}

// String is Hadoop's description of an identifier, used in error texts.
func (id *Identifier) String() string {
	return fmt.Sprintf("block_token_identifier (expiryDate=%d, keyId=%d, userId=%s, blockPoolId=%s, blockId=%d, access modes=%v)",
		id.ExpiryDate, id.KeyID, id.UserID, id.BlockPoolID, id.BlockID, id.Modes)
}

// Marshal encodes the identifier as Hadoop's legacy Writable form:
// vlong expiry, vint key id, user, pool, vlong block id, the modes, then
// empty storage-type and storage-id lists (Hadoop 3).
func (id *Identifier) Marshal() []byte {
	var b []byte
	b = writable.AppendVLong(b, id.ExpiryDate)
	b = writable.AppendVLong(b, int64(id.KeyID))
	b = writable.AppendText(b, id.UserID)
	b = writable.AppendText(b, id.BlockPoolID)
	b = writable.AppendVLong(b, id.BlockID)
	var n int64
	for _, m := range modeNames {
		if id.Modes&m.m != 0 {
			n++
		}
	}
	b = writable.AppendVLong(b, n)
	for _, m := range modeNames {
		if id.Modes&m.m != 0 {
			b = writable.AppendText(b, m.name)
		}
	}
	b = writable.AppendVLong(b, 0) // storage types
	b = writable.AppendVLong(b, 0) // storage ids
	return b
}

// MaxIdentifierLen bounds the identifiers Unmarshal accepts.
const MaxIdentifierLen = 64 << 10

// ErrMalformed is returned for identifiers that do not decode.
var ErrMalformed = errors.New("malformed block token identifier")

// Unmarshal decodes an identifier in the legacy Writable form; trailing
// storage fields, when present, are read and ignored.
func Unmarshal(b []byte) (*Identifier, error) {
	if len(b) > MaxIdentifierLen {
		return nil, fmt.Errorf("%w: %d bytes", ErrMalformed, len(b))
	}
	r := writable.NewReader(b, 0, ErrMalformed)
	id := &Identifier{}
	id.ExpiryDate = r.VLong()
	k := r.VLong()
	if k < -1<<31 || k >= 1<<31 {
		r.Fail()
	}
	id.KeyID = int32(k)
	id.UserID = r.Text()
	id.BlockPoolID = r.Text()
	id.BlockID = r.VLong()
	n := r.VLong()
	if n < 0 || n > 4 {
		r.Fail()
		n = 0
	}
	for range n {
		name := r.Text()
		found := false
		for _, m := range modeNames {
			if m.name == name {
				id.Modes |= m.m
				found = true
			}
		}
		if !found {
			r.Fail()
		}
	}
	if r.Err == nil && r.Off < len(b) {
		// Hadoop 3: storage types (enum names) and storage ids.
		for range 2 {
			if r.Off >= len(b) {
				break
			}
			n := r.VLong()
			if n < 0 || n > int64(len(b)) {
				r.Fail()
				break
			}
			for range n {
				r.Text()
			}
		}
	}
	if r.Err != nil {
		return nil, r.Err
	}
	return id, nil
}

// Key is a block key: a secret with an id and an expiry.
type Key struct {
	ID     int32
	Expiry int64 // ms since the epoch
	Secret []byte
}

// Password is the HMAC-SHA1 of the identifier under the key.
func (k *Key) Password(identifier []byte) []byte {
	m := hmac.New(sha1.New, k.Secret)
	m.Write(identifier)
	return m.Sum(nil)
}

func (k *Key) proto() *hdfs.BlockKeyProto {
	return &hdfs.BlockKeyProto{KeyId: proto.Uint32(uint32(k.ID)), ExpiryDate: proto.Uint64(uint64(k.Expiry)),
		KeyBytes: append([]byte(nil), k.Secret...)}
}

// Manager issues tokens and rolls keys (the NameNode's master).
type Manager struct {
	updateInterval time.Duration
	lifetime       time.Duration

	mu      sync.Mutex
	nextID  int32
	current *Key // signs tokens
	next    *Key // already with the DataNodes; signs from the next roll on
	keys    map[int32]*Key
	rolled  time.Time
	serial  int64 // counts rolls; DataNodes are sent keys when it moves
}

// NewManager returns a manager with a first key made at now.
// updateInterval is dfs.block.access.key.update.interval, lifetime
// dfs.block.access.token.lifetime.
func NewManager(updateInterval, lifetime time.Duration, now time.Time) *Manager {
	m := &Manager{updateInterval: updateInterval, lifetime: lifetime, keys: map[int32]*Key{}}
	var b [4]byte
	rand.Read(b[:])
	m.nextID = int32(binary.BigEndian.Uint32(b[:]) & 0x3fffffff)
	m.current = m.newKeyLocked(now)
	m.next = m.newKeyLocked(now.Add(m.updateInterval))
	m.rolled = now
	m.serial++
	return m
}

// newKeyLocked makes a key that starts signing at from: it verifies the
// tokens issued until the roll after that, for their lifetime, plus one
// more interval of slack.
func (m *Manager) newKeyLocked(from time.Time) *Key {
	secret := make([]byte, 64)
	rand.Read(secret)
	m.nextID++
	k := &Key{ID: m.nextID, Expiry: from.Add(2*m.updateInterval + m.lifetime).UnixMilli(), Secret: secret}
	m.keys[k.ID] = k
	return k
}

// rollLocked makes the next key current and a new one next. The DataNodes
// have had the next key since the last roll, so a token it signs verifies
// everywhere at once, even on a DataNode whose key update is still to
// come (DataNodes also sign their own transfers with their current key).
func (m *Manager) rollLocked(now time.Time) {
	m.current = m.next
	m.next = m.newKeyLocked(now.Add(m.updateInterval))
	m.rolled = now
	m.serial++
	for id, old := range m.keys {
		if old.Expiry < now.UnixMilli() {
			delete(m.keys, id)
		}
	}
}

// Roll makes a new current key when the update interval has passed; it
// reports whether it did.
func (m *Manager) Roll(now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.Sub(m.rolled) < m.updateInterval {
		return false
	}
	m.rollLocked(now)
	return true
}

// Serial counts the rolls so far.
func (m *Manager) Serial() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.serial
}

// Export returns every live key, for DataNodes (and the balancer).
func (m *Manager) Export() *hdfs.ExportedBlockKeysProto {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &hdfs.ExportedBlockKeysProto{IsBlockTokenEnabled: proto.Bool(true),
		KeyUpdateInterval: proto.Uint64(uint64(m.updateInterval.Milliseconds())),
		TokenLifeTime:     proto.Uint64(uint64(m.lifetime.Milliseconds())),
		CurrentKey:        m.current.proto()}
	for _, k := range m.keys {
		e.AllKeys = append(e.AllKeys, k.proto())
	}
	return e
}

// Generate issues a token for the block with the current key.
func (m *Manager) Generate(user, pool string, blockID int64, modes Mode, now time.Time) *common.TokenProto {
	m.mu.Lock()
	k := m.current
	m.mu.Unlock()
	return generate(k, user, pool, blockID, modes, now.Add(m.lifetime))
}

func generate(k *Key, user, pool string, blockID int64, modes Mode, expiry time.Time) *common.TokenProto {
	id := &Identifier{ExpiryDate: expiry.UnixMilli(), KeyID: k.ID, UserID: user, BlockPoolID: pool, BlockID: blockID, Modes: modes}
	b := id.Marshal()
	return &common.TokenProto{Identifier: b, Password: k.Password(b), Kind: proto.String(Kind), Service: proto.String("")}
}

// Verifier checks tokens with the keys the NameNode exported (the
// DataNode's side). It can also issue tokens with the current key, for
// the transfers a DataNode starts itself.
type Verifier struct {
	mu       sync.Mutex
	enabled  bool
	lifetime time.Duration
	current  *Key
	keys     map[int32]*Key
}

// SetKeys takes the keys of a registration answer or a key update
// (DNA_ACCESSKEYUPDATE).
func (v *Verifier) SetKeys(e *hdfs.ExportedBlockKeysProto) {
	if e == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.enabled = e.GetIsBlockTokenEnabled()
	v.lifetime = time.Duration(e.GetTokenLifeTime()) * time.Millisecond
	if v.keys == nil {
		v.keys = map[int32]*Key{}
	}
	add := func(p *hdfs.BlockKeyProto) *Key {
		if p == nil || len(p.GetKeyBytes()) == 0 {
			return nil
		}
		k := &Key{ID: int32(p.GetKeyId()), Expiry: int64(p.GetExpiryDate()), Secret: append([]byte(nil), p.GetKeyBytes()...)}
		v.keys[k.ID] = k
		return k
	}
	for _, p := range e.GetAllKeys() {
		add(p)
	}
	if k := add(e.GetCurrentKey()); k != nil {
		v.current = k
	}
}

// Enabled reports whether the NameNode said tokens are on.
func (v *Verifier) Enabled() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.enabled
}

// Generate issues a token with the current key (nil when tokens are off
// or no key has arrived).
func (v *Verifier) Generate(user, pool string, blockID int64, modes Mode, now time.Time) *common.TokenProto {
	v.mu.Lock()
	k, life, on := v.current, v.lifetime, v.enabled
	v.mu.Unlock()
	if !on || k == nil {
		return nil
	}
	return generate(k, user, pool, blockID, modes, now.Add(life))
}

// AccessError is a refused token; its message is Hadoop's
// InvalidToken text.
type AccessError struct{ Msg string }

func (e *AccessError) Error() string { return e.Msg }

// Check verifies that tok grants mode on the block at now. With tokens
// off it accepts anything.
func (v *Verifier) Check(tok *common.TokenProto, pool string, blockID int64, mode Mode, now time.Time) error {
	v.mu.Lock()
	on := v.enabled
	v.mu.Unlock()
	if !on {
		return nil
	}
	if tok == nil || len(tok.GetIdentifier()) == 0 {
		return &AccessError{fmt.Sprintf("Block token for block %s:blk_%d is missing: block access tokens are required (dfs.block.access.token.enable)", pool, blockID)}
	}
	id, err := Unmarshal(tok.GetIdentifier())
	if err != nil {
		return &AccessError{"Block token: " + err.Error()}
	}
	if id.BlockPoolID != pool || id.BlockID != blockID {
		return &AccessError{fmt.Sprintf("Block token with %s doesn't apply to block %s:blk_%d", id, pool, blockID)}
	}
	if id.Modes&mode == 0 {
		return &AccessError{fmt.Sprintf("Block token with %s doesn't have %s permission", id, strings.Trim(mode.String(), "[]"))}
	}
	if now.UnixMilli() > id.ExpiryDate {
		return &AccessError{fmt.Sprintf("Block token with %s is expired.", id)}
	}
	v.mu.Lock()
	k := v.keys[id.KeyID]
	v.mu.Unlock()
	if k == nil {
		return &AccessError{fmt.Sprintf("Can't re-compute password for %s, since the required block key (keyID=%d) doesn't exist.", id, id.KeyID)}
	}
	if !hmac.Equal(k.Password(tok.GetIdentifier()), tok.GetPassword()) {
		return &AccessError{fmt.Sprintf("Block token with %s doesn't have the correct token password", id)}
	}
	return nil
}

// Writable encoding (Hadoop's WritableUtils).

// Equal reports whether two identifiers encode the same.
func Equal(a, b *Identifier) bool { return bytes.Equal(a.Marshal(), b.Marshal()) }
