// Package ipctest checks, against a running server, that every method of a
// protocol's .proto service is answered: with a result, with an error of the
// application, or with java.lang.UnsupportedOperationException naming the
// method, and never with RpcNoSuchMethodException or
// RpcNoSuchProtocolException. It is a test-support package; production code
// never imports it.
package ipctest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// Result counts what CheckService saw.
type Result struct {
	// Unsupported are the methods answered UnsupportedOperationException.
	Unsupported []string
	// Answered are the other methods (a result or another error).
	Answered []string
}

// CheckService calls every method of sd on the server at addr, under
// protocol (the Java name) as user, each with a request holding only its
// required fields, set to zero values, and fails t
// for a method the server does not know or an unsupported answer that does
// not name the method.
func CheckService(t testing.TB, addr, protocol, user string, sd protoreflect.ServiceDescriptor) Result {
	t.Helper()
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{addr}, User: user, Protocol: protocol, MaxRetries: -1})
	defer c.Close()
	var res Result
	methods := sd.Methods()
	if methods.Len() == 0 {
		t.Fatalf("%s: service %s lists no methods", protocol, sd.FullName())
	}
	for i := range methods.Len() {
		md := methods.Get(i)
		name := string(md.Name())
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		req := dynamicpb.NewMessage(md.Input())
		fillRequired(req, 0)
		err := c.Call(ctx, name, req, dynamicpb.NewMessage(md.Output()))
		cancel()
		switch {
		case errors.Is(err, remoteerr.ErrNoSuchMethod), errors.Is(err, remoteerr.ErrNoSuchProtocol):
			t.Errorf("%s.%s: %v", protocol, name, err)
		case errors.Is(err, remoteerr.ErrUnsupported):
			if !strings.Contains(err.Error(), name) {
				t.Errorf("%s.%s: unsupported answer does not name the method: %v", protocol, name, err)
			}
			res.Unsupported = append(res.Unsupported, name)
		case errors.Is(err, context.DeadlineExceeded):
			t.Errorf("%s.%s: no answer: %v", protocol, name, err)
		default:
			res.Answered = append(res.Answered, name)
		}
	}
	return res
}

// fillRequired sets every required field of m, at every depth, to its
// zero value, so that the request encodes; recursive types stop at depth 8.
func fillRequired(m protoreflect.Message, depth int) {
	if depth > 8 {
		return
	}
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Cardinality() != protoreflect.Required {
			continue
		}
		if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
			fillRequired(m.Mutable(fd).Message(), depth+1)
			continue
		}
		m.Set(fd, fd.Default())
	}
}
