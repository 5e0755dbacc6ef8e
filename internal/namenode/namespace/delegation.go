package namespace

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// delegation is the state of the delegation-token secret manager that
// must survive restarts and failovers: the master keys and the live
// tokens with their expiry. It changes only by applying
// OP_UPDATE_MASTER_KEY, OP_GET_DELEGATION_TOKEN, OP_RENEW_DELEGATION_TOKEN
// and OP_CANCEL_DELEGATION_TOKEN, and travels in the image.
type delegation struct {
	keys      map[int32]*op.UpdateMasterKey
	current   int32 // key that signs new tokens; 0: none yet
	lastKeyID int32
	tokens    map[op.DelegationTokenID]int64 // -> expiry (ms)
	lastSeq   int32
}

func (d *delegation) init() {
	if d.keys == nil {
		d.keys = map[int32]*op.UpdateMasterKey{}
		d.tokens = map[op.DelegationTokenID]int64{}
	}
}

func (t *Tree) applyDelegation(o op.Op) error {
	d := &t.dt
	d.init()
	switch o := o.(type) {
	case *op.UpdateMasterKey:
		if len(o.Secret) == 0 {
			return fmt.Errorf("%w: master key %d without a secret", ErrCorrupt, o.KeyID)
		}
		k := *o
		k.Secret = append([]byte(nil), o.Secret...)
		d.keys[o.KeyID] = &k
		d.current = o.KeyID
		if o.KeyID > d.lastKeyID {
			d.lastKeyID = o.KeyID
		}
	case *op.GetDelegationToken:
		if _, ok := d.keys[o.ID.MasterKeyID]; !ok {
			return fmt.Errorf("%w: delegation token %d signed by unknown master key %d", ErrCorrupt, o.ID.SequenceNumber, o.ID.MasterKeyID)
		}
		// What expired before this token was issued is gone: the keys
		// (but the current one) and the tokens past their last date.
		for id, k := range d.keys {
			if k.Expiry < o.ID.IssueDate && id != d.current && id != o.ID.MasterKeyID {
				delete(d.keys, id)
			}
		}
		for id := range d.tokens {
			if id.MaxDate < o.ID.IssueDate {
				delete(d.tokens, id)
			}
		}
		d.tokens[o.ID] = o.Expiry
		if o.ID.SequenceNumber > d.lastSeq {
			d.lastSeq = o.ID.SequenceNumber
		}
	case *op.RenewDelegationToken:
		if _, ok := d.tokens[o.ID]; !ok {
			return fmt.Errorf("%w: renewal of unknown delegation token %d", ErrCorrupt, o.ID.SequenceNumber)
		}
		d.tokens[o.ID] = o.Expiry
	case *op.CancelDelegationToken:
		if _, ok := d.tokens[o.ID]; !ok {
			return fmt.Errorf("%w: cancel of unknown delegation token %d", ErrCorrupt, o.ID.SequenceNumber)
		}
		delete(d.tokens, o.ID)
	}
	return nil
}

// DelegationKey returns a master key by id.
func (t *Tree) DelegationKey(id int32) (op.UpdateMasterKey, bool) {
	k, ok := t.dt.keys[id]
	if !ok {
		return op.UpdateMasterKey{}, false
	}
	return *k, true
}

// CurrentDelegationKey returns the key that signs new tokens.
func (t *Tree) CurrentDelegationKey() (op.UpdateMasterKey, bool) {
	return t.DelegationKey(t.dt.current)
}

// DelegationToken returns a live token's expiry.
func (t *Tree) DelegationToken(id op.DelegationTokenID) (expiry int64, ok bool) {
	expiry, ok = t.dt.tokens[id]
	return expiry, ok
}

// DelegationCounters returns the last master key id and token sequence
// number handed out.
func (t *Tree) DelegationCounters() (lastKeyID, lastSeq int32) { return t.dt.lastKeyID, t.dt.lastSeq }

// NumDelegationTokens is how many tokens are held.
func (t *Tree) NumDelegationTokens() int { return len(t.dt.tokens) }

// Encoding of the state in the image (fsimage.Header.Delegation): version
// 1, then varints current, lastKeyID, lastSeq, the key count and keys (id,
// expiry, secret), the token count and tokens (identifier fields, expiry),
// in a fixed order so that equal states encode equally.

