package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// errStalled: a download made no progress for dfs.qjournal.http.read.timeout.ms.
var errStalled = errors.New("journalnode: download stalled")

// fetch downloads a segment from another JournalNode's /getJournal into
// path (created, written, fsynced). Only http:// URLs are followed.
func (jn *JournalNode) fetch(ctx context.Context, rawURL, path string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("journalnode: refusing to fetch from %q: only http:// URLs of a JournalNode are followed", clip(rawURL))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	resp, err := jn.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("journalnode: GET %s: %s: %s", u.Redacted(), resp.Status, clip(string(body)))
	}
	f, err := jn.deps.FS.Create(path)
	if err != nil {
		return err
	}
	stall := jn.cfg.HTTPReadTimeout
	timer := jn.deps.Clock.AfterFunc(stall, func() { cancel(errStalled) })
	defer timer.Stop()
	buf := make([]byte, 64<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			timer.Reset(stall)
			if _, werr := f.Write(buf[:n]); werr != nil {
				f.Close()
				return werr
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			f.Close()
			if c := context.Cause(ctx); c != nil {
				return c
			}
			return rerr
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
