package client_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/client/clienttest"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
)

func startCluster(t testing.TB, cfg clienttest.Config) (*clienttest.Cluster, *client.FileSystem) {
	t.Helper()
	c, err := clienttest.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := client.New(client.Options{Addresses: []string{c.Addr()}, User: "alice"})
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		fsys.Close()
		c.Close()
	})
	c.Mkdir("/user/alice", "alice")
	return c, fsys
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func pattern(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestWriteReadRoundTrip(t *testing.T) {
	const bs = 1 << 20
	_, fsys := startCluster(t, clienttest.Config{DataNodes: 2, BlockSize: bs, Replication: 2})
	ctx := ctxT(t)
	for _, n := range []int{0, 1, 511, 512, 513, 64 << 10, 3*bs + bs/2} {
		name := "/f" + strings.Repeat("x", n%7)
		data := pattern(n, uint64(n))
		if err := fsys.WriteFile(ctx, name, data, true); err != nil {
			t.Fatalf("%d bytes: write: %v", n, err)
		}
		got, err := fsys.ReadFile(ctx, name)
		if err != nil {
			t.Fatalf("%d bytes: read: %v", n, err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back %d bytes, differs", n, len(got))
		}
		fi, err := fsys.Stat(ctx, name)
		if err != nil || fi.Size() != int64(n) {
			t.Fatalf("%d bytes: stat size %v, %v", n, fi, err)
		}
		// Read through small reads too.
		r, err := fsys.Open(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := io.CopyBuffer(&buf, struct{ io.Reader }{r}, make([]byte, 1000)); err != nil {
			t.Fatalf("%d bytes: small reads: %v", n, err)
		}
		r.Close()
		if !bytes.Equal(buf.Bytes(), data) {
			t.Fatalf("%d bytes: small reads differ", n)
		}
	}
}

func TestBlocksSplitAtBlockSize(t *testing.T) {
	const bs = 1 << 20
	c, fsys := startCluster(t, clienttest.Config{BlockSize: bs, Replication: 1})
	ctx := ctxT(t)
	data := pattern(3*bs+bs/2, 1)
	w, err := fsys.Create(ctx, "/big")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := w.ReadFrom(bytes.NewReader(data)); err != nil || n != int64(len(data)) {
		t.Fatalf("ReadFrom = %d, %v", n, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	locs, err := fsys.BlockLocations(ctx, "/big", 0, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for _, l := range locs {
		sizes = append(sizes, l.Length)
	}
	if len(sizes) != 4 || sizes[0] != bs || sizes[1] != bs || sizes[2] != bs || sizes[3] != bs/2 {
		t.Fatalf("block sizes %v", sizes)
	}
	var addBlocks int
	for _, call := range c.Calls() {
		if call == "addBlock /big" {
			addBlocks++
		}
	}
	if addBlocks != 4 {
		t.Fatalf("%d addBlock calls, want 4", addBlocks)
	}
}

func TestUnalignedFlush(t *testing.T) {
	_, fsys := startCluster(t, clienttest.Config{BlockSize: 4096, Replication: 1})
	ctx := ctxT(t)
	w, err := fsys.Create(ctx, "/flushed")
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i, n := range []int{1, 100, 511, 1, 600, 1024, 3000, 7, 513} {
		p := pattern(n, uint64(i))
		want = append(want, p...)
		if _, err := w.Write(p); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			err = w.Flush()
		} else {
			err = w.Sync()
		}
		if err != nil {
			t.Fatalf("flush %d: %v", i, err)
		}
		// A reader sees everything flushed while the file is open.
		got, err := fsys.ReadFile(ctx, "/flushed")
		if err != nil {
			t.Fatalf("read while open: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("after flush %d: read %d bytes, want %d", i, len(got), len(want))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := fsys.ReadFile(ctx, "/flushed")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after close: %d bytes, %v", len(got), err)
	}
}

func TestAppend(t *testing.T) {
	_, fsys := startCluster(t, clienttest.Config{BlockSize: 2048, Replication: 1})
	ctx := ctxT(t)
	want := pattern(1000, 1)
	if err := fsys.WriteFile(ctx, "/a", want, false); err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{10, 1100, 2048, 0, 5} {
		w, err := fsys.Append(ctx, "/a")
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		p := pattern(n, uint64(i+10))
		if _, err := w.Write(p); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("close append %d: %v", i, err)
		}
		want = append(want, p...)
		got, err := fsys.ReadFile(ctx, "/a")
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("after append %d: %d bytes (want %d), %v", i, len(got), len(want), err)
		}
	}
}

func TestReadAtAndSeek(t *testing.T) {
	const bs = 64 << 10
	_, fsys := startCluster(t, clienttest.Config{BlockSize: bs, Replication: 1})
	ctx := ctxT(t)
	data := pattern(5*bs+1234, 3)
	if err := fsys.WriteFile(ctx, "/r", data, false); err != nil {
		t.Fatal(err)
	}
	r, err := fsys.Open(ctx, "/r")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 50; i++ {
		off := rng.Int64N(int64(len(data)))
		n := rng.IntN(3 * bs)
		buf := make([]byte, n)
		k, err := r.ReadAt(buf, off)
		wantN := min(n, len(data)-int(off))
		if k != wantN || (k < n && err != io.EOF) || (k == n && err != nil) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v", n, off, k, err)
		}
		if !bytes.Equal(buf[:k], data[off:off+int64(k)]) {
			t.Fatalf("ReadAt(%d, %d): wrong data", n, off)
		}
	}
	for _, tc := range []struct {
		off    int64
		whence int
		want   int64
	}{{100, io.SeekStart, 100}, {bs, io.SeekCurrent, bs + 100}, {-10, io.SeekEnd, int64(len(data)) - 10}} {
		pos, err := r.Seek(tc.off, tc.whence)
		if err != nil || pos != tc.want {
			t.Fatalf("Seek(%d, %d) = %d, %v", tc.off, tc.whence, pos, err)
		}
		buf := make([]byte, 7)
		k, _ := io.ReadFull(r, buf)
		if !bytes.Equal(buf[:k], data[pos:pos+int64(k)]) {
			t.Fatalf("read after Seek to %d: wrong data", pos)
		}
		if _, err := r.Seek(pos, io.SeekStart); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Seek(-1, io.SeekStart); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("Seek(-1) = %v", err)
	}
	// WriterTo from the middle.
	if _, err := r.Seek(bs-3, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if n, err := r.WriteTo(&buf); err != nil || n != int64(len(data))-(bs-3) {
		t.Fatalf("WriteTo = %d, %v", n, err)
	}
	if !bytes.Equal(buf.Bytes(), data[bs-3:]) {
		t.Fatal("WriteTo: wrong data")
	}
}

func TestChecksumFailover(t *testing.T) {
	c, fsys := startCluster(t, clienttest.Config{DataNodes: 2, Replication: 2})
	ctx := ctxT(t)
	data := pattern(3000, 9)
	if err := fsys.WriteFile(ctx, "/c", data, false); err != nil {
		t.Fatal(err)
	}
	c.DataNode(0).CorruptReads.Store(true)
	got, err := fsys.ReadFile(ctx, "/c")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("read corrupted data")
	}
	bad := c.BadBlocks()
	if len(bad) != 1 || !strings.HasSuffix(bad[0], " "+c.DataNode(0).Addr()) {
		t.Fatalf("bad block reports %v, want one for %s", bad, c.DataNode(0).Addr())
	}
	// The DataNode counts the status after the client has moved on.
	for c.DataNode(1).ChecksumOK.Load() == 0 {
		if ctx.Err() != nil {
			t.Fatal("no CHECKSUM_OK sent to the good replica")
		}
		time.Sleep(time.Millisecond)
	}
	// Both replicas bad: after three rounds over the locations the error
	// names the block and the nodes.
	client.SetRetryWindow(fsys, time.Millisecond)
	c.DataNode(1).CorruptReads.Store(true)
	reads := c.DataNode(0).Reads.Load()
	_, err = fsys.ReadFile(ctx, "/c")
	if !errors.Is(err, client.ErrNoReplica) || !strings.Contains(err.Error(), c.DataNode(1).Addr()) || !strings.Contains(err.Error(), "blk_") {
		t.Fatalf("all replicas bad: %v", err)
	}
	if got := c.DataNode(0).Reads.Load() - reads; got != 3 {
		t.Fatalf("%d reads of the bad replica, want 3 rounds", got)
	}
}

func TestCompleteRetried(t *testing.T) {
	c, fsys := startCluster(t, clienttest.Config{Replication: 1})
	ctx := ctxT(t)
	c.CompleteFalse.Store(2)
	if err := fsys.WriteFile(ctx, "/x", []byte("hello"), false); err != nil {
		t.Fatal(err)
	}
	var completes int
	for _, call := range c.Calls() {
		if call == "complete /x" {
			completes++
		}
	}
	if completes != 3 {
		t.Fatalf("%d complete calls, want 3", completes)
	}
}

func TestChecksumCRC32Read(t *testing.T) {
	for _, typ := range []datatransfer.ChecksumType{datatransfer.ChecksumCRC32, datatransfer.ChecksumCRC32C} {
		_, fsys := startCluster(t, clienttest.Config{Replication: 1, Checksum: datatransfer.DataChecksum{Type: typ, BytesPerChecksum: 512}})
		ctx := ctxT(t)
		data := pattern(70000, 4)
		if err := fsys.WriteFile(ctx, "/crc", data, false); err != nil {
			t.Fatal(err)
		}
		got, err := fsys.ReadFile(ctx, "/crc")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: %v", typ, err)
		}
	}
}

func TestFileChecksum(t *testing.T) {
	_, fsys := startCluster(t, clienttest.Config{Replication: 1})
	ctx := ctxT(t)
	if err := fsys.WriteFile(ctx, "/foo.txt", []byte("bar\n"), false); err != nil {
		t.Fatal(err)
	}
	sum, err := fsys.Checksum(ctx, "/foo.txt")
	if err != nil {
		t.Fatal(err)
	}
	if sum.Algorithm != "MD5-of-0MD5-of-512CRC32C" {
		t.Errorf("algorithm %q", sum.Algorithm)
	}
	if got := hex.EncodeToString(sum.MD5()); got != "27c076e4987344253650d3335a5d08ce" {
		t.Errorf("md5 %s", got)
	}
	if got := hex.EncodeToString(sum.Bytes); got != "00000200"+"0000000000000000"+"27c076e4987344253650d3335a5d08ce" {
		t.Errorf("bytes %s", got)
	}
}

func TestTruncateAndRecoverLease(t *testing.T) {
	_, fsys := startCluster(t, clienttest.Config{BlockSize: 1024, Replication: 1})
	ctx := ctxT(t)
	data := pattern(3000, 5)
	if err := fsys.WriteFile(ctx, "/t", data, false); err != nil {
		t.Fatal(err)
	}
	done, err := fsys.Truncate(ctx, "/t", 2048)
	if err != nil || !done {
		t.Fatalf("truncate on a block boundary = %v, %v", done, err)
	}
	done, err = fsys.Truncate(ctx, "/t", 1500)
	if err != nil || done {
		t.Fatalf("truncate inside a block = %v, %v", done, err)
	}
	got, err := fsys.ReadFile(ctx, "/t")
	if err != nil || !bytes.Equal(got, data[:1500]) {
		t.Fatalf("after truncate: %d bytes, %v", len(got), err)
	}
	if _, err := fsys.Truncate(ctx, "/nope", 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("truncate missing: %v", err)
	}
	w, err := fsys.Create(ctx, "/open")
	if err != nil {
		t.Fatal(err)
	}
	ok, err := fsys.RecoverLease(ctx, "/open")
	if err != nil || !ok {
		t.Fatalf("recoverLease = %v, %v", ok, err)
	}
	// The writer lost its lease: closing fails.
	if err := w.Close(); err == nil {
		t.Fatal("close after lease recovery succeeded")
	}
}

func TestOpenErrors(t *testing.T) {
	_, fsys := startCluster(t, clienttest.Config{})
	ctx := ctxT(t)
	if _, err := fsys.Open(ctx, "/missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open missing: %v", err)
	}
	if err := fsys.WriteFile(ctx, "/e", nil, false); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile(ctx, "/e", nil, false); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("create existing: %v", err)
	}
	w, err := fsys.Create(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, client.ErrWriterClosed) {
		t.Fatalf("write after close: %v", err)
	}
}

