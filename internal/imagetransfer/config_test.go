package imagetransfer

import (
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

func TestConfigFrom(t *testing.T) {
	cfg, err := ConfigFrom(conf.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if cfg != DefaultConfig() {
		t.Fatalf("defaults: %+v, want %+v", cfg, DefaultConfig())
	}
	if cfg.Timeout != time.Minute || cfg.ChunkSize != 65536 || cfg.BandwidthPerSec != 0 || cfg.BootstrapBandwidthPerSec != 0 {
		t.Fatalf("not Hadoop's defaults: %+v", cfg)
	}
	c := conf.Defaults().With(
		conf.KeyValue{Key: conf.DFSImageTransferTimeout, Value: "5s"},
		conf.KeyValue{Key: conf.DFSImageTransferBandwidthPerSec, Value: "10m"},
		conf.KeyValue{Key: conf.DFSImageTransferBootstrapBandwidthPerSec, Value: "1048576"},
		conf.KeyValue{Key: conf.DFSImageTransferChunkSize, Value: "4096"},
	)
	cfg, err = ConfigFrom(c)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Timeout != 5*time.Second || cfg.BandwidthPerSec != 10<<20 || cfg.BootstrapBandwidthPerSec != 1<<20 || cfg.ChunkSize != 4096 {
		t.Fatalf("overrides: %+v", cfg)
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct {
		key, value string
	}{
		{conf.DFSImageTransferTimeout, "soon"},
		{conf.DFSImageTransferTimeout, "-1"},
		{conf.DFSImageTransferBandwidthPerSec, "fast"},
		{conf.DFSImageTransferBandwidthPerSec, "-5"},
		{conf.DFSImageTransferBootstrapBandwidthPerSec, "-1k"},
		{conf.DFSImageTransferChunkSize, "0"},
		{conf.DFSImageTransferChunkSize, "1073741824"},
		{conf.DFSImageTransferChunkSize, "64k"},
	} {
		_, err := ConfigFrom(conf.Defaults().With(conf.KeyValue{Key: c.key, Value: c.value}))
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s=%s: err = %v, want one naming the key", c.key, c.value, err)
		}
	}
	bad := DefaultConfig()
	bad.MaxImageSize = 0
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "maximum image size") {
		t.Errorf("MaxImageSize 0: %v", err)
	}
}
