package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

const (
	testClientID  = "ABCDEFGHIJKLMNOP"
	clientProto   = "org.apache.hadoop.hdfs.protocol.ClientProtocol"
	clientIDHex   = "4142434445464748494a4b4c4d4e4f50"
	clientProtoHx = "6f72672e6170616368652e6861646f6f702e686466732e70726f746f636f6c2e436c69656e7450726f746f636f6c"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "\n", "").Replace(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Vectors written by the stock client (github.com/colinmarc/hdfs/v2).
var (
	goldenContext = "00000055 18 080210001805 2210" + clientIDHex +
		"3b 1209 0a07 676f6864667331 1a2e" + clientProtoHx
	goldenGetFileInfo = "0000006a 18 080210001802 2210" + clientIDHex +
		"3f 0a0b 67657446696c65496e666f 122e" + clientProtoHx + "1801" +
		"10 0a0e 2f5f746573742f666f6f2e747874"
	goldenSuccessHeader = "0801 1000 1809 3a10" + clientIDHex + "4001"
)

// getFileInfoRequest is GetFileInfoRequestProto{src(1)} encoded by hand, so
// this package does not depend on the ClientProtocol messages.
func getFileInfoRequest(src string) []byte {
	return append([]byte{0x0a, byte(len(src))}, src...)
}

func TestGoldenClientFrames(t *testing.T) {
	ctxFrame, err := AppendRequest(nil, RequestHeader(CallIDConnectionContext, []byte(testClientID), -1), nil,
		ConnectionContext("gohdfs1", "", clientProto))
	if err != nil {
		t.Fatal(err)
	}
	if want := mustHex(t, goldenContext); !bytes.Equal(ctxFrame, want) {
		t.Errorf("connection context\n got %x\nwant %x", ctxFrame, want)
	}

	call := AppendRawFrame(nil,
		mustMarshal(t, RequestHeader(1, []byte(testClientID), -1)),
		mustMarshal(t, MethodHeader("getFileInfo", clientProto)),
		getFileInfoRequest("/_test/foo.txt"))
	if want := mustHex(t, goldenGetFileInfo); !bytes.Equal(call, want) {
		t.Errorf("getFileInfo call\n got %x\nwant %x", call, want)
	}

	h := &common.RpcResponseHeaderProto{
		CallId:              proto.Uint32(1),
		Status:              common.RpcResponseHeaderProto_SUCCESS.Enum(),
		ServerIpcVersionNum: proto.Uint32(9),
		ClientId:            []byte(testClientID),
		RetryCount:          proto.Int32(-1),
	}
	if got, want := mustMarshal(t, h), mustHex(t, goldenSuccessHeader); !bytes.Equal(got, want) {
		t.Errorf("success header\n got %x\nwant %x", got, want)
	}
	sasl := mustMarshal(t, &common.RpcResponseHeaderProto{
		CallId: proto.Uint32(ResponseCallID(CallIDSASL)),
		Status: common.RpcResponseHeaderProto_SUCCESS.Enum(),
	})
	if want := mustHex(t, "08dfffffff0f 1000"); !bytes.Equal(sasl, want) {
		t.Errorf("callId -33\n got %x\nwant %x", sasl, want)
	}
}

func mustMarshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeGoldenRequests(t *testing.T) {
	for _, tc := range []struct {
		name       string
		frame      string
		callID     int32
		method     string
		bodyPrefix []byte
	}{
		{"context", goldenContext, -3, "", []byte{0x12, 0x09}},
		{"getFileInfo", goldenGetFileInfo, 1, "getFileInfo", getFileInfoRequest("/_test/foo.txt")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := mustHex(t, tc.frame)
			frame, err := ReadFrame(bufio.NewReader(bytes.NewReader(raw)), DefaultMaxDataLength, nil)
			if err != nil {
				t.Fatal(err)
			}
			req, err := DecodeRequest(frame)
			if err != nil {
				t.Fatal(err)
			}
			if got := req.Header.GetCallId(); got != tc.callID {
				t.Errorf("callId %d, want %d", got, tc.callID)
			}
			if string(req.Header.GetClientId()) != testClientID {
				t.Errorf("clientId %q", req.Header.GetClientId())
			}
			if req.Header.GetRetryCount() != -1 {
				t.Errorf("retryCount %d, want default -1", req.Header.GetRetryCount())
			}
			if got := req.Method.GetMethodName(); got != tc.method {
				t.Errorf("method %q, want %q", got, tc.method)
			}
			if (req.Method != nil) != (tc.method != "") {
				t.Errorf("method header presence %v", req.Method != nil)
			}
			if !req.HasBody || !bytes.HasPrefix(req.Body, tc.bodyPrefix) {
				t.Errorf("body %x, want prefix %x", req.Body, tc.bodyPrefix)
			}
			if tc.callID == CallIDConnectionContext {
				var cc common.IpcConnectionContextProto
				if err := proto.Unmarshal(req.Body, &cc); err != nil {
					t.Fatal(err)
				}
				if cc.GetUserInfo().GetEffectiveUser() != "gohdfs1" || cc.GetProtocol() != clientProto {
					t.Errorf("context %v", &cc)
				}
			}
		})
	}
}

