package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/common"
)

// Constants of the Hadoop RPC v9 wire format. All of them are part of the
// format: changing one breaks every peer.
const (
	// Magic opens every connection.
	Magic = "hrpc"
	// Version is the only RPC version spoken.
	Version byte = 9
	// PreambleLen is the length of the connection preamble.
	PreambleLen = 7

	// AuthNone is the auth-protocol byte of a SIMPLE connection without SASL.
	AuthNone byte = 0x00
	// AuthSASL is the auth-protocol byte of a connection that starts with a
	// SASL exchange (-33 as a signed byte).
	AuthSASL byte = 0xDF

	// CallIDInvalid is the call id of responses that belong to no call
	// (fatal connection-level errors such as a version mismatch).
	CallIDInvalid int32 = -1
	// CallIDConnectionContext is the call id of the connection-context frame.
	CallIDConnectionContext int32 = -3
	// CallIDPing is the call id of a client ping; it carries no body and
	// gets no answer.
	CallIDPing int32 = -4
	// CallIDSASL is the call id of SASL frames, both directions.
	CallIDSASL int32 = -33

	// DefaultMaxDataLength is Hadoop's ipc.maximum.data.length default.
	DefaultMaxDataLength = 128 << 20

	// ProtocolVersion is the clientProtocolVersion every Hadoop 2/3 protocol
	// sends in its RequestHeaderProto.
	ProtocolVersion uint64 = 1
)

// Errors returned by the decoders. Every decoding failure wraps ErrMalformed,
// except a too-long frame (*FrameTooLargeError, which matches
// ErrFrameTooLarge) and the preamble errors.
var (
	// ErrBadMagic: the first four bytes of a connection were not "hrpc".
	ErrBadMagic = errors.New("wire: connection does not start with hrpc")
	// ErrBadVersion: the preamble names an RPC version other than 9.
	// The returned error is a *VersionError that matches ErrBadVersion.
	ErrBadVersion = errors.New("wire: unsupported RPC version")
	// ErrBadAuthProtocol: the preamble's auth byte is neither 0 nor 0xDF.
	ErrBadAuthProtocol = errors.New("wire: unknown auth protocol")
	// ErrFrameTooLarge: a frame's length prefix exceeds the limit.
	ErrFrameTooLarge = errors.New("wire: frame too large")
	// ErrMalformed: a frame's content cannot be decoded.
	ErrMalformed = errors.New("wire: malformed frame")
)

// VersionError reports a preamble with the right magic and a wrong version.
type VersionError struct{ Got byte }

func (e *VersionError) Error() string {
	return fmt.Sprintf("wire: unsupported RPC version %d (want %d)", e.Got, Version)
}

// Is makes errors.Is(err, ErrBadVersion) true.
func (e *VersionError) Is(target error) bool { return target == ErrBadVersion }

// FrameTooLargeError reports a frame whose length prefix exceeds the
// configured maximum. Its text is the one sent to the peer.
type FrameTooLargeError struct {
	Length uint32 // the announced length
	Max    int    // the limit in force
}

func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("RPC data length of %d exceeds maximum data length of %d", e.Length, e.Max)
}

// Is makes errors.Is(err, ErrFrameTooLarge) true.
func (e *FrameTooLargeError) Is(target error) bool { return target == ErrFrameTooLarge }

// Preamble is the 7-byte connection preamble.
type Preamble struct {
	Version      byte
	ServiceClass byte
	AuthProtocol byte
}

// ClientPreamble returns the preamble a SIMPLE client writes.
func ClientPreamble() Preamble { return Preamble{Version: Version, AuthProtocol: AuthNone} }

// Append appends the encoded preamble to dst.
func (p Preamble) Append(dst []byte) []byte {
	return append(dst, Magic[0], Magic[1], Magic[2], Magic[3], p.Version, p.ServiceClass, p.AuthProtocol)
}

// ParsePreamble decodes a preamble. It returns ErrBadMagic, a *VersionError
// (the preamble is returned too, so a server can answer with a version
// mismatch), or ErrBadAuthProtocol.
func ParsePreamble(b []byte) (Preamble, error) {
	if len(b) < PreambleLen {
		return Preamble{}, fmt.Errorf("%w: preamble of %d bytes", ErrMalformed, len(b))
	}
	if string(b[:4]) != Magic {
		return Preamble{}, ErrBadMagic
	}
	p := Preamble{Version: b[4], ServiceClass: b[5], AuthProtocol: b[6]}
	if p.Version != Version {
		return p, &VersionError{Got: p.Version}
	}
	if p.AuthProtocol != AuthNone && p.AuthProtocol != AuthSASL {
		return p, fmt.Errorf("%w: 0x%02x", ErrBadAuthProtocol, p.AuthProtocol)
	}
	return p, nil
}