func BenchmarkSequentialRead(b *testing.B) {
	_, fsys := startCluster(b, clienttest.Config{Replication: 1})
	ctx := context.Background()
	data := pattern(64<<20, 1)
	if err := fsys.WriteFile(ctx, "/bench", data, false); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := fsys.Open(ctx, "/bench")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}

func BenchmarkWrite(b *testing.B) {
	_, fsys := startCluster(b, clienttest.Config{Replication: 1})
	ctx := context.Background()
	data := pattern(32<<20, 1)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := fsys.WriteFile(ctx, "/bench", data, true); err != nil {
			b.Fatal(err)
		}
	}
}

func TestIOFS(t *testing.T) {
	_, fsys := startCluster(t, clienttest.Config{BlockSize: 1024, Replication: 1})
	ctx := ctxT(t)
	files := map[string][]byte{
		"/d/a.txt":     []byte("hello\n"),
		"/d/sub/b.bin": pattern(1500, 1),
		"/d/empty":     nil,
	}
	for name, data := range files {
		if err := fsys.MkdirAll(ctx, name[:strings.LastIndex(name, "/")], 0o755); err != nil {
			t.Fatal(err)
		}
		if err := fsys.WriteFile(ctx, name, data, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.MkdirAll(ctx, "/d/emptydir", 0o755); err != nil {
		t.Fatal(err)
	}
	sub, err := fs.Sub(fsys.FS(ctx), "d")
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(sub, "a.txt", "sub/b.bin", "empty", "emptydir"); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.ReadFile(fsys.FS(ctx), "nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

func TestPipelineRecovery(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after int32 // packets before the first DataNode drops out
		size  int
	}{
		{"mid-block", 2, 300 << 10},
		{"first packet", 1, 100 << 10},
		{"small file", 1, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, fsys := startCluster(t, clienttest.Config{DataNodes: 3, Replication: 3})
			ctx := ctxT(t)
			c.DataNode(0).FailWriteAfter.Store(tc.after)
			data := pattern(tc.size, 11)
			w, err := fsys.Create(ctx, "/rec")
			if err != nil {
				t.Fatal(err)
			}
			// The failure shows while the block is streaming (Flush waits
			// for the acks), so the recovery stage is STREAMING_RECOVERY.
			if _, err := w.Write(data[:tc.size/2]); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(data[tc.size/2:]); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := fsys.ReadFile(ctx, "/rec")
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes, %v", len(got), err)
			}
			locs, err := fsys.BlockLocations(ctx, "/rec", 0, int64(len(data)))
			if err != nil || len(locs) != 1 || len(locs[0].Hosts) != 2 {
				t.Fatalf("locations %v, %v", locs, err)
			}
			for _, h := range locs[0].Hosts {
				if h == c.DataNode(0).Addr() {
					t.Fatalf("failed node still in the pipeline: %v", locs[0].Hosts)
				}
			}
			stages := c.DataNode(1).Stages()
			if len(stages) != 1 || stages[0] != "PIPELINE_SETUP_STREAMING_RECOVERY" {
				t.Fatalf("stages on the new first node: %v", stages)
			}
			var calls []string
			for _, call := range c.Calls() {
				if call == "updateBlockForPipeline" || call == "updatePipeline" {
					calls = append(calls, call)
				}
			}
			if len(calls) != 2 {
				t.Fatalf("recovery calls %v", calls)
			}
		})
	}
}

func TestPipelineAllNodesFail(t *testing.T) {
	c, fsys := startCluster(t, clienttest.Config{DataNodes: 1, Replication: 1})
	ctx := ctxT(t)
	c.DataNode(0).FailWriteAfter.Store(2)
	w, err := fsys.Create(ctx, "/dead")
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Write(pattern(300<<10, 1))
	if err == nil {
		err = w.Close()
	} else {
		w.Close()
	}
	if !errors.Is(err, client.ErrPipeline) {
		t.Fatalf("err = %v, want ErrPipeline", err)
	}
	// One clear message: the failure is named once, not once per cause.
	if n := strings.Count(err.Error(), client.ErrPipeline.Error()); n != 1 {
		t.Fatalf("%q names the failure %d times", err, n)
	}
}

func TestPipelineCloseRecovery(t *testing.T) {
	c, fsys := startCluster(t, clienttest.Config{DataNodes: 2, Replication: 2})
	ctx := ctxT(t)
	c.DataNode(0).FailLastPacket.Store(true)
	data := pattern(2000, 3)
	// One packet, acknowledged, then the end-of-block packet, which fails:
	// the failure is seen while closing.
	if err := fsys.WriteFile(ctx, "/cr", data, false); err != nil {
		t.Fatal(err)
	}
	got, err := fsys.ReadFile(ctx, "/cr")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
	if st := c.DataNode(1).Stages(); len(st) != 1 || st[0] != "PIPELINE_CLOSE_RECOVERY" {
		t.Fatalf("stages %v", st)
	}
}

func TestLeaseRenewer(t *testing.T) {
	c, err := clienttest.Start(clienttest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fsys, err := client.New(client.Options{Addresses: []string{c.Addr()}, User: "alice", LeaseRenewInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	ctx := ctxT(t)
	if c.Renewals() != 0 {
		t.Fatal("renewals before any writer")
	}
	w, err := fsys.Create(ctx, "/leased")
	if err != nil {
		t.Fatal(err)
	}
	for c.Renewals() < 2 {
		if ctx.Err() != nil {
			t.Fatal("lease never renewed")
		}
		time.Sleep(time.Millisecond)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Close stopped the renewer: at most a call already on the wire
	// still arrives.
	n := c.Renewals()
	time.Sleep(20 * time.Millisecond)
	if got := c.Renewals(); got > n+1 {
		t.Fatalf("renewals went on after the last writer closed: %d -> %d", n, got)
	}
}

func TestPipelineHeartbeat(t *testing.T) {
	c, fsys := startCluster(t, clienttest.Config{Replication: 1})
	client.SetHeartbeatInterval(fsys, 2*time.Millisecond)
	ctx := ctxT(t)
	w, err := fsys.Create(ctx, "/idle")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("before ")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	for c.DataNode(0).Heartbeats.Load() < 3 {
		if ctx.Err() != nil {
			t.Fatal("no heartbeats on an idle pipeline")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := w.Write([]byte("after")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := fsys.ReadFile(ctx, "/idle")
	if err != nil || string(got) != "before after" {
		t.Fatalf("read %q, %v", got, err)
	}
}

func TestFlushPersistsOncePerBlock(t *testing.T) {
	c, fsys := startCluster(t, clienttest.Config{Replication: 1})
	ctx := ctxT(t)
	w, err := fsys.Create(ctx, "/p")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := w.Write([]byte("abc")); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	// A reader of the open file sees everything: the last block's length
	// comes from the DataNode.
	if got, err := fsys.ReadFile(ctx, "/p"); err != nil || string(got) != "abcabcabc" {
		t.Fatalf("read %q, %v", got, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var fsyncs int
	for _, call := range c.Calls() {
		if call == "fsync /p" {
			fsyncs++
		}
	}
	if fsyncs != 2 {
		t.Fatalf("%d fsync calls, want 2 (first flush, sync)", fsyncs)
	}
}

func TestCancelledContext(t *testing.T) {
	c, fsys := startCluster(t, clienttest.Config{DataNodes: 2, Replication: 2})
	ctx, cancel := context.WithCancel(context.Background())
	w, err := fsys.Create(ctx, "/cancel")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(pattern(200<<10, 1)); err != nil {
		t.Fatal(err)
	}
	cancel()
	_, err = w.Write(pattern(200<<10, 2))
	if err == nil {
		err = w.Close()
	} else {
		w.Close()
	}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, client.ErrPipeline) {
		t.Fatalf("write after cancel: %v", err)
	}
	// No pipeline recovery was attempted for a cancelled context.
	for _, call := range c.Calls() {
		if call == "updatePipeline" {
			t.Fatal("recovery after cancel")
		}
	}
	ctx2 := ctxT(t)
	if err := fsys.WriteFile(ctx2, "/r", pattern(100<<10, 3), false); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(context.Background())
	r, err := fsys.Open(rctx, "/r")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 1000)
	if _, err := r.Read(buf); err != nil {
		t.Fatal(err)
	}
	rcancel()
	if _, err := io.ReadAll(r); err == nil {
		t.Fatal("read after cancel succeeded")
	}
}

func TestPipelineReplaceDatanode(t *testing.T) {
	c, fsys := startCluster(t, clienttest.Config{DataNodes: 4, Replication: 3})
	ctx := ctxT(t)
	c.DataNode(0).FailWriteAfter.Store(2)
	data := pattern(300<<10, 5)
	w, err := fsys.Create(ctx, "/rep")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data[:1000]); err != nil {
		t.Fatal(err)
	}
	// An hflushed block gets a replacement node when one fails.
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data[1000:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	locs, err := fsys.BlockLocations(ctx, "/rep", 0, int64(len(data)))
	if err != nil || len(locs) != 1 {
		t.Fatalf("locations %v, %v", locs, err)
	}
	want := []string{c.DataNode(1).Addr(), c.DataNode(2).Addr(), c.DataNode(3).Addr()}
	if strings.Join(locs[0].Hosts, ",") != strings.Join(want, ",") {
		t.Fatalf("hosts %v, want %v", locs[0].Hosts, want)
	}
	ids := c.DataNode(3).BlockIDs()
	if len(ids) != 1 || !bytes.Equal(c.DataNode(3).Replica(ids[0]), data) {
		t.Fatal("the replacement node's replica differs")
	}
}

func TestAppendRecovery(t *testing.T) {
	c, fsys := startCluster(t, clienttest.Config{DataNodes: 2, Replication: 2})
	ctx := ctxT(t)
	if err := fsys.WriteFile(ctx, "/ar", []byte("first "), false); err != nil {
		t.Fatal(err)
	}
	c.DataNode(0).RefuseWrites.Store(true)
	w, err := fsys.Append(ctx, "/ar")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("second")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := fsys.ReadFile(ctx, "/ar")
	if err != nil || string(got) != "first second" {
		t.Fatalf("read %q, %v", got, err)
	}
	st := c.DataNode(1).Stages()
	if len(st) != 1 || st[0] != "PIPELINE_SETUP_APPEND_RECOVERY" {
		t.Fatalf("stages on the second node %v", st)
	}
}