func TestPreamble(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Preamble
		err  error
	}{
		{"hrpc\x09\x00\x00", Preamble{9, 0, AuthNone}, nil},
		{"hrpc\x09\x02\xdf", Preamble{9, 2, AuthSASL}, nil},
		{"hrpc\x08\x00\x00", Preamble{8, 0, 0}, ErrBadVersion},
		{"hrpc\x0a\x00\x00", Preamble{10, 0, 0}, ErrBadVersion},
		{"GET / H", Preamble{}, ErrBadMagic},
		{"hrpc\x09\x00\x51", Preamble{9, 0, 0x51}, ErrBadAuthProtocol},
		{"hrpc", Preamble{}, ErrMalformed},
	} {
		got, err := ParsePreamble([]byte(tc.in))
		if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
			t.Errorf("%q: err %v, want %v", tc.in, err, tc.err)
		}
		if got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.in, got, tc.want)
		}
	}
	if got := ClientPreamble().Append(nil); string(got) != "hrpc\x09\x00\x00" {
		t.Errorf("client preamble %x", got)
	}
}

func TestReadFrameLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		max  int
		want error
	}{
		{"too large", []byte{0x40, 0, 0, 0}, 1 << 20, ErrFrameTooLarge},
		{"max uint32", []byte{0xff, 0xff, 0xff, 0xff}, DefaultMaxDataLength, ErrFrameTooLarge},
		{"at limit truncated", []byte{0, 0, 0, 8, 1, 2}, 8, io.ErrUnexpectedEOF},
		{"short length", []byte{0, 0}, 8, io.ErrUnexpectedEOF},
		{"empty", nil, 8, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadFrame(bufio.NewReader(bytes.NewReader(tc.in)), tc.max, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			var fe *FrameTooLargeError
			if errors.As(err, &fe) && !strings.Contains(fe.Error(), "exceeds maximum data length") {
				t.Errorf("text %q", fe.Error())
			}
		})
	}
}

func TestDecodeRequestMalformed(t *testing.T) {
	hdr := mustMarshal(t, RequestHeader(5, []byte(testClientID), -1))
	mh := mustMarshal(t, MethodHeader("m", "p"))
	for _, tc := range []struct {
		name  string
		frame []byte
	}{
		{"empty", nil},
		{"header overruns", []byte{0x20, 0x08}},
		{"bad varint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"header garbage", []byte{0x02, 0xff, 0xff}},
		{"missing method header", AppendRawFrame(nil, hdr)[4:]},
		{"trailing bytes", append(AppendRawFrame(nil, hdr, mh, nil)[4:], 0x01)},
		{"method header missing required", AppendRawFrame(nil, hdr, nil)[4:]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := DecodeRequest(tc.frame); !errors.Is(err, ErrMalformed) {
				t.Fatalf("err %v, want ErrMalformed", err)
			}
		})
	}
}