// ReadPreamble reads and decodes the preamble from r.
func ReadPreamble(r io.Reader) (Preamble, error) {
	var b [PreambleLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return Preamble{}, err
	}
	return ParsePreamble(b[:])
}

// ReadFrameLength reads a frame's 4-byte length prefix and checks it
// against max before anything is allocated. A too-long frame yields a
// *FrameTooLargeError; its content is left unread.
func ReadFrameLength(r *bufio.Reader, max int) (uint32, error) {
	// Peek, not a read into a local array: that array would escape to the
	// heap through the reader, one allocation per frame.
	lb, err := r.Peek(4)
	if err != nil {
		if len(lb) > 0 && err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	n := binary.BigEndian.Uint32(lb)
	r.Discard(4)
	if uint64(n) > uint64(max) {
		return n, &FrameTooLargeError{Length: n, Max: max}
	}
	return n, nil
}

// ReadFrame reads one frame (length prefix and content) and returns its
// content. buf is reused when it has room for the announced length;
// otherwise the buffer grows as the bytes arrive, starting at
// FrameChunk bytes and doubling, so a peer that announces a long frame
// and sends little of it costs about what it sent, never the announced
// length (which is still checked against max first). An EOF in the
// middle of a frame is io.ErrUnexpectedEOF; a clean EOF before a frame is
// io.EOF.
func ReadFrame(r *bufio.Reader, max int, buf []byte) ([]byte, error) {
	n, err := ReadFrameLength(r, max)
	if err != nil {
		return nil, err
	}
	if cap(buf) >= int(n) {
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, unexpected(err)
		}
		return buf, nil
	}
	return ReadGrowing(r, int(n))
}

// FrameChunk is the first buffer size of a frame read by ReadGrowing.
const FrameChunk = 4 << 10

// ReadGrowing reads exactly n bytes from r into a new buffer that starts
// at min(n, FrameChunk) bytes and doubles as it fills, so that what it
// allocates stays within a small multiple of the bytes actually read.
// An end of stream before n bytes is io.ErrUnexpectedEOF.
func ReadGrowing(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, min(n, FrameChunk))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(n, 2*cap(buf)))
			copy(grown, buf)
			buf = grown
		}
		m, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err != nil {
			return nil, unexpected(err)
		}
	}
	return buf, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// nextDelimited splits one varint-delimited message off b.
func nextDelimited(b []byte, what string) (msg, rest []byte, err error) {
	l, n := protowire.ConsumeVarint(b)
	if n < 0 {
		return nil, nil, fmt.Errorf("%w: bad length of %s", ErrMalformed, what)
	}
	b = b[n:]
	if l > uint64(len(b)) {
		return nil, nil, fmt.Errorf("%w: %s of %d bytes overruns frame (%d left)", ErrMalformed, what, l, len(b))
	}
	return b[:l], b[l:], nil
}

// Request is a decoded request frame.
type Request struct {
	// Header is always present.
	Header *common.RpcRequestHeaderProto
	// Method is present for calls (callId >= 0) and nil for out-of-band
	// frames (connection context, SASL, ping), which have no
	// RequestHeaderProto.
	Method *common.RequestHeaderProto
	// Body is the encoding of the message that follows, without its
	// length prefix: the call's request message for calls, the
	// IpcConnectionContextProto for callId -3, the RpcSaslProto for -33.
	// It aliases the frame. HasBody tells an empty message from none.
	Body    []byte
	HasBody bool
}

// requestBox holds a Request with its headers: one allocation for the
// three.
type requestBox struct {
	req    Request
	header common.RpcRequestHeaderProto
	method common.RequestHeaderProto
	// The values the headers' fields point to when decodeHeaders decoded
	// them.
	kind                 common.RpcKindProto
	op                   common.RpcRequestHeaderProto_OperationProto
	callID, retry        int32
	methodName, protocol string
	version              uint64
}

