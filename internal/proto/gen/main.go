// Command gen compiles the .proto files under internal/proto and writes the
// Go code for them next to each file (<name>.pb.go).
//
// It needs no protoc binary: parsing and linking are done by
// github.com/bufbuild/protocompile and code generation by the protoc-gen-go
// library, both pinned by go.mod, so the output depends only on the .proto
// sources and the module versions.
//
// Usage (from anywhere inside the module):
//
//	go run ./internal/proto/gen          # regenerate
//	go run ./internal/proto/gen -check   # exit 1 if any .pb.go is stale
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	gengo "google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

func main() {
	check := flag.Bool("check", false, "compare generated code with the files on disk instead of writing; exit 1 if they differ")
	root := flag.String("root", "", "directory holding the .proto tree (default: <module root>/internal/proto)")
	flag.Parse()

	dir := *root
	if dir == "" {
		var err error
		if dir, err = defaultRoot(); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(2)
		}
	}
	out, err := generate(context.Background(), dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(2)
	}
	if *check {
		problems, err := compare(dir, out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(2)
		}
		if len(problems) > 0 {
			for _, p := range problems {
				fmt.Fprintln(os.Stderr, p)
			}
			fmt.Fprintln(os.Stderr, "gen: generated code is out of date; run `go generate ./internal/proto`")
			os.Exit(1)
		}
		return
	}
	if err := write(dir, out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(2)
	}
}

// defaultRoot finds the module root above the working directory and returns
// its internal/proto directory.
func defaultRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "internal", "proto"), nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no go.mod found above " + wd)
		}
	}
}

// protoFiles lists the .proto files under dir as slash-separated paths
// relative to dir, sorted.
func protoFiles(dir string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".proto") {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(names)
	return names, err
}

// generate compiles every .proto file under dir and returns the generated Go
// sources keyed by slash-separated path relative to dir.
func generate(ctx context.Context, dir string) (map[string][]byte, error) {
	names, err := protoFiles(dir)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no .proto files under %s", dir)
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{dir}}),
	}
	files, err := c.Compile(ctx, names...)
	if err != nil {
		return nil, err
	}

	req := &pluginpb.CodeGeneratorRequest{
		FileToGenerate: names,
		Parameter:      proto.String("paths=source_relative"),
	}
	seen := map[string]bool{}
	var add func(f protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		imports := f.Imports()
		for i := 0; i < imports.Len(); i++ {
			add(imports.Get(i).FileDescriptor)
		}
		req.ProtoFile = append(req.ProtoFile, toProto(f))
	}
	for _, f := range files {
		add(f)
	}

	plugin, err := protogen.Options{}.New(req)
	if err != nil {
		return nil, err
	}
	plugin.SupportedFeatures = gengo.SupportedFeatures
	plugin.SupportedEditionsMinimum = gengo.SupportedEditionsMinimum
	plugin.SupportedEditionsMaximum = gengo.SupportedEditionsMaximum
	for _, f := range plugin.Files {
		if f.Generate {
			gengo.GenerateFile(plugin, f)
		}
	}
	resp := plugin.Response()
	if resp.Error != nil {
		return nil, errors.New(resp.GetError())
	}
	out := make(map[string][]byte, len(resp.File))
	for _, f := range resp.File {
		out[f.GetName()] = []byte(f.GetContent())
	}
	return out, nil
}

func toProto(f protoreflect.FileDescriptor) *descriptorpb.FileDescriptorProto {
	if lf, ok := f.(linker.File); ok {
		return protodesc.ToFileDescriptorProto(lf)
	}
	return protodesc.ToFileDescriptorProto(f)
}

// existing lists the .pb.go files under dir, relative and slash-separated.
func existing(dir string) (map[string]bool, error) {
	have := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".pb.go") {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		have[filepath.ToSlash(rel)] = true
		return nil
	})
	return have, err
}

func compare(dir string, out map[string][]byte) ([]string, error) {
	have, err := existing(dir)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, name := range sortedKeys(out) {
		disk, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, "missing: "+name)
		case err != nil:
			return nil, err
		case !bytes.Equal(disk, out[name]):
			problems = append(problems, "stale: "+name)
		}
	}
	for name := range have {
		if _, ok := out[name]; !ok {
			problems = append(problems, "orphan (no .proto): "+name)
		}
	}
	sort.Strings(problems)
	return problems, nil
}

func write(dir string, out map[string][]byte) error {
	have, err := existing(dir)
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(out) {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, out[name]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, out[name], 0o644); err != nil {
			return err
		}
	}
	for name := range have {
		if _, ok := out[name]; !ok {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
