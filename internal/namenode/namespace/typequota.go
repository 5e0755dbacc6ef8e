package namespace

import (
	"fmt"
	"slices"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
)

// Quotas by storage type (setQuota with a storage type; Hadoop's
// DirectoryWithQuotaFeature type quotas).
//
// A directory may limit the space its subtree takes on each storage type.
// What a file takes on a type follows from its effective storage policy,
// not from where its replicas happen to be: each of its replicas is counted
// on the type the policy chooses for it (bytes × the replicas of that
// type), and, as in HDFS, a file with no storage policy set on it or above
// it counts on no type. Once any directory has a quota by storage type
// (Tree.hasTypeQuotas), every quota directory keeps its subtree's usage by
// type (quotaData.tsUsed) as it keeps its space usage, updated by the
// apply path as HDFS's DirectoryWithQuotaFeature is: a change to a file
// adds its difference to the quota directories above it (O(depth)); a
// rename or a storage policy change that moves a subtree under another
// effective policy recounts that subtree. It is derived state: never
// logged, recomputed from the tree at image load, and when the first type
// quota is set. So a check at block allocation is O(depth), and nothing
// is kept where no type quota was ever set.

// typeQuota is a directory's space quota on one storage type.
type typeQuota struct {
	typ   uint8 // StorageTypeProto number
	quota int64
}

// Storage types, numbered as StorageTypeProto (and op.SetQuotaByStorageType).
const (
	typeDisk    uint8 = 1
	typeRAMDisk uint8 = 4
	numTypes          = 7 // 0 unused, 1 DISK .. 6 NVDIMM
)

// storageTypeNames are Hadoop's names by StorageTypeProto number.
var storageTypeNames = [numTypes]string{"", "DISK", "SSD", "ARCHIVE", "RAM_DISK", "PROVIDED", "NVDIMM"}

// StorageTypeName is Hadoop's name of storage type t ("DISK", "SSD", ...).
func StorageTypeName(t uint8) string {
	if int(t) < numTypes && t != 0 {
		return storageTypeNames[t]
	}
	return fmt.Sprintf("StorageType(%d)", t)
}

// QuotaStorageTypes are the storage types a quota can be set on, in
// Hadoop's order of StorageType.getTypesSupportingQuota (every type but
// RAM_DISK).
var QuotaStorageTypes = []uint8{6, 2, 1, 3, 5}

// typeNumber is the StorageTypeProto number of a type name.
func typeNumber(name string) uint8 {
	for i, n := range storageTypeNames {
		if n == name && i > 0 {
			return uint8(i)
		}
	}
	return 0
}

// replicaTypes is the storage type of each of repl replicas under policy
// p (BlockStoragePolicy.chooseStorageTypes(replication)): the policy's
// types in order, the last repeated, RAM_DISK left out.
func (p StoragePolicy) replicaTypes(repl int) []uint8 {
	var out []uint8
	for _, n := range p.StorageTypes {
		if len(out) == repl {
			break
		}
		if t := typeNumber(n); t != typeRAMDisk && t != 0 {
			out = append(out, t)
		}
	}
	if k := len(p.StorageTypes); k > 0 {
		if last := typeNumber(p.StorageTypes[k-1]); last != typeRAMDisk && last != 0 {
			for len(out) < repl {
				out = append(out, last)
			}
		}
	}
	return out
}

// typeSpaces is storage space by storage type.
type typeSpaces [numTypes]int64

// add adds what a file of repl replicas under effective policy policyID
// takes on each type with per bytes per replica.
func (ts *typeSpaces) add(policyID uint8, repl uint16, per int64) {
	if policyID == op.StoragePolicyUnspecified || per == 0 {
		return
	}
	p, ok := StoragePolicyByID(policyID)
	if !ok {
		return
	}
	for _, t := range p.replicaTypes(int(repl)) {
		ts[t] += per
	}
}

// addFile adds what file f under effective policy policyID takes.
func (ts *typeSpaces) addFile(f *inode, policyID uint8) {
	if r := f.repl(); r > 0 {
		ts.add(policyID, r, f.space()/int64(r))
	}
}

// typesUnder is what file f takes by storage type when the policy it
// inherits is inherited.
func (t *Tree) typesUnder(f *inode, inherited uint8) (ts typeSpaces) {
	if p := t.ownPolicy(f); p != op.StoragePolicyUnspecified {
		inherited = p
	}
	ts.addFile(f, inherited)
	return ts
}