// decodeHeader decodes the RpcRequestHeaderProto of a call as
// proto.Unmarshal would (the last of repeated fields wins, varints are
// truncated to the field's width) when it holds only rpcKind, rpcOp,
// callId, clientId and retryCount with known enum values and both required
// fields, and reports false, leaving it to proto.Unmarshal, for anything
// else (traceInfo, callerContext, stateId, bad bytes, ...).
func (b *requestBox) decodeHeader(hb []byte) bool {
	h := &b.header
	var haveCall, haveClient bool
	for len(hb) > 0 {
		num, typ, n := protowire.ConsumeTag(hb)
		if n < 0 {
			return false
		}
		hb = hb[n:]
		switch {
		case typ == protowire.VarintType && num >= 1 && num <= 5 && num != 4:
			v, n := protowire.ConsumeVarint(hb)
			if n < 0 {
				return false
			}
			hb = hb[n:]
			switch num {
			case 1:
				if v > uint64(common.RpcKindProto_RPC_PROTOCOL_BUFFER) {
					return false
				}
				b.kind, h.RpcKind = common.RpcKindProto(v), &b.kind
			case 2:
				if v > uint64(common.RpcRequestHeaderProto_RPC_CLOSE_CONNECTION) {
					return false
				}
				b.op, h.RpcOp = common.RpcRequestHeaderProto_OperationProto(v), &b.op
			case 3:
				b.callID, h.CallId, haveCall = int32(protowire.DecodeZigZag(v&math.MaxUint32)), &b.callID, true
			case 5:
				b.retry, h.RetryCount = int32(protowire.DecodeZigZag(v&math.MaxUint32)), &b.retry
			}
		case typ == protowire.BytesType && num == 4:
			v, n := protowire.ConsumeBytes(hb)
			if n < 0 {
				return false
			}
			hb = hb[n:]
			// A copy, as proto.Unmarshal makes: a retry cache may keep it
			// longer than the frame.
			h.ClientId, haveClient = append([]byte{}, v...), true
		default:
			return false
		}
	}
	return haveCall && haveClient
}

// decodeMethod decodes a RequestHeaderProto holding exactly its three
// required fields (in any order, repeated ones last-wins), and reports
// false for anything else.
func (b *requestBox) decodeMethod(mb []byte) bool {
	m := &b.method
	var have [4]bool
	for len(mb) > 0 {
		num, typ, n := protowire.ConsumeTag(mb)
		if n < 0 {
			return false
		}
		mb = mb[n:]
		switch {
		case typ == protowire.BytesType && (num == 1 || num == 2):
			v, n := protowire.ConsumeBytes(mb)
			if n < 0 {
				return false
			}
			mb = mb[n:]
			if num == 1 {
				b.methodName, m.MethodName = string(v), &b.methodName
			} else {
				b.protocol, m.DeclaringClassProtocolName = string(v), &b.protocol
			}
		case typ == protowire.VarintType && num == 3:
			v, n := protowire.ConsumeVarint(mb)
			if n < 0 {
				return false
			}
			mb = mb[n:]
			b.version, m.ClientProtocolVersion = v, &b.version
		default:
			return false
		}
		have[num] = true
	}
	return have[1] && have[2] && have[3]
}

// DecodeRequest decodes a request frame's content (without its length
// prefix). The two headers of an ordinary call are decoded by hand into one
// allocation with the Request; anything else goes to proto.Unmarshal
// (FuzzDecodeRequest checks that both give the same headers). The layout depends on the call id: calls (callId >= 0) carry
// RpcRequestHeaderProto, RequestHeaderProto and the request message;
// out-of-band frames (callId < 0) carry RpcRequestHeaderProto and at most
// one further message. Bytes after the last message are an error.
func DecodeRequest(frame []byte) (*Request, error) {
	hb, rest, err := nextDelimited(frame, "RpcRequestHeaderProto")
	if err != nil {
		return nil, err
	}
	box := new(requestBox)
	req := &box.req
	req.Header = &box.header
	if !box.decodeHeader(hb) {
		proto.Reset(req.Header)
		if err := proto.Unmarshal(hb, req.Header); err != nil {
			return nil, fmt.Errorf("%w: RpcRequestHeaderProto: %v", ErrMalformed, err)
		}
	}
	if req.Header.GetCallId() >= 0 {
		mb, r2, err := nextDelimited(rest, "RequestHeaderProto")
		if err != nil {
			return nil, err
		}
		req.Method = &box.method
		if !box.decodeMethod(mb) {
			proto.Reset(req.Method)
			if err := proto.Unmarshal(mb, req.Method); err != nil {
				return nil, fmt.Errorf("%w: RequestHeaderProto: %v", ErrMalformed, err)
			}
		}
		rest = r2
	}
	if len(rest) > 0 {
		body, r3, err := nextDelimited(rest, "request body")
		if err != nil {
			return nil, err
		}
		if len(r3) > 0 {
			return nil, fmt.Errorf("%w: %d bytes after the last message", ErrMalformed, len(r3))
		}
		req.Body, req.HasBody = body, true
	}
	return req, nil
}

