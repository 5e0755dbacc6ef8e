package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

func TestGeneratedCodeUpToDateAndDeterministic(t *testing.T) {
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	first, err := generate(context.Background(), dir)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	second, err := generate(context.Background(), dir)
	if err != nil {
		t.Fatalf("generate again: %v", err)
	}
	if len(first) != len(second) {
		t.Fatalf("runs produced %d and %d files", len(first), len(second))
	}
	for name, b := range first {
		if !bytes.Equal(b, second[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
	problems, err := compare(dir, first)
	if err != nil {
		t.Fatalf("compare: %v", err)
	}
	for _, p := range problems {
		t.Errorf("%s (run `go generate ./internal/proto`)", p)
	}
}

func TestCompareReportsStaleAndMissing(t *testing.T) {
	dir := t.TempDir()
	problems, err := compare(dir, map[string][]byte{"x/a.pb.go": []byte("package x\n")})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || problems[0] != "missing: x/a.pb.go" {
		t.Fatalf("problems = %q", problems)
	}
	if err := write(dir, map[string][]byte{"x/a.pb.go": []byte("package x\n")}); err != nil {
		t.Fatal(err)
	}
	problems, err = compare(dir, map[string][]byte{"x/a.pb.go": []byte("package y\n")})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || problems[0] != "stale: x/a.pb.go" {
		t.Fatalf("problems = %q", problems)
	}
	problems, err = compare(dir, map[string][]byte{})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || problems[0] != "orphan (no .proto): x/a.pb.go" {
		t.Fatalf("problems = %q", problems)
	}
}
