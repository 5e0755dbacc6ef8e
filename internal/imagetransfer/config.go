package imagetransfer

import (
	"errors"
	"fmt"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// Defaults (Hadoop's hdfs-default.xml, except DefaultMaxImageSize, which
// Hadoop does not have).
const (
	DefaultTimeout   = 60 * time.Second // dfs.image.transfer.timeout
	DefaultChunkSize = 64 << 10         // dfs.image.transfer.chunksize
	// DefaultMaxImageSize bounds an upload's declared size: 1 TiB, about 30
	// times the largest images reported for HDFS (35 GB for 316 million
	// inodes).
	DefaultMaxImageSize int64 = 1 << 40
	// MaxChunkSize bounds dfs.image.transfer.chunksize: the copy buffer of
	// every transfer is one chunk.
	MaxChunkSize = 16 << 20
)

// Config is the image transfer settings of one process, shared by its
// server and client. Build it with ConfigFrom; tests may fill it directly.
type Config struct {
	// Timeout is dfs.image.transfer.timeout (60 s): how long a transfer may
	// make no progress (connecting, waiting for the answer, each read or write
	// of the body), on either side. 0 means no limit, as in Hadoop.
	Timeout time.Duration
	// BandwidthPerSec is dfs.image.transfer.bandwidthPerSec (0 = unthrottled):
	// bytes per second for each transfer, on the sending side of an upload and
	// of a download, and on the receiving side of an upload.
	BandwidthPerSec int64
	// BootstrapBandwidthPerSec is
	// dfs.image.transfer-bootstrap-standby.bandwidthPerSec (0 = unthrottled):
	// what the server sends a download marked bootstrapstandby=true at
	// (hdfs namenode -bootstrapStandby), instead of BandwidthPerSec.
	BootstrapBandwidthPerSec int64
	// ChunkSize is dfs.image.transfer.chunksize (65536): the copy unit of
	// every transfer, the unit the throttle meters, and the size above which
	// an upload is sent with chunked transfer encoding.
	ChunkSize int
	// MaxImageSize is the largest upload the server accepts (no Hadoop key;
	// DefaultMaxImageSize). A request declaring more is refused with 413
	// before a byte of it is read.
	MaxImageSize int64
}

// DefaultConfig returns Hadoop's defaults.
func DefaultConfig() Config {
	return Config{
		Timeout:      DefaultTimeout,
		ChunkSize:    DefaultChunkSize,
		MaxImageSize: DefaultMaxImageSize,
	}
}

// ConfigFrom reads the image transfer keys. Errors name the key.
func ConfigFrom(c *conf.Conf) (Config, error) {
	cfg := DefaultConfig()
	var errs []error
	var err error
	if cfg.Timeout, err = c.Duration(conf.DFSImageTransferTimeout); err != nil {
		errs = append(errs, err)
	}
	if cfg.BandwidthPerSec, err = c.Size(conf.DFSImageTransferBandwidthPerSec); err != nil {
		errs = append(errs, err)
	}
	if cfg.BootstrapBandwidthPerSec, err = c.Size(conf.DFSImageTransferBootstrapBandwidthPerSec); err != nil {
		errs = append(errs, err)
	}
	chunk, err := c.Int32(conf.DFSImageTransferChunkSize)
	if err != nil {
		errs = append(errs, err)
	}
	cfg.ChunkSize = int(chunk)
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return cfg, cfg.Validate()
}

// Validate rejects values the transfer cannot work with, naming the key.
func (c Config) Validate() error {
	var errs []error
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("imagetransfer: %s must not be negative, have %v", conf.DFSImageTransferTimeout, c.Timeout))
	}
	if c.BandwidthPerSec < 0 {
		errs = append(errs, fmt.Errorf("imagetransfer: %s must not be negative (0 turns throttling off), have %d", conf.DFSImageTransferBandwidthPerSec, c.BandwidthPerSec))
	}
	if c.BootstrapBandwidthPerSec < 0 {
		errs = append(errs, fmt.Errorf("imagetransfer: %s must not be negative (0 turns throttling off), have %d", conf.DFSImageTransferBootstrapBandwidthPerSec, c.BootstrapBandwidthPerSec))
	}
	if c.ChunkSize < 1 || c.ChunkSize > MaxChunkSize {
		errs = append(errs, fmt.Errorf("imagetransfer: %s must be between 1 and %d bytes, have %d", conf.DFSImageTransferChunkSize, MaxChunkSize, c.ChunkSize))
	}
	if c.MaxImageSize < 1 {
		errs = append(errs, fmt.Errorf("imagetransfer: the maximum image size must be positive, have %d", c.MaxImageSize))
	}
	return errors.Join(errs...)
}