func TestResponseRoundTrip(t *testing.T) {
	h := &common.RpcResponseHeaderProto{
		CallId: proto.Uint32(7),
		Status: common.RpcResponseHeaderProto_SUCCESS.Enum(),
	}
	for _, tc := range []struct {
		name    string
		body    proto.Message
		hasBody bool
	}{
		{"empty body", &common.IpcConnectionContextProto{}, true},
		{"no body", nil, false},
		{"body", &common.RpcSaslProto{State: common.RpcSaslProto_SUCCESS.Enum()}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := AppendResponse([]byte("xx"), h, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			frame, err := ReadFrame(bufio.NewReader(bytes.NewReader(b[2:])), 1<<10, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := DecodeResponse(frame)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Header.GetCallId() != 7 || resp.HasBody != tc.hasBody {
				t.Fatalf("callId %d hasBody %v", resp.Header.GetCallId(), resp.HasBody)
			}
			if tc.body != nil {
				got := tc.body.ProtoReflect().New().Interface()
				if err := proto.Unmarshal(resp.Body, got); err != nil || !proto.Equal(got, tc.body) {
					t.Fatalf("body %v err %v", got, err)
				}
			}
		})
	}
}

// Bounds of AllocBound for the wire decoders: a few times the input plus
// the reader's buffer, one FrameChunk and what the fuzzing engine itself
// allocates meanwhile. A decoder that allocated by an
// announced length would need the announced 64 MiB (fuzzMax).
const (
	allocPerByte = 32
	allocFixed   = 256 << 10
	fuzzMax      = 64 << 20
)

func FuzzDecodeRequest(f *testing.F) {
	f.Add(mustHex(f, goldenContext))
	f.Add(mustHex(f, goldenGetFileInfo))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 2, 0, 0})
	f.Add([]byte{0x03, 0xff, 0xff, 0xff, 0x18, 0x08}) // claims ~64 MiB, sends 2 bytes
	f.Fuzz(func(t *testing.T, data []byte) {
		var reqs []*Request
		testtool.AllocBound(t, len(data), allocPerByte, allocFixed, func() {
			br := bufio.NewReaderSize(bytes.NewReader(data), 512)
			for {
				frame, err := ReadFrame(br, fuzzMax, nil)
				if err != nil {
					return
				}
				if len(frame) > fuzzMax || cap(frame) > fuzzMax {
					t.Fatalf("frame of %d bytes (cap %d) over the limit", len(frame), cap(frame))
				}
				req, err := DecodeRequest(frame)
				checkGeneralDecode(t, frame, req, err)
				if err != nil {
					if !errors.Is(err, ErrMalformed) {
						t.Fatalf("untyped error %v", err)
					}
					continue
				}
				reqs = append(reqs, req)
			}
		})
		for _, req := range reqs {
			// A decoded request re-encodes to a frame that decodes the same.
			var parts [][]byte
			parts = append(parts, mustMarshal(t, req.Header))
			if req.Method != nil {
				parts = append(parts, mustMarshal(t, req.Method))
			}
			if req.HasBody {
				parts = append(parts, req.Body)
			}
			again, err := DecodeRequest(AppendRawFrame(nil, parts...)[4:])
			if err != nil {
				t.Fatalf("re-encoded request does not decode: %v", err)
			}
			if again.Header.GetCallId() != req.Header.GetCallId() || !bytes.Equal(again.Body, req.Body) {
				t.Fatalf("re-encoded request differs")
			}
		}
	})
}

// FuzzReadPreamble: any bytes give a preamble or one of the preamble
// errors, allocating nothing in proportion to what follows.
func FuzzReadPreamble(f *testing.F) {
	f.Add([]byte("hrpc\x09\x00\x00"))
	f.Add([]byte("hrpc\x0a\x00\x00"))
	f.Add([]byte("GET / HTTP/1.1\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		testtool.AllocBound(t, len(data), allocPerByte, allocFixed, func() {
			p, err := ReadPreamble(bytes.NewReader(data))
			switch {
			case err == nil:
				if p.Version != Version || (p.AuthProtocol != AuthNone && p.AuthProtocol != AuthSASL) {
					t.Fatalf("accepted %+v", p)
				}
			case errors.Is(err, ErrBadMagic), errors.Is(err, ErrBadVersion), errors.Is(err, ErrBadAuthProtocol),
				errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			default:
				t.Fatalf("untyped error %v", err)
			}
		})
	})
}