const delegationEncoding = 1

func (t *Tree) encodeDelegation() []byte {
	d := &t.dt
	if len(d.keys) == 0 && len(d.tokens) == 0 && d.lastKeyID == 0 && d.lastSeq == 0 {
		return nil
	}
	b := []byte{delegationEncoding}
	b = binary.AppendVarint(b, int64(d.current))
	b = binary.AppendVarint(b, int64(d.lastKeyID))
	b = binary.AppendVarint(b, int64(d.lastSeq))
	ids := make([]int32, 0, len(d.keys))
	for id := range d.keys {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		k := d.keys[id]
		b = binary.AppendVarint(b, int64(k.KeyID))
		b = binary.AppendVarint(b, k.Expiry)
		b = appendBytes(b, k.Secret)
	}
	toks := make([]op.DelegationTokenID, 0, len(d.tokens))
	for id := range d.tokens {
		toks = append(toks, id)
	}
	sort.Slice(toks, func(i, j int) bool {
		if toks[i].SequenceNumber != toks[j].SequenceNumber {
			return toks[i].SequenceNumber < toks[j].SequenceNumber
		}
		return toks[i].IssueDate < toks[j].IssueDate
	})
	b = binary.AppendUvarint(b, uint64(len(toks)))
	for _, id := range toks {
		b = appendBytes(b, []byte(id.Owner))
		b = appendBytes(b, []byte(id.Renewer))
		b = appendBytes(b, []byte(id.RealUser))
		b = binary.AppendVarint(b, id.IssueDate)
		b = binary.AppendVarint(b, id.MaxDate)
		b = binary.AppendVarint(b, int64(id.SequenceNumber))
		b = binary.AppendVarint(b, int64(id.MasterKeyID))
		b = binary.AppendVarint(b, d.tokens[id])
	}
	return b
}

func appendBytes(b, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

// decodeDelegation reads what encodeDelegation wrote. Counts are checked
// against the bytes left before anything is allocated.
func decodeDelegation(b []byte) (delegation, error) {
	var d delegation
	d.init()
	if len(b) == 0 {
		return d, nil
	}
	bad := func(why string) (delegation, error) {
		return delegation{}, fmt.Errorf("%w: delegation state: %s", ErrImage, why)
	}
	if b[0] != delegationEncoding {
		return bad(fmt.Sprintf("unknown encoding %d", b[0]))
	}
	p := b[1:]
	fail := false
	varint := func() int64 {
		v, n := binary.Varint(p)
		if n <= 0 {
			fail = true
			return 0
		}
		p = p[n:]
		return v
	}
	i32 := func() int32 {
		v := varint()
		if v < -1<<31 || v >= 1<<31 {
			fail = true
		}
		return int32(v)
	}
	count := func(min int) int {
		v, n := binary.Uvarint(p)
		if n <= 0 || v > uint64(len(p)-n)/uint64(min) {
			fail = true
			return 0
		}
		p = p[n:]
		return int(v)
	}
	bytes := func() []byte {
		v, n := binary.Uvarint(p)
		if n <= 0 || v > uint64(len(p)-n) {
			fail = true
			return nil
		}
		out := append([]byte(nil), p[n:n+int(v)]...)
		p = p[n+int(v):]
		return out
	}
	d.current, d.lastKeyID, d.lastSeq = i32(), i32(), i32()
	nk := count(3)
	for i := 0; i < nk && !fail; i++ {
		k := &op.UpdateMasterKey{KeyID: i32(), Expiry: varint(), Secret: bytes()}
		d.keys[k.KeyID] = k
	}
	nt := count(8) // three lengths and five varints, a byte each at least
	for i := 0; i < nt && !fail; i++ {
		id := op.DelegationTokenID{Owner: string(bytes()), Renewer: string(bytes()), RealUser: string(bytes()),
			IssueDate: varint(), MaxDate: varint(), SequenceNumber: i32(), MasterKeyID: i32()}
		d.tokens[id] = varint()
	}
	if fail {
		return bad("truncated or malformed")
	}
	if len(p) != 0 {
		return bad(fmt.Sprintf("%d trailing bytes", len(p)))
	}
	if _, ok := d.keys[d.current]; d.current != 0 && !ok {
		return bad(fmt.Sprintf("current master key %d is not among the keys", d.current))
	}
	return d, nil
}
