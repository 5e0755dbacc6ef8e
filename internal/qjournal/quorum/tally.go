package quorum

import (
	"fmt"
	"strings"
)

// Majority is how many of n nodes make a quorum: n/2+1.
func Majority(n int) int { return n/2 + 1 }

// MajorityString is "2/3" for n = 3, as Hadoop prints quorum sizes.
func MajorityString(n int) string { return fmt.Sprintf("%d/%d", Majority(n), n) }

// Tally counts the answers of one call made to n nodes (indexes 0..n-1).
// Each node answers at most once; a later answer of the same node is
// ignored.
type Tally struct {
	n        int
	answered []bool
	errs     []error
	ok, fail int
}

// NewTally starts the accounting of a call to n nodes.
func NewTally(n int) *Tally {
	return &Tally{n: n, answered: make([]bool, n), errs: make([]error, n)}
}

// Size is the number of nodes the call went to.
func (t *Tally) Size() int { return t.n }

// Success records that node i answered without error.
func (t *Tally) Success(i int) {
	if i < 0 || i >= t.n || t.answered[i] {
		return
	}
	t.answered[i] = true
	t.ok++
}

// Failure records that node i answered with err (or could not be reached).
func (t *Tally) Failure(i int, err error) {
	if i < 0 || i >= t.n || t.answered[i] {
		return
	}
	t.answered[i] = true
	t.errs[i] = err
	t.fail++
}

// Successes and Failures count the answers so far.
func (t *Tally) Successes() int { return t.ok }

// Failures counts the failed answers so far.
func (t *Tally) Failures() int { return t.fail }

// Answered reports whether node i answered.
func (t *Tally) Answered(i int) bool { return i >= 0 && i < t.n && t.answered[i] }

// Succeeded reports whether node i answered without error.
func (t *Tally) Succeeded(i int) bool { return t.Answered(i) && t.errs[i] == nil }

// Reached reports whether a majority succeeded.
func (t *Tally) Reached() bool { return t.ok >= Majority(t.n) }

// Hopeless reports whether so many nodes failed that a majority can no
// longer succeed.
func (t *Tally) Hopeless() bool { return t.fail > t.n-Majority(t.n) }

// Done reports whether waiting longer can change the outcome: a majority
// succeeded, a majority can no longer succeed, or every node answered.
func (t *Tally) Done() bool { return t.Reached() || t.Hopeless() || t.ok+t.fail == t.n }

// Err is nil when a majority succeeded; otherwise a *QuorumError naming
// each node's outcome (names[i] names node i; op the call).
func (t *Tally) Err(op string, names []string) error {
	if t.Reached() {
		return nil
	}
	e := &QuorumError{Op: op, Size: t.n}
	for i := 0; i < t.n; i++ {
		name := fmt.Sprint(i)
		if i < len(names) {
			name = names[i]
		}
		switch {
		case !t.answered[i]:
			e.Pending = append(e.Pending, name)
		case t.errs[i] == nil:
			e.Succeeded = append(e.Succeeded, name)
		default:
			e.Failed = append(e.Failed, NodeError{Node: name, Err: t.errs[i]})
		}
	}
	return e
}

// NodeError is one node's failure in a QuorumError.
type NodeError struct {
	Node string
	Err  error
}

// QuorumError says a call did not reach a majority: which nodes succeeded,
// which failed and how, and which never answered.
type QuorumError struct {
	Op        string
	Size      int
	Succeeded []string
	Failed    []NodeError
	Pending   []string
}

// Error reads like Hadoop's QuorumException.
func (e *QuorumError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: Got too many exceptions to achieve quorum size %s. ", e.Op, MajorityString(e.Size))
	if len(e.Succeeded) > 0 {
		fmt.Fprintf(&b, "%d successful responses: %s. ", len(e.Succeeded), strings.Join(e.Succeeded, ", "))
	}
	var parts []string
	if len(e.Failed) > 0 {
		var fb strings.Builder
		fmt.Fprintf(&fb, "%d exceptions thrown:", len(e.Failed))
		for i, f := range e.Failed {
			if i > 0 {
				fb.WriteString(";")
			}
			fmt.Fprintf(&fb, " %s: %v", f.Node, f.Err)
		}
		parts = append(parts, fb.String())
	}
	if len(e.Pending) > 0 {
		parts = append(parts, "no answer from "+strings.Join(e.Pending, ", "))
	}
	b.WriteString(strings.Join(parts, "; "))
	return b.String()
}

// Unwrap returns the nodes' errors, so errors.Is finds a refusal any of
// them gave.
func (e *QuorumError) Unwrap() []error {
	errs := make([]error, 0, len(e.Failed))
	for _, f := range e.Failed {
		errs = append(errs, f.Err)
	}
	return errs
}

// NextEpoch is the epoch a new writer proposes: one above every promise
// the nodes reported.
func NextEpoch(promised []uint64) uint64 {
	var m uint64
	for _, p := range promised {
		m = max(m, p)
	}
	return m + 1
}

// DurableCount is how many transactions from a given txid on are held by
// a majority of the n nodes, given the counts some of them reported (a
// node that did not answer holds none as far as the reader knows): the
// majority-th largest count. It is 0 when fewer than a majority answered.
func DurableCount(counts []int, n int) int {
	m := Majority(n)
	if len(counts) < m {
		return 0
	}
	s := append([]int(nil), counts...)
	// Sort descending; the slices are tiny (one entry per JournalNode).
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] > s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[m-1]
}
