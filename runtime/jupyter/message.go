package jupyter

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// ProtocolVersion is the messaging protocol this kernel speaks.
const ProtocolVersion = "5.3"

// delimiter separates the routing identities from the signed frames.
var delimiter = []byte("<IDS|MSG>")

// Header is a message header (and, as parent_header, the header of the
// request a message answers).
type Header struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// Message is one protocol message. Content and Metadata are kept as raw
// JSON on the way in and marshalled from any value on the way out.
type Message struct {
	Identities [][]byte // ROUTER identities (a reply goes back through them), or the iopub topic
	Header     Header
	Parent     json.RawMessage // the parent header as received: {} when none
	Metadata   json.RawMessage
	Content    json.RawMessage
	Buffers    [][]byte

	rawHeader json.RawMessage // the header as received, the parent header of its replies
}

// errSignature is a message whose HMAC does not match: it is dropped.
var errSignature = errors.New("message signature does not match")

// signer signs and checks messages with the connection's key.
type signer struct{ key []byte }

func (s signer) sign(parts ...[]byte) []byte {
	if len(s.key) == 0 {
		return nil
	}
	mac := hmac.New(sha256.New, s.key)
	for _, p := range parts {
		mac.Write(p)
	}
	sum := mac.Sum(nil)
	out := make([]byte, hex.EncodedLen(len(sum)))
	hex.Encode(out, sum)
	return out
}

// decode parses the frames of a received message and checks its signature
// in constant time.
func (s signer) decode(frames [][]byte) (*Message, error) {
	i := 0
	for i < len(frames) && !bytes.Equal(frames[i], delimiter) {
		i++
	}
	if i == len(frames) || len(frames) < i+6 {
		return nil, fmt.Errorf("malformed message: %d frames, delimiter at %d", len(frames), i)
	}
	sig, parts := frames[i+1], frames[i+2:i+6]
	if len(s.key) > 0 && !hmac.Equal(sig, s.sign(parts...)) {
		return nil, errSignature
	}
	m := &Message{Identities: frames[:i], Parent: parts[1], Metadata: parts[2], Content: parts[3], Buffers: frames[i+6:], rawHeader: parts[0]}
	if err := json.Unmarshal(parts[0], &m.Header); err != nil {
		return nil, fmt.Errorf("malformed header: %w", err)
	}
	return m, nil
}

// encode builds the frames of a message to send.
func (s signer) encode(idents [][]byte, h Header, parent json.RawMessage, metadata, content any) ([][]byte, error) {
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if len(parent) == 0 {
		parent = json.RawMessage("{}")
	}
	if metadata == nil {
		metadata = struct{}{}
	}
	mb, err := json.Marshal(metadata)
	if err != nil {
		return nil, err
	}
	cb, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	frames := append([][]byte{}, idents...)
	frames = append(frames, delimiter, s.sign(hb, parent, mb, cb), hb, parent, mb, cb)
	return frames, nil
}

// newHeader is the header of a message this kernel sends.
func newHeader(session, msgType string) Header {
	return Header{
		MsgID:    uuid.NewString(),
		Session:  session,
		Username: "kernel",
		Date:     time.Now().UTC().Format("2006-01-02T15:04:05.000000Z07:00"),
		MsgType:  msgType,
		Version:  ProtocolVersion,
	}
}

// parentOf returns a request's header, as received, as a reply's parent
// header: fields this kernel does not know travel back unchanged.
func parentOf(m *Message) json.RawMessage {
	if len(m.rawHeader) > 0 {
		return m.rawHeader
	}
	b, err := json.Marshal(m.Header)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}
