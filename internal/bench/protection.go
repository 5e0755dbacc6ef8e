package bench

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// protection is one data transfer protection `hdfs bench io -protection`
// measures: the cluster's keys and the client's options.
type protection struct {
	label  string
	keys   []conf.KeyValue
	client func(*client.Options)
}

var tokensOn = conf.KeyValue{Key: conf.DFSBlockAccessTokenEnable, Value: "true"}

// protections are the levels by name. Every one runs with block access
// tokens, over TCP.
var protections = map[string]protection{
	"none": {"SIMPLE, no SASL", []conf.KeyValue{tokensOn}, func(*client.Options) {}},
	"authentication": {"SASL authentication", []conf.KeyValue{tokensOn, {Key: conf.DFSDataTransferProtection, Value: "authentication"}},
		func(o *client.Options) { o.DataTransferProtection = "authentication" }},
	"integrity": {"SASL integrity (HMAC-MD5)", []conf.KeyValue{tokensOn, {Key: conf.DFSDataTransferProtection, Value: "integrity"}},
		func(o *client.Options) { o.DataTransferProtection = "integrity" }},
	"privacy": {"SASL privacy (RC4 + HMAC-MD5)", []conf.KeyValue{tokensOn, {Key: conf.DFSDataTransferProtection, Value: "privacy"}},
		func(o *client.Options) { o.DataTransferProtection = "privacy" }},
	"privacy+aes": {"SASL privacy, AES/CTR streams", []conf.KeyValue{tokensOn, {Key: conf.DFSDataTransferProtection, Value: "privacy"},
		{Key: conf.DFSEncryptDataTransferCipherSuites, Value: "AES/CTR/NoPadding"}},
		func(o *client.Options) {
			o.DataTransferProtection, o.DataTransferCipherSuites = "privacy", "AES/CTR/NoPadding"
		}},
	"encrypt": {"dfs.encrypt.data.transfer, AES/CTR", []conf.KeyValue{tokensOn, {Key: conf.DFSEncryptDataTransfer, Value: "true"},
		{Key: conf.DFSEncryptDataTransferCipherSuites, Value: "AES/CTR/NoPadding"}},
		func(o *client.Options) { o.EncryptDataTransfer, o.DataTransferCipherSuites = true, "AES/CTR/NoPadding" }},
}

// ProtectionNames lists the names -protection takes, in table order.
var ProtectionNames = []string{"none", "authentication", "integrity", "privacy", "privacy+aes", "encrypt"}

// RunIOProtections runs the I/O benchmark once per protection in names,
// each on a fresh in-process cluster, one after the other in this run,
// and ends with a table of throughput and CPU per MiB (this process:
// client and DataNodes) beside the first level's.
func RunIOProtections(ctx context.Context, o IOOptions, names []string, out io.Writer) error {
	if len(o.Addrs) > 0 {
		return fmt.Errorf("%w: -protection runs in-process clusters; it cannot be used with -fs", ErrBadOptions)
	}
	type row struct {
		name string
		sums []phaseSummary
	}
	var rows []row
	for _, n := range names {
		if _, ok := protections[n]; !ok {
			return fmt.Errorf("%w: unknown protection %q (want %s)", ErrBadOptions, n, strings.Join(ProtectionNames, ", "))
		}
		o.Protection = n
		sums, err := runIO(ctx, o, out)
		if err != nil {
			return fmt.Errorf("protection %s: %w", n, err)
		}
		rows = append(rows, row{n, sums})
	}
	fmt.Fprintf(out, "| protection | phase | MB/s | CPU ms per MiB | CPU vs %s |\n|---|---|---|---|---|\n", rows[0].name)
	base := map[string]float64{}
	for i, r := range rows {
		for _, s := range r.sums {
			cpu := s.cpu.Seconds() * 1000 / (float64(s.bytes) / (1 << 20))
			if i == 0 {
				base[s.phase] = cpu
			}
			ratio := "1.00×"
			if b := base[s.phase]; b > 0 {
				ratio = fmt.Sprintf("%.2f×", cpu/b)
			}
			fmt.Fprintf(out, "| %s (%s) | %s | %.1f | %.2f | %s |\n", r.name, protections[r.name].label, s.phase,
				float64(s.bytes)/1e6/s.sumT.Seconds(), cpu, ratio)
		}
	}
	return nil
}
