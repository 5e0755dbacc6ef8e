package recovery

import (
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
)

// FuzzDecide feeds Decide answers built from arbitrary bytes (the answers come
// from other DataNodes) and checks that it never panics and that an update
// plan only keeps candidates, of the best state, at least as long as the new
// length.
func FuzzDecide(f *testing.F) {
	f.Add([]byte{0, 0, 40, 100, 0, 1, 30, 100}, int64(-1))
	f.Add([]byte{0, 1, 40, 100, 3, 2, 0, 0, 2, 2, 10, 101}, int64(20))
	f.Fuzz(func(t *testing.T, data []byte, truncate int64) {
		b := Block{ID: 9, GenStamp: 100, RecoveryID: 110}
		if truncate >= 0 {
			b.Truncate, b.NewLength = true, truncate
		}
		var answers []Answer
		for i := 0; i+4 <= len(data) && len(answers) < 16; i += 4 {
			answers = append(answers, Answer{
				Outcome: Outcome(data[i] % 5), // includes an unknown outcome
				ReplicaInfo: ReplicaInfo{
					Node:     len(answers),
					State:    storage.ReplicaState(data[i+1] % 6),
					Length:   int64(data[i+2]) - 8,
					GenStamp: int64(data[i+3]),
				},
			})
		}
		p, err := Decide(b, answers)
		if err != nil || p.Action != PlanUpdate {
			return
		}
		if len(p.Participants) == 0 {
			t.Fatalf("update without participants")
		}
		for _, n := range p.Participants {
			a := answers[n]
			if a.GenStamp < b.GenStamp || a.GenStamp >= b.RecoveryID || a.Length <= 0 || a.Length < p.NewLength {
				t.Fatalf("bad participant %+v for plan %+v", a, p)
			}
			if a.State != p.BestState && !(p.BestState == storage.Finalized && a.State == storage.RBW) {
				t.Fatalf("participant %+v not of best state %v", a, p.BestState)
			}
		}
		if _, err := p.Commit(p.Participants); err != nil {
			t.Fatal(err)
		}
	})
}