// Response is a decoded response frame.
type Response struct {
	Header *common.RpcResponseHeaderProto
	// Body is the response message's encoding (aliasing the frame);
	// HasBody is false when the frame ended after the header.
	Body    []byte
	HasBody bool
}

// DecodeResponse decodes a response frame's content (without its length
// prefix): RpcResponseHeaderProto and, optionally, one message.
//
// A header that holds only what a server sends with a success (callId,
// status, serverIpcVersionNum, clientId, retryCount; no other field, a
// known status) is decoded here, into one allocation with the Response,
// instead of by proto.Unmarshal, which allocates every field; any other
// header, or one this decoder does not take, goes to proto.Unmarshal
// (FuzzDecodeResponse checks that both give the same header).
func DecodeResponse(frame []byte) (*Response, error) {
	hb, rest, err := nextDelimited(frame, "RpcResponseHeaderProto")
	if err != nil {
		return nil, err
	}
	box := new(responseBox)
	resp := &box.resp
	resp.Header = &box.header
	if !box.decodeHeader(hb) {
		box.header = common.RpcResponseHeaderProto{}
		if err := proto.Unmarshal(hb, resp.Header); err != nil {
			return nil, fmt.Errorf("%w: RpcResponseHeaderProto: %v", ErrMalformed, err)
		}
	}
	if len(rest) > 0 {
		body, r2, err := nextDelimited(rest, "response body")
		if err != nil {
			return nil, err
		}
		if len(r2) > 0 {
			return nil, fmt.Errorf("%w: %d bytes after the last message", ErrMalformed, len(r2))
		}
		resp.Body, resp.HasBody = body, true
	}
	return resp, nil
}

// responseBox holds a Response, its header and the values the header's
// fields point to.
type responseBox struct {
	resp    Response
	header  common.RpcResponseHeaderProto
	callID  uint32
	version uint32
	status  common.RpcResponseHeaderProto_RpcStatusProto
	retry   int32
}

// decodeHeader decodes a success-shaped RpcResponseHeaderProto as
// proto.Unmarshal would (the last of repeated fields wins, varints are
// truncated to the field's width) and reports false, leaving the header to
// proto.Unmarshal, for anything else: another field, an unexpected wire
// type, an unknown status, a missing required field, bad bytes. clientId
// aliases hb.
func (b *responseBox) decodeHeader(hb []byte) bool {
	h := &b.header
	var haveCall, haveStatus bool
	for len(hb) > 0 {
		num, typ, n := protowire.ConsumeTag(hb)
		if n < 0 {
			return false
		}
		hb = hb[n:]
		switch {
		case typ == protowire.VarintType && (num == 1 || num == 2 || num == 3 || num == 8):
			v, n := protowire.ConsumeVarint(hb)
			if n < 0 {
				return false
			}
			hb = hb[n:]
			switch num {
			case 1:
				b.callID, h.CallId, haveCall = uint32(v), &b.callID, true
			case 2:
				if v > uint64(common.RpcResponseHeaderProto_FATAL) {
					return false
				}
				b.status, h.Status, haveStatus = common.RpcResponseHeaderProto_RpcStatusProto(v), &b.status, true
			case 3:
				b.version, h.ServerIpcVersionNum = uint32(v), &b.version
			case 8:
				b.retry, h.RetryCount = int32(protowire.DecodeZigZag(v&math.MaxUint32)), &b.retry
			}
		case typ == protowire.BytesType && num == 7:
			v, n := protowire.ConsumeBytes(hb)
			if n < 0 {
				return false
			}
			hb = hb[n:]
			h.ClientId = v[:len(v):len(v)]
		default:
			return false
		}
	}
	return haveCall && haveStatus
}

