package eventlog

import (
	"encoding/json"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// parsePubAck reads a JetStream publish acknowledgement as the JetStream client
// reads it: a stored message's {"stream":..,"seq":..} (with "duplicate" and
// "domain" when set), or the API error of a refused one. An acknowledgement of
// the stored shape is read by hand, without allocating (the stream's name is one
// of the log's); anything else is read by encoding/json.
func parsePubAck(data []byte) (Ack, error) {
	if ack, ok := scanPubAck(data); ok {
		return ack, nil
	}
	return decodePubAck(data)
}

// pubAckResponse is the JetStream client's shape of an acknowledgement.
type pubAckResponse struct {
	Type  string              `json:"type"`
	Error *jetstream.APIError `json:"error,omitempty"`
	*jetstream.PubAck
}

// decodePubAck is the JetStream client's reading of an acknowledgement.
func decodePubAck(data []byte) (Ack, error) {
	var pa pubAckResponse
	if err := json.Unmarshal(data, &pa); err != nil {
		return Ack{}, jetstream.ErrInvalidJSAck
	}
	if pa.Error != nil {
		return Ack{}, pa.Error
	}
	if pa.PubAck == nil || pa.PubAck.Stream == "" {
		return Ack{}, jetstream.ErrInvalidJSAck
	}
	return *pa.PubAck, nil
}

// scanPubAck reads data when it is a JSON object of the keys "stream" (a
// non-empty string of printable ASCII without escapes), "seq" (an unsigned
// integer), "duplicate" (true or false) and "domain" (as "stream", or empty), in
// any order: ok is false for anything else, which decodePubAck is to read.
func scanPubAck(data []byte) (ack Ack, ok bool) {
	s := pubAckScanner{b: data}
	if !s.byte('{') {
		return Ack{}, false
	}
	if s.byte('}') {
		return Ack{}, false // no stream
	}
	for {
		key, ok := s.plainString()
		if !ok || !s.byte(':') {
			return Ack{}, false
		}
		switch string(key) { // compared without allocating
		case "stream":
			v, ok := s.plainString()
			if !ok {
				return Ack{}, false
			}
			ack.Stream = streamName(v)
		case "domain":
			v, ok := s.plainString()
			if !ok {
				return Ack{}, false
			}
			ack.Domain = string(v)
		case "seq":
			n, ok := s.uint()
			if !ok {
				return Ack{}, false
			}
			ack.Sequence = n
		case "duplicate":
			v, ok := s.bool()
			if !ok {
				return Ack{}, false
			}
			ack.Duplicate = v
		default:
			return Ack{}, false
		}
		if s.byte(',') {
			continue
		}
		if !s.byte('}') {
			return Ack{}, false
		}
		break
	}
	s.space()
	if s.i != len(s.b) || ack.Stream == "" {
		return Ack{}, false
	}
	return ack, true
}

// streamName is v as a string: one of the log's stream names without
// allocating, another copied.
func streamName(v []byte) string {
	for _, name := range wire.Streams {
		if string(v) == name {
			return name
		}
	}
	return string(v)
}

// pubAckScanner walks an acknowledgement's bytes.
type pubAckScanner struct {
	b []byte
	i int
}

// space skips JSON's white space.
func (s *pubAckScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte consumes c, after white space, if it is next.
func (s *pubAckScanner) byte(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// plainString consumes a string of printable ASCII without escapes and returns
// its content (a slice of the input).
func (s *pubAckScanner) plainString() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// uint consumes an unsigned decimal integer as JSON writes one (no sign, no
// leading zero, no fraction or exponent) that fits in 64 bits.
func (s *pubAckScanner) uint() (uint64, bool) {
	s.space()
	start := s.i
	var n uint64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		d := uint64(s.b[s.i] - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
		s.i++
	}
	digits := s.i - start
	if digits == 0 || (digits > 1 && s.b[start] == '0') {
		return 0, false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	return n, true
}

// bool consumes true or false.
func (s *pubAckScanner) bool() (bool, bool) {
	s.space()
	rest := s.b[s.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		s.i += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		s.i += 5
		return false, true
	}
	return false, false
}
