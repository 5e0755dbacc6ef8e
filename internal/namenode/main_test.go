package namenode_test

import (
	"io"
	"log/slog"
	"os"
)

func quietLogger() *slog.Logger {
	if os.Getenv("NN_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