// DecodeResponseInto is DecodeResponse into a caller-owned Response whose
// Header must be non-nil; the header is reset first.
func DecodeResponseInto(frame []byte, resp *Response) error {
	hb, rest, err := nextDelimited(frame, "RpcResponseHeaderProto")
	if err != nil {
		return err
	}
	proto.Reset(resp.Header)
	if err := proto.Unmarshal(hb, resp.Header); err != nil {
		return fmt.Errorf("%w: RpcResponseHeaderProto: %v", ErrMalformed, err)
	}
	resp.Body, resp.HasBody = nil, false
	if len(rest) > 0 {
		body, r2, err := nextDelimited(rest, "response body")
		if err != nil {
			return err
		}
		if len(r2) > 0 {
			return fmt.Errorf("%w: %d bytes after the last message", ErrMalformed, len(r2))
		}
		resp.Body, resp.HasBody = body, true
	}
	return nil
}

var marshalOpts = proto.MarshalOptions{UseCachedSize: true}

// AppendFrame appends a frame holding msgs, each varint-delimited, to dst.
// nil entries are skipped (a message that is absent, not empty). Messages
// are marshalled in field-number order, so equal messages give equal bytes.
func AppendFrame(dst []byte, msgs ...proto.Message) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	for _, m := range msgs {
		if m == nil {
			continue
		}
		size := proto.Size(m)
		dst = protowire.AppendVarint(dst, uint64(size))
		var err error
		dst, err = marshalOpts.MarshalAppend(dst, m)
		if err != nil {
			return dst[:start], fmt.Errorf("wire: marshal %T: %w", m, err)
		}
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst, nil
}

