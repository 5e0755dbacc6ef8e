package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/bench"
	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// runBenchScanner is `hdfs bench scanner`.
func runBenchScanner(inv *Invocation, args []string) int {
	usage := func(format string, a ...any) int {
		fmt.Fprintf(inv.Env.Stderr, "hdfs bench scanner: "+format+"\n", a...)
		fmt.Fprint(inv.Env.Stderr, benchUsage)
		return exitUsage
	}
	o := bench.ScannerOptions{
		Rates:       []int64{1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 0},
		Data:        512 << 20,
		ReplicaSize: 4 << 20,
		MinWindow:   10 * time.Second,
		WriteSize:   1 << 30,
		WriteRates:  []int64{1 << 20, 0},
		Rounds:      3,
	}
	sizes := func(v string) ([]int64, error) {
		var out []int64
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			n, err := conf.ParseSize(s)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%q is not a size", s)
			}
			out = append(out, n)
		}
		return out, nil
	}
	level := slog.LevelError
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-help" || a == "--help" || a == "-h" {
			fmt.Fprint(inv.Env.Stdout, benchUsage)
			return exitOK
		}
		if i+1 >= len(args) {
			return usage("%s needs a value", a)
		}
		i++
		v := args[i]
		var err error
		switch a {
		case "-rates":
			o.Rates, err = sizes(v)
		case "-writeRates":
			o.WriteRates, err = sizes(v)
		case "-data":
			o.Data, err = conf.ParseSize(v)
		case "-replicaSize":
			o.ReplicaSize, err = conf.ParseSize(v)
		case "-write":
			o.WriteSize, err = conf.ParseSize(v)
		case "-window":
			o.MinWindow, err = time.ParseDuration(v)
		case "-rounds":
			o.Rounds, err = strconv.Atoi(v)
		case "-logLevel":
			level, err = parseLevel(v)
		default:
			return usage("unknown option %s", a)
		}
		if err != nil {
			return usage("%s %s: %v", a, v, err)
		}
	}
	o.Logger = slog.New(slog.NewTextHandler(inv.Env.Stderr, &slog.HandlerOptions{Level: level}))
	if err := bench.RunScanner(context.Background(), o, inv.Env.Stdout); err != nil {
		fmt.Fprintf(inv.Env.Stderr, "hdfs bench scanner: %v\n", err)
		return exitFail
	}
	return exitOK
}