// TestTrickledFrameAllocatesWhatArrived announces a 100 MiB frame (under
// the limit) and sends 10 KiB of it: the reader may hold about what
// arrived, not what was announced.
func TestTrickledFrameAllocatesWhatArrived(t *testing.T) {
	const announced, sent = 100 << 20, 10 << 10
	in := append([]byte{0, 0, 0, 0}, make([]byte, sent)...)
	binary.BigEndian.PutUint32(in, announced)
	testtool.AllocBound(t, len(in), allocPerByte, allocFixed, func() {
		_, err := ReadFrame(bufio.NewReader(bytes.NewReader(in)), DefaultMaxDataLength, nil)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("err %v, want unexpected EOF", err)
		}
	})
}

func TestReadGrowingExact(t *testing.T) {
	for _, n := range []int{0, 1, FrameChunk - 1, FrameChunk, FrameChunk + 1, 5*FrameChunk + 3} {
		in := bytes.Repeat([]byte{7}, n+10)
		got, err := ReadGrowing(bytes.NewReader(in), n)
		if err != nil || len(got) != n || got == nil {
			t.Fatalf("n=%d: len %d err %v", n, len(got), err)
		}
	}
}

func FuzzDecodeResponse(f *testing.F) {
	f.Add(append([]byte{byte(len(mustHex(f, goldenSuccessHeader)))}, mustHex(f, goldenSuccessHeader)...))
	f.Add(mustResponseFrame(f, &common.RpcResponseHeaderProto{CallId: proto.Uint32(5), Status: common.RpcResponseHeaderProto_ERROR.Enum(),
		ExceptionClassName: proto.String("java.io.IOException"), ErrorMsg: proto.String("m"), RetryCount: proto.Int32(-1)}))
	f.Add(mustResponseFrame(f, &common.RpcResponseHeaderProto{CallId: proto.Uint32(1 << 31), Status: common.RpcResponseHeaderProto_SUCCESS.Enum(),
		ServerIpcVersionNum: proto.Uint32(9), ClientId: []byte{}, RetryCount: proto.Int32(-1 << 31)}))
	f.Fuzz(func(t *testing.T, frame []byte) {
		resp, err := DecodeResponse(frame)
		// The general decoder must agree with the fast header path.
		general := &Response{Header: new(common.RpcResponseHeaderProto)}
		gerr := DecodeResponseInto(frame, general)
		if (err == nil) != (gerr == nil) {
			t.Fatalf("DecodeResponse error %v, DecodeResponseInto error %v", err, gerr)
		}
		if err == nil && (!proto.Equal(resp.Header, general.Header) || !bytes.Equal(resp.Body, general.Body) || resp.HasBody != general.HasBody) {
			t.Fatalf("DecodeResponse %v, DecodeResponseInto %v", resp.Header, general.Header)
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if resp.HasBody && len(resp.Body) > len(frame) {
			t.Fatalf("body longer than frame")
		}
	})
}

// TestAppendSASLWrapFrame: the hand-encoded WRAP frame is the frame
// proto.Marshal makes of the same header and RpcSaslProto, for token
// lengths on both sides of the varint steps.
func TestAppendSASLWrapFrame(t *testing.T) {
	reqHdr := RequestHeader(CallIDSASL, []byte("0123456789abcdef"), -1)
	respHdr := &common.RpcResponseHeaderProto{CallId: proto.Uint32(ResponseCallID(CallIDSASL)),
		Status: common.RpcResponseHeaderProto_SUCCESS.Enum(), ServerIpcVersionNum: proto.Uint32(uint32(Version))}
	for _, n := range []int{1, 127, 128, 16383, 16384, 1 << 20} {
		tok := bytes.Repeat([]byte{0xA5}, n)
		body := &common.RpcSaslProto{State: common.RpcSaslProto_WRAP.Enum(), Token: tok}
		want, err := AppendRequest([]byte("x"), reqHdr, nil, body)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendSASLWrapFrame([]byte("x"), mustMarshal(t, reqHdr), tok); !bytes.Equal(got, want) {
			t.Fatalf("request, %d-byte token: hand encoding differs", n)
		}
		want, err = AppendResponse(nil, respHdr, body)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendSASLWrapFrame(nil, mustMarshal(t, respHdr), tok); !bytes.Equal(got, want) {
			t.Fatalf("response, %d-byte token: hand encoding differs", n)
		}
	}
}

// TestAppendSuccessMatchesMarshal: the header AppendSuccess encodes by
// hand is byte for byte the marshalled RpcResponseHeaderProto a server
// built before, for call ids, client ids and retry counts at the edges of
// their varint encodings.
func TestAppendSuccessMatchesMarshal(t *testing.T) {
	body := &common.RpcSaslProto{State: common.RpcSaslProto_SUCCESS.Enum(), Token: []byte("tok")}
	for _, callID := range []int32{0, 1, 127, 128, 1 << 30, -1, -33, 1<<31 - 1} {
		for _, clientID := range [][]byte{nil, {}, []byte(testClientID), bytes.Repeat([]byte{7}, 200)} {
			for _, retry := range []int32{-1, 0, 1, 63, 64, -65, 1<<31 - 1, -1 << 31} {
				h := &common.RpcResponseHeaderProto{
					CallId:              proto.Uint32(ResponseCallID(callID)),
					Status:              common.RpcResponseHeaderProto_SUCCESS.Enum(),
					ServerIpcVersionNum: proto.Uint32(uint32(Version)),
					ClientId:            clientID,
					RetryCount:          proto.Int32(retry),
				}
				want, err := AppendResponse([]byte("x"), h, body)
				if err != nil {
					t.Fatal(err)
				}
				got, err := AppendSuccess([]byte("x"), callID, clientID, retry, body)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("callId %d, clientId %x, retryCount %d:\n got %x\nwant %x", callID, clientID, retry, got, want)
				}
			}
		}
	}
}