// AppendRawFrame appends a frame holding the already-encoded messages parts,
// each varint-delimited, to dst.
func AppendRawFrame(dst []byte, parts ...[]byte) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	for _, p := range parts {
		dst = protowire.AppendVarint(dst, uint64(len(p)))
		dst = append(dst, p...)
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// AppendRequest appends a call frame: header, method header and request
// body. method may be nil for out-of-band frames, whose body then is the
// connection context or SASL message.
func AppendRequest(dst []byte, h *common.RpcRequestHeaderProto, method *common.RequestHeaderProto, body proto.Message) ([]byte, error) {
	if method == nil {
		return AppendFrame(dst, h, body)
	}
	return AppendFrame(dst, h, method, body)
}

// AppendResponse appends a response frame: header and, if body is non-nil,
// the response message. Successful calls always carry a body, possibly an
// empty message; error responses carry none.
func AppendResponse(dst []byte, h *common.RpcResponseHeaderProto, body proto.Message) ([]byte, error) {
	return AppendFrame(dst, h, body)
}

// AppendSuccess appends the frame of a successful call's response: the
// RpcResponseHeaderProto {callId, status SUCCESS, serverIpcVersionNum 9,
// clientId (when not nil), retryCount}, encoded here field by field in
// field-number order, the bytes proto.Marshal gives for that header
// (TestAppendSuccessMatchesMarshal), and body. A server sends one per call;
// building and marshalling the header message cost five allocations.
func AppendSuccess(dst []byte, callID int32, clientID []byte, retryCount int32, body proto.Message) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	hlen := 2 + protowire.SizeVarint(uint64(uint32(callID))) + 2 + 2 +
		protowire.SizeVarint(protowire.EncodeZigZag(int64(retryCount)))
	if clientID != nil {
		hlen += 1 + protowire.SizeBytes(len(clientID))
	}
	dst = protowire.AppendVarint(dst, uint64(hlen))
	dst = protowire.AppendTag(dst, 1, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(uint32(callID)))
	dst = protowire.AppendTag(dst, 2, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(common.RpcResponseHeaderProto_SUCCESS))
	dst = protowire.AppendTag(dst, 3, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(Version))
	if clientID != nil {
		dst = protowire.AppendTag(dst, 7, protowire.BytesType)
		dst = protowire.AppendBytes(dst, clientID)
	}
	dst = protowire.AppendTag(dst, 8, protowire.VarintType)
	dst = protowire.AppendVarint(dst, protowire.EncodeZigZag(int64(retryCount)))
	size := proto.Size(body)
	dst = protowire.AppendVarint(dst, uint64(size))
	dst, err := marshalOpts.MarshalAppend(dst, body)
	if err != nil {
		return dst[:start], fmt.Errorf("wire: marshal %T: %w", body, err)
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst, nil
}

// AppendRequestHeader appends, varint-delimited, the RpcRequestHeaderProto
// RequestHeader(callID, clientID, retryCount) builds, encoded here field by
// field in field-number order: the bytes proto.Marshal gives for it
// (TestAppendRequestHeaderMatchesMarshal). A client sends one per call;
// building and marshalling the message cost five allocations.
func AppendRequestHeader(dst []byte, callID int32, clientID []byte, retryCount int32) []byte {
	n := 2 + 2 + 1 + protowire.SizeVarint(protowire.EncodeZigZag(int64(callID)))
	if clientID != nil {
		n += 1 + protowire.SizeBytes(len(clientID))
	}
	if retryCount >= 0 {
		n += 1 + protowire.SizeVarint(protowire.EncodeZigZag(int64(retryCount)))
	}
	dst = protowire.AppendVarint(dst, uint64(n))
	dst = protowire.AppendTag(dst, 1, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(common.RpcKindProto_RPC_PROTOCOL_BUFFER))
	dst = protowire.AppendTag(dst, 2, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(common.RpcRequestHeaderProto_RPC_FINAL_PACKET))
	dst = protowire.AppendTag(dst, 3, protowire.VarintType)
	dst = protowire.AppendVarint(dst, protowire.EncodeZigZag(int64(callID)))
	if clientID != nil {
		dst = protowire.AppendTag(dst, 4, protowire.BytesType)
		dst = protowire.AppendBytes(dst, clientID)
	}
	if retryCount >= 0 {
		dst = protowire.AppendTag(dst, 5, protowire.VarintType)
		dst = protowire.AppendVarint(dst, protowire.EncodeZigZag(int64(retryCount)))
	}
	return dst
}

// RequestHeader builds the RpcRequestHeaderProto of a protobuf call.
// retryCount < 0 leaves the field unset (the peer reads the default -1),
// which is what a first attempt sends.
func RequestHeader(callID int32, clientID []byte, retryCount int32) *common.RpcRequestHeaderProto {
	h := &common.RpcRequestHeaderProto{
		RpcKind:  common.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
		RpcOp:    common.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
		CallId:   proto.Int32(callID),
		ClientId: clientID,
	}
	if retryCount >= 0 {
		h.RetryCount = proto.Int32(retryCount)
	}
	return h
}

// MethodHeader builds the RequestHeaderProto naming a method of protocol.
func MethodHeader(method, protocol string) *common.RequestHeaderProto {
	return &common.RequestHeaderProto{
		MethodName:                 proto.String(method),
		DeclaringClassProtocolName: proto.String(protocol),
		ClientProtocolVersion:      proto.Uint64(ProtocolVersion),
	}
}

// ConnectionContext builds the IpcConnectionContextProto a client sends
// after the preamble. realUser may be empty.
func ConnectionContext(user, realUser, protocol string) *common.IpcConnectionContextProto {
	ui := &common.UserInformationProto{EffectiveUser: proto.String(user)}
	if realUser != "" {
		ui.RealUser = proto.String(realUser)
	}
	return &common.IpcConnectionContextProto{UserInfo: ui, Protocol: proto.String(protocol)}
}

// ResponseCallID converts a call id to the uint32 carried by
// RpcResponseHeaderProto (two's complement, so -33 becomes 4294967263).
func ResponseCallID(callID int32) uint32 { return uint32(callID) }

// AppendDelimited appends msg, an encoded message, with its varint length.
func AppendDelimited(dst, msg []byte) []byte {
	dst = protowire.AppendVarint(dst, uint64(len(msg)))
	return append(dst, msg...)
}

// AppendSASLWrapFrame appends a frame whose header is hdr, an encoded
// RpcRequestHeaderProto or RpcResponseHeaderProto, and whose body is
// RpcSaslProto{state: WRAP, token: tok}: the traffic of a SASL security
// layer (integrity, privacy). The body is encoded by hand, byte for byte
// as proto.Marshal encodes it (fields in number order: state 2, token 3),
// so that a connection encodes its header once and no message is built
// per frame.
func AppendSASLWrapFrame(dst, hdr, tok []byte) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = AppendDelimited(dst, hdr)
	n := protowire.SizeTag(2) + protowire.SizeVarint(uint64(common.RpcSaslProto_WRAP)) +
		protowire.SizeTag(3) + protowire.SizeBytes(len(tok))
	dst = protowire.AppendVarint(dst, uint64(n))
	dst = protowire.AppendTag(dst, 2, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(common.RpcSaslProto_WRAP))
	dst = protowire.AppendTag(dst, 3, protowire.BytesType)
	dst = protowire.AppendBytes(dst, tok)
	FixFrameLength(dst[start:])
	return dst
}

// FixFrameLength rewrites the length prefix of the frame that starts at
// frame[0] to cover the rest of frame.
func FixFrameLength(frame []byte) {
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
}