// inheritedAt is the effective storage policy of w.nodes[i] when type
// usage is kept (unspecified otherwise: nothing needs it).
func (t *Tree) inheritedAt(w *walk, i int) uint8 {
	if !t.hasTypeQuotas || i < 0 {
		return op.StoragePolicyUnspecified
	}
	return t.policyAlong(w, i)
}

// fileTypes is what file f, the last node of w (or to be), takes by
// storage type; zero when type usage is not kept.
func (t *Tree) fileTypes(w *walk, f *inode) typeSpaces {
	if !t.hasTypeQuotas {
		return typeSpaces{}
	}
	return t.typesUnder(f, t.policyAlong(w, len(w.nodes)-2))
}

// subtreeTypes is what the subtree at n takes by storage type when it
// inherits policy inherited; zero when type usage is not kept.
func (t *Tree) subtreeTypes(n *inode, inherited uint8) (ts typeSpaces) {
	if t.hasTypeQuotas {
		t.typeUsage(n, inherited, &ts)
	}
	return ts
}

// addTypes adds after - before to the usage by storage type of every
// quota directory from d up to the root.
func (t *Tree) addTypes(d *inode, before, after typeSpaces) {
	if !t.hasTypeQuotas || before == after {
		return
	}
	for ; d != nil; d = d.dir().parent {
		if q := d.dir().quota; q != nil {
			for i := range q.tsUsed {
				q.tsUsed[i] += after[i] - before[i]
			}
		}
	}
}

// fillTypes sets the usage by storage type of every quota directory in the
// subtree at n, which inherits policy inherited, and returns the subtree's.
func (t *Tree) fillTypes(n *inode, inherited uint8) (ts typeSpaces) {
	if p := t.ownPolicy(n); p != op.StoragePolicyUnspecified {
		inherited = p
	}
	if !n.isDir() {
		ts.addFile(n, inherited)
		return ts
	}
	for c := range n.dir().children.all() {
		x := t.fillTypes(c, inherited)
		for i := range ts {
			ts[i] += x[i]
		}
	}
	if q := n.dir().quota; q != nil {
		q.tsUsed = ts
	}
	return ts
}

// typeUsage sums the space by storage type of the subtree at n, whose
// inherited storage policy is inherited.
func (t *Tree) typeUsage(n *inode, inherited uint8, ts *typeSpaces) {
	if p := t.ownPolicy(n); p != op.StoragePolicyUnspecified {
		inherited = p
	}
	if !n.isDir() {
		ts.addFile(n, inherited)
		return
	}
	for c := range n.dir().children.all() {
		t.typeUsage(c, inherited, ts)
	}
}

// typeQuotaOf returns d's quota on type typ, -1 when none.
func typeQuotaOf(d *inode, typ uint8) int64 {
	if d.isDir() && d.dir().quota != nil {
		for _, q := range d.dir().quota.types {
			if q.typ == typ {
				return q.quota
			}
		}
	}
	return -1
}

// verifyTypeQuota checks that file f (the last node of w) may take extra
// more bytes per replica (a new block, or more of its last one) under
// every directory above it with a quota by storage type.
func (t *Tree) verifyTypeQuota(w *walk, f *inode, extra int64) error {
	if !t.hasTypeQuotas || extra <= 0 {
		return nil
	}
	var delta typeSpaces
	delta.add(t.policyAlong(w, len(w.nodes)-1), f.repl(), extra)
	return t.verifyTypeDelta(w, delta, nil)
}

// verifyTypeReplication checks that file f (the last node of w) may go from
// its replication to repl under the quotas by storage type above it.
func (t *Tree) verifyTypeReplication(w *walk, f *inode, repl uint16) error {
	if !t.hasTypeQuotas || repl <= f.repl() {
		return nil
	}
	policy := t.policyAlong(w, len(w.nodes)-1)
	var before, after typeSpaces
	before.addFile(f, policy)
	per := int64(0)
	if f.repl() > 0 {
		per = f.space() / int64(f.repl())
	}
	after.add(policy, repl, per)
	var delta typeSpaces
	for i := range delta {
		delta[i] = after[i] - before[i]
	}
	return t.verifyTypeDelta(w, delta, nil)
}