// TestAppendRequestHeaderMatchesMarshal: the call header AppendRequestHeader
// encodes by hand is what marshalling RequestHeader's message gives
// (clientId is required: a Client always has one).
func TestAppendRequestHeaderMatchesMarshal(t *testing.T) {
	for _, callID := range []int32{0, 1, 63, 64, 1 << 30, -1, -3, -33, 1<<31 - 1, -1 << 31} {
		for _, clientID := range [][]byte{{}, []byte(testClientID), bytes.Repeat([]byte{7}, 200)} {
			for _, retry := range []int32{-1, -5, 0, 1, 63, 64, 1<<31 - 1} {
				want, err := AppendFrame(nil, RequestHeader(callID, clientID, retry))
				if err != nil {
					t.Fatal(err)
				}
				got := AppendRequestHeader([]byte("x"), callID, clientID, retry)
				if !bytes.Equal(got[1:], want[4:]) || got[0] != 'x' {
					t.Fatalf("callId %d, clientId %x, retryCount %d:\n got %x\nwant %x", callID, clientID, retry, got[1:], want[4:])
				}
			}
		}
	}
}

// mustResponseFrame is the content of a response frame holding h and no body.
func mustResponseFrame(t testing.TB, h *common.RpcResponseHeaderProto) []byte {
	b, err := AppendResponse(nil, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b[4:]
}

// checkGeneralDecode decodes frame's headers with proto.Unmarshal alone and
// fails unless DecodeRequest's hand decoders gave the same (req, err).
func checkGeneralDecode(t *testing.T, frame []byte, req *Request, err error) {
	t.Helper()
	var h common.RpcRequestHeaderProto
	var m common.RequestHeaderProto
	gerr := func() error {
		hb, rest, err := nextDelimited(frame, "h")
		if err != nil {
			return err
		}
		if err := proto.Unmarshal(hb, &h); err != nil {
			return err
		}
		if h.GetCallId() >= 0 {
			mb, _, err := nextDelimited(rest, "m")
			if err != nil {
				return err
			}
			return proto.Unmarshal(mb, &m)
		}
		return nil
	}()
	if gerr != nil {
		if err == nil {
			t.Fatalf("DecodeRequest took what proto.Unmarshal refuses: %v", gerr)
		}
		return
	}
	if err != nil {
		if errors.Is(err, ErrMalformed) && strings.Contains(err.Error(), "Proto") {
			t.Fatalf("DecodeRequest refused headers proto.Unmarshal takes: %v", err)
		}
		return
	}
	if !proto.Equal(req.Header, &h) {
		t.Fatalf("header %v, proto.Unmarshal %v", req.Header, &h)
	}
	if req.Method != nil && !proto.Equal(req.Method, &m) {
		t.Fatalf("method header %v, proto.Unmarshal %v", req.Method, &m)
	}
}
