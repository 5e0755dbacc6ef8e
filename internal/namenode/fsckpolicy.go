package namenode

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
)

// fsck -storagepolicies: for every block, the storage types its live
// replicas are on, and whether they are those its file's storage policy
// asks for (Hadoop's StoragePolicySummary).

// javaTypeOrder is the order of Hadoop's StorageType enum (RAM_DISK,
// NVDIMM, SSD, DISK, ARCHIVE, PROVIDED), by StorageTypeProto number: fsck
// sorts and prints a block's types in it.
var javaTypeOrder = map[int32]int{4: 0, 6: 1, 2: 2, 1: 3, 3: 4, 5: 5}

// policyCombo is one specified policy and one sorted set of replica types.
type policyCombo struct {
	specified uint8
	types     string // the types in javaTypeOrder, as "DISK,DISK,SSD" names
}

// policySummary counts blocks by policyCombo.
type policySummary struct {
	counts map[policyCombo]int64
	order  []policyCombo // first seen first, for a stable report
	total  int64
}

// add counts one block of a file whose effective policy is policyID, with
// live replicas on storages of the given types.
func (s *policySummary) add(policyID uint8, types []int32) {
	if s.counts == nil {
		s.counts = map[policyCombo]int64{}
	}
	p, _ := namespace.StoragePolicyByID(policyID)
	sorted := slices.Clone(types)
	slices.SortStableFunc(sorted, func(a, b int32) int { return javaTypeOrder[a] - javaTypeOrder[b] })
	names := make([]string, len(sorted))
	for i, t := range sorted {
		names[i] = namespace.StorageTypeName(uint8(t))
	}
	k := policyCombo{specified: p.ID, types: strings.Join(names, ",")}
	if _, ok := s.counts[k]; !ok {
		s.order = append(s.order, k)
	}
	s.counts[k]++
	s.total++
}

// actualPolicy is the first built-in policy (in id order) whose types, sorted,
// are a prefix of the block's and whose last type repeats for the rest, as
// Hadoop matches them; nil when none does.
func actualPolicy(types []string) *namespace.StoragePolicy {
	for _, p := range namespace.StoragePolicies() {
		pt := slices.Clone(p.StorageTypes)
		slices.SortStableFunc(pt, func(a, b string) int { return javaTypeOrder[typeNum(a)] - javaTypeOrder[typeNum(b)] })
		if len(pt) == 0 || len(pt) > len(types) || !slices.Equal(pt, types[:len(pt)]) {
			continue
		}
		ok := true
		for _, t := range types[len(pt):] {
			if t != pt[len(pt)-1] {
				ok = false
			}
		}
		if ok {
			return &p
		}
	}
	return nil
}

func typeNum(name string) int32 {
	for _, t := range []int32{1, 2, 3, 4, 5, 6} {
		if namespace.StorageTypeName(uint8(t)) == name {
			return t
		}
	}
	return 0
}

// descriptor is "DISK:2,SSD:1(ONE_SSD)": the count of each type, and the
// policy those types satisfy when one does.
func descriptor(types []string, actual *namespace.StoragePolicy) string {
	var b strings.Builder
	for i := 0; i < len(types); {
		j := i
		for j < len(types) && types[j] == types[i] {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s:%d", types[i], j-i)
		i = j
	}
	if actual != nil {
		fmt.Fprintf(&b, "(%s)", actual.Name)
	}
	return b.String()
}

// String is the report, as Hadoop's StoragePolicySummary prints it.
func (s *policySummary) String() string {
	order := slices.Clone(s.order)
	slices.SortStableFunc(order, func(a, b policyCombo) int {
		ca, cb := s.counts[a], s.counts[b]
		switch {
		case ca > cb:
			return -1
		case ca < cb:
			return 1
		}
		return 0
	})
	var ok, bad strings.Builder
	ok.WriteString("\nBlocks satisfying the specified storage policy:\nStorage Policy                  # of blocks       % of blocks\n")
	for _, k := range order {
		n := s.counts[k]
		var types []string
		if k.types != "" {
			types = strings.Split(k.types, ",")
		}
		actual := actualPolicy(types)
		pct := fmt.Sprintf("%.4f%%", float64(n)*100/float64(s.total))
		if actual != nil && actual.ID == k.specified {
			fmt.Fprintf(&ok, "%-25s %10d  %20s\n", descriptor(types, actual), n, pct)
			continue
		}
		if bad.Len() == 0 {
			bad.WriteString("\nBlocks NOT satisfying the specified storage policy:\nStorage Policy                  Specified Storage Policy      # of blocks       % of blocks\n")
		}
		spec, _ := namespace.StoragePolicyByID(k.specified)
		fmt.Fprintf(&bad, "%-35s %-20s %10d  %20s\n", descriptor(types, actual), spec.Name, n, pct)
	}
	if bad.Len() == 0 {
		bad.WriteString("\nAll blocks satisfy specified storage policy.\n")
	}
	return ok.String() + bad.String()
}

// addFile counts the blocks of a file for the summary: each block with at
// least one live replica, by the types of its replicas that are not
// corrupt.
func (s *policySummary) addFile(policyID uint8, blocks []blockmgmt.FsckBlock) {
	for _, b := range blocks {
		var types []int32
		for _, r := range b.Replicas {
			if r.State == "CORRUPT" {
				continue
			}
			t := r.StorageType
			if t == 0 {
				t = blockmgmt.TypeDisk
			}
			types = append(types, t)
		}
		if len(types) > 0 {
			s.add(policyID, types)
		}
	}
}