// verifyTypeDelta checks adding delta below the parent of w's last node
// against every quota by storage type from there up to the root (but the
// directories skip reports true for), with the usage each keeps and what
// only snapshots keep below it.
func (t *Tree) verifyTypeDelta(w *walk, delta typeSpaces, skip func(*inode) bool) error {
	if delta == (typeSpaces{}) {
		return nil
	}
	for i := len(w.nodes) - 2; i >= 0; i-- {
		d := w.nodes[i]
		if d == nil || !d.isDir() || d.dir().quota == nil || len(d.dir().quota.types) == 0 || (skip != nil && skip(d)) {
			continue
		}
		used := d.dir().quota.tsUsed
		if h := t.heldAt(d); h != nil {
			for k := range used {
				used[k] += h.types[k]
			}
		}
		for _, q := range d.dir().quota.types {
			if q.quota < 0 || delta[q.typ] <= 0 {
				continue
			}
			if used[q.typ]+delta[q.typ] > q.quota {
				return newErr(fmt.Sprintf("Quota by storage type : %s on path : %s is exceeded. quota = %s but space consumed = %s",
					StorageTypeName(q.typ), walkPath(w, i), long2String(q.quota), long2String(used[q.typ]+delta[q.typ])), ErrTypeQuotaExceeded)
			}
		}
	}
	return nil
}

// verifyTypeRename checks moving sw's inode to dw (replacing dw's inode
// when it exists) against the quotas by storage type above dw that are not
// above sw too: the moved subtree counts under the policy it inherits at
// its new place.
func (t *Tree) verifyTypeRename(sw, dw *walk, common func(*inode) bool) error {
	if !t.hasTypeQuotas {
		return nil
	}
	var moved, replaced typeSpaces
	t.typeUsage(sw.last(), t.policyAlong(dw, len(dw.nodes)-2), &moved)
	if old := dw.last(); old != nil {
		t.typeUsage(old, t.policyAlong(dw, len(dw.nodes)-2), &replaced)
	}
	for i := range moved {
		moved[i] -= replaced[i]
	}
	return t.verifyTypeDelta(dw, moved, common)
}

// walkPath is the path of the first i+1 nodes of w.
func walkPath(w *walk, i int) string {
	if i == 0 {
		return "/"
	}
	return dirPath(w.nodes[i])
}

// PlanSetQuotaByStorageType plans setQuota with a storage type (superuser
// only, directories only): ds is the space quota on typ in bytes,
// op.QuotaReset clears it, op.QuotaDontSet keeps it.
func (t *Tree) PlanSetQuotaByStorageType(c Caller, path string, ns, ds int64, typ uint8) ([]op.Op, error) {
	if err := t.superCheck(c); err != nil {
		return nil, err
	}
	if (ns < 0 && ns != op.QuotaDontSet && ns != op.QuotaReset) || (ds < 0 && ds != op.QuotaDontSet && ds != op.QuotaReset) {
		return nil, newErr(fmt.Sprintf("Illegal value for nsQuota or ssQuota : %d and %d", ns, ds), ErrIllegalArgument)
	}
	if !t.cfg.QuotaByStorageTypeEnabled || ns != op.QuotaDontSet {
		return nil, newErr(fmt.Sprintf("Failed to set quota by storage type because eitherdfs.quota.by.storage.type.enabled is set to %v or nsQuota value is illegal %d",
			t.cfg.QuotaByStorageTypeEnabled, ns), ErrUnsupportedAction)
	}
	if !slices.Contains(QuotaStorageTypes, typ) {
		return nil, newErr("Don't support Quota for storage type : "+StorageTypeName(typ), ErrIllegalArgument)
	}
	w, err := t.resolveExisting(c, path, "Directory does not exist: %s")
	if err != nil {
		return nil, err
	}
	d := w.last()
	if !d.isDir() {
		return nil, newErr("`"+w.path+"': Is not a directory", ErrNotDir)
	}
	if ds == op.QuotaDontSet || typeQuotaOf(d, typ) == ds {
		return nil, nil
	}
	return []op.Op{&op.SetQuotaByStorageType{Path: w.path, StorageType: typ, DsQuota: ds}}, nil
}

func (t *Tree) applySetQuotaByStorageType(o *op.SetQuotaByStorageType) error {
	w, d, err := t.existing(o.Path)
	if err != nil {
		return err
	}
	if !d.isDir() {
		return corruptf("set quota by storage type on file %s", o.Path)
	}
	if o.DsQuota < -1 || int(o.StorageType) >= numTypes || o.StorageType == 0 {
		return corruptf("set quota by storage type on %s: bad type %d or value %d", o.Path, o.StorageType, o.DsQuota)
	}
	t.setTypeQuota(d, o.StorageType, o.DsQuota, w)
	return nil
}

