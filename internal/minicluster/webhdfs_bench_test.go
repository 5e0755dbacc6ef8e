package minicluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/webhdfs"
)

// BenchmarkWebHDFSvsRPC writes and reads the same 64 MiB file over RPC (the
// Go client: NameNode RPC plus the DataNode pipeline and block readers) and
// over WebHDFS (net/http: the NameNode's 307, then the DataNode's
// /webhdfs/v1, which uses that same client), on one cluster of three
// DataNodes with replication 3. MB/s is the figure to compare.
//
//	go test -run '^$' -bench WebHDFSvsRPC -benchtime 5x ./internal/minicluster/
func BenchmarkWebHDFSvsRPC(b *testing.B) {
	const size = 64 << 20
	c, err := Start(context.Background(), Options{Dir: b.TempDir(), DataNodes: 3,
		Conf: []conf.KeyValue{{Key: "dfs.replication", Value: "3"}}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.WaitActive(ctx); err != nil {
		b.Fatal(err)
	}
	data := make([]byte, size)
	r := rand.NewChaCha8([32]byte{7})
	r.Read(data)
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNode().RPCAddr().String()}})
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Close()
	base := "http://" + c.NameNode().HTTPAddr().String() + webhdfs.Prefix
	user := "user.name=" + fsys.User()
	hc := &http.Client{Timeout: 5 * time.Minute}

	b.Run("rpc-write", func(b *testing.B) {
		b.SetBytes(size)
		for i := range b.N {
			if err := fsys.WriteFile(ctx, fmt.Sprintf("/rpc%d", i), data, true); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rpc-read", func(b *testing.B) {
		b.SetBytes(size)
		for range b.N {
			rd, err := fsys.Open(ctx, "/rpc0")
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, rd)
			rd.Close()
			if err != nil || n != size {
				b.Fatalf("read %d bytes: %v", n, err)
			}
		}
	})
	b.Run("webhdfs-write", func(b *testing.B) {
		b.SetBytes(size)
		for i := range b.N {
			req, _ := http.NewRequest("PUT", fmt.Sprintf("%s/web%d?op=CREATE&overwrite=true&%s", base, i, user), bytes.NewReader(data))
			// net/http follows the 307 and sends the body again (GetBody).
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				b.Fatalf("CREATE: %s", resp.Status)
			}
		}
	})
	b.Run("webhdfs-read", func(b *testing.B) {
		b.SetBytes(size)
		for range b.N {
			resp, err := hc.Get(base + "/web0?op=OPEN&buffersize=1048576&" + user)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || n != size || resp.StatusCode != http.StatusOK {
				b.Fatalf("OPEN: %s, %d bytes: %v", resp.Status, n, err)
			}
		}
	})
}
