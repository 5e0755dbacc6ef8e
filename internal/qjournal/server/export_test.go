package server

// TxnsServedViaRPC is the journal's count of transactions served by
// getJournaledEdits.
func TxnsServedViaRPC(j *Journal) int64 { return j.metric.txnsServedViaRPC.Load() }