// setTypeQuota sets (quota ≥ 0) or clears (-1) d's quota on typ; w is
// d's walk, nil while an image loads (Finish counts the usage then).
func (t *Tree) setTypeQuota(d *inode, typ uint8, quota int64, w *walk) {
	q := d.dir().quota
	if q == nil {
		if quota < 0 {
			return
		}
		q = &quotaData{ns: -1, ds: -1}
		if w != nil {
			q.tsUsed = t.subtreeTypes(d, t.inheritedAt(w, len(w.nodes)-2))
		}
		d.dir().quota = q
	}
	i := slices.IndexFunc(q.types, func(x typeQuota) bool { return x.typ == typ })
	switch {
	case quota < 0 && i >= 0:
		q.types = slices.Delete(q.types, i, i+1)
	case quota < 0:
	case i >= 0:
		q.types[i].quota = quota
	default:
		q.types = append(q.types, typeQuota{typ: typ, quota: quota})
		slices.SortFunc(q.types, func(a, b typeQuota) int { return int(a.typ) - int(b.typ) })
	}
	if len(q.types) == 0 {
		q.types = nil
		if q.ns == -1 && q.ds == -1 && d != t.root {
			d.dir().quota = nil
		}
	}
	if quota >= 0 && !t.hasTypeQuotas {
		t.hasTypeQuotas = true
		if w != nil {
			t.fillTypes(t.root, op.StoragePolicyUnspecified) // from now on kept
		}
	}
	t.heldStale()
}

// exportTypeQuotas are d's quotas by storage type for the image.
func exportTypeQuotas(d *inode) []fsimage.TypeQuota {
	if !d.isDir() || d.dir().quota == nil || len(d.dir().quota.types) == 0 {
		return nil
	}
	out := make([]fsimage.TypeQuota, len(d.dir().quota.types))
	for i, q := range d.dir().quota.types {
		out[i] = fsimage.TypeQuota{Type: q.typ, Quota: q.quota}
	}
	return out
}

// importTypeQuotas gives d the quotas by storage type of an image record.
func (t *Tree) importTypeQuotas(d *inode, qs []fsimage.TypeQuota) error {
	for _, q := range qs {
		if q.Quota < 0 || int(q.Type) >= numTypes || q.Type == 0 {
			return fmt.Errorf("%w: inode %d: quota %d on storage type %d", ErrImage, d.id, q.Quota, q.Type)
		}
		if d.dir().quota == nil {
			d.dir().quota = &quotaData{ns: -1, ds: -1}
		}
		t.setTypeQuota(d, q.Type, q.Quota, nil)
	}
	return nil
}

// TypeQuotaInfo is a quota and the usage on one storage type, as
// getContentSummary and getQuotaUsage report them (-1: no quota).
type TypeQuotaInfo struct {
	Type     uint8
	Quota    int64
	Consumed int64
}

// TypeQuotaInfos are the TypeQuotaInfo of each of QuotaStorageTypes.
type TypeQuotaInfos [5]TypeQuotaInfo

// typeInfos reports n's quotas and usage by storage type: every type that
// supports quotas when any quota or usage is there (as HDFS fills
// typeQuotaInfos); false otherwise.
func (t *Tree) typeInfos(w *walk) (TypeQuotaInfos, bool) {
	if !t.hasTypeQuotas && len(t.feats) == 0 {
		return TypeQuotaInfos{}, false // no policy, no type quota: nothing to sum
	}
	n := w.last()
	var used typeSpaces
	if q := n.dir(); q != nil && q.quota != nil && t.hasTypeQuotas {
		used = q.quota.tsUsed
	} else {
		t.typeUsage(n, t.policyAlong(w, len(w.nodes)-2), &used)
	}
	if n.isDir() {
		h := t.heldBelow(n)
		for k := range used {
			used[k] += h.types[k]
		}
	}
	var out TypeQuotaInfos
	any := false
	for i, typ := range QuotaStorageTypes {
		out[i] = TypeQuotaInfo{Type: typ, Quota: typeQuotaOf(n, typ), Consumed: used[typ]}
		if out[i].Quota >= 0 || out[i].Consumed != 0 {
			any = true
		}
	}
	if !any {
		return TypeQuotaInfos{}, false
	}
	return out, true
}
