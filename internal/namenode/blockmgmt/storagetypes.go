package blockmgmt

// Storage types, as StorageTypeProto numbers them (the values storage
// reports carry).
const (
	TypeDisk     int32 = 1
	TypeSSD      int32 = 2
	TypeArchive  int32 = 3
	TypeRAMDisk  int32 = 4
	TypeProvided int32 = 5
	TypeNVDIMM   int32 = 6
)

// StoragePolicy says on which storage types the replicas of a block go
// (BlockStoragePolicy): Types has one entry per replica, its last entry
// standing for every further replica; when a type has no room the
// creation fallbacks (new blocks) or replication fallbacks (re-replication)
// are tried in order. The zero policy has no preference: any storage.
type StoragePolicy struct {
	Name                 string
	Types                []int32
	CreationFallbacks    []int32
	ReplicationFallbacks []int32
}

// transient storage types hold replicas in memory; placement never picks
// them for an ordinary replica.
func transient(t int32) bool { return t == TypeRAMDisk }

// typeOf is the storage type of st; a storage that reported none is DISK
// (the proto's default).
func typeOf(st *storage) int32 {
	if st.typ == 0 {
		return TypeDisk
	}
	return st.typ
}

// requested is the storage type of each of replication replicas, transient
// types left out.
func (sp StoragePolicy) requested(replication int) []int32 {
	var out []int32
	for _, t := range sp.Types {
		if len(out) == replication {
			break
		}
		if !transient(t) {
			out = append(out, t)
		}
	}
	if n := len(sp.Types); n > 0 && !transient(sp.Types[n-1]) {
		for len(out) < replication {
			out = append(out, sp.Types[n-1])
		}
	}
	return out
}

// chooseTypes returns the storage types still to place for a block of
// replication replicas of which chosen are placed already, each type in
// unavailable replaced by its first available fallback (or dropped when
// none is left), as BlockStoragePolicy.chooseStorageTypes does.
func (sp StoragePolicy) chooseTypes(replication int, chosen []int32, unavailable map[int32]bool, newBlock bool) []int32 {
	req := sp.requested(replication)
	for _, c := range chosen {
		for i, t := range req {
			if t == c {
				req = append(req[:i], req[i+1:]...)
				break
			}
		}
	}
	fallbacks := sp.ReplicationFallbacks
	if newBlock {
		fallbacks = sp.CreationFallbacks
	}
	out := req[:0]
	for _, t := range req {
		if unavailable[t] {
			fb := int32(0)
			for _, f := range fallbacks {
				if !unavailable[f] {
					fb = f
					break
				}
			}
			if fb == 0 {
				continue
			}
			t = fb
		}
		out = append(out, t)
	}
	return out
}

// typeName is Hadoop's name of a storage type.
func typeName(t int32) string {
	switch t {
	case TypeDisk:
		return "DISK"
	case TypeSSD:
		return "SSD"
	case TypeArchive:
		return "ARCHIVE"
	case TypeRAMDisk:
		return "RAM_DISK"
	case TypeProvided:
		return "PROVIDED"
	case TypeNVDIMM:
		return "NVDIMM"
	}
	return "DISK"
}

// SetStoragePolicy records the effective storage policy id of the file the
// blocks belong to (the apply path calls it when a file gains blocks, and
// when a policy change or a rename changes the policy above a file); it
// steers the placement of their new replicas.
func (m *Manager) SetStoragePolicy(ids []int64, policyID uint8) {
	for _, id := range ids {
		if b := m.blocks.get(id); b != nil {
			b.setPolicy(policyID)
		}
	}
}

// excessByType narrows the candidate replicas (indexes into m.reps(b)) for
// deletion to those on storage types beyond what b's storage policy asks
// for (BlockStoragePolicy.chooseExcess); all of them when none is.
func (m *Manager) excessByType(b *blockInfo, cands []int) []int {
	pol := m.policy(b.policy())
	if len(pol.Types) == 0 {
		return cands
	}
	want := map[int32]int{}
	for _, t := range pol.requested(int(b.repl())) {
		want[t]++
	}
	excess := map[int32]bool{}
	for _, i := range cands {
		t := typeOf(m.stOf(m.reps(b)[i]))
		if want[t] > 0 {
			want[t]--
			continue
		}
		excess[t] = true
	}
	if len(excess) == 0 {
		return cands
	}
	var out []int
	for _, i := range cands {
		if excess[typeOf(m.stOf(m.reps(b)[i]))] {
			out = append(out, i)
		}
	}
	return out
}
